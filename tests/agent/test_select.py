# SPDX-License-Identifier: Apache-2.0
"""One selection rule: the same fixture node (eks-x86) and the same config through every
place that says which NICs and cores spinlane takes - `preflight --json` (the nic-binding
verdict's ready NICs), `inventory --json` (its resources), `prepare --json` (the NICs the
prep-nic-binding step acted on) and the daemon `run` (what the device plugins list as Healthy
to a kubelet stand-in speaking the real device plugin API, Python grpcio) - and the
answers compared with each other and with what the config means.

usage: test_select.py --agent PATH --proto-dir DIR
Exit 0 all agree, 1 a check failed. Without python3 grpcio/grpc_tools only the daemon's
answer (it needs the kubelet stand-in) is skipped, decided before anything runs and said
in a SKIP line; the other three are still compared."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "deviceplugin"))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from fixture_node import EKS_ADDRESSES as ADDR, EKS_CORES as ALL_CORES, EKS_NIC6 as NIC6, EKS_NIC7 as NIC7, \
    make_fixture  # noqa: E402
from testcheck import check, failures  # noqa: E402
from agentcli import T, copy_root, lines_json, run, stop_daemon  # noqa: E402

try:  # only the daemon's part needs gRPC (the kubelet stand-in)
    import grpc  # noqa: F401
    import grpc_tools  # noqa: F401
    from kubelet_standin import Kubelet, Plugin, Watcher, load_api  # noqa: E402
    NO_GRPC = None
except ImportError as e:
    NO_GRPC = "python3 grpcio/grpc_tools missing (%s); run with /usr/bin/python3" % e

# (config, NICs taken, cores taken)
CASES = [
    ({}, [NIC6, NIC7], ALL_CORES),
    ({"nics": {"max": 1}}, [NIC6], ALL_CORES),
    ({"cores": {"cpus": "2-3,10-11"}}, [NIC6, NIC7], ["p0c2", "p0c3"]),
    ({"nics": {"pci": [NIC7]}, "cores": {"cpus": "4-7,12-15"}}, [NIC7], ["p0c4", "p0c5", "p0c6", "p0c7"]),
    ({"nics": {"kinds": ["mana"]}}, [], ALL_CORES),
]


def rm_tree(path):
    shutil.rmtree(path, ignore_errors=True)


def verdict(objs, check_id):
    for o in objs:
        if o.get("check") == check_id:
            return o
    return None


def from_inventory(agent, root, cfg):
    r = run([agent, "inventory", "--json", "--root", root, "--config", cfg])
    check(r.returncode == 0, "inventory exit %d: %s" % (r.returncode, r.stderr))
    res = json.loads(r.stdout)["resources"]
    return (sorted(d["id"] for d in res["spinlane.io/dpdk-nic"]),
            sorted(d["id"] for d in res["spinlane.io/isolated-core"]))


def from_preflight(agent, root, cfg):
    r = run([agent, "preflight", "--json", "--root", root, "--config", cfg])
    check(r.returncode in (0, 1), "preflight exit %d: %s" % (r.returncode, r.stderr))
    v = verdict(lines_json(r.stdout), "nic-binding")
    if not check(v is not None, "preflight: a nic-binding verdict"):
        return []
    return sorted(n["pci"] for n in v["evidence"]["ready"])


def from_prepare(agent, root, cfg, tmp):
    copy = copy_root(root, tmp, "prep")
    r = run([agent, "prepare", "--json", "--root", copy, "--config", cfg])
    check(r.returncode in (0, 1), "prepare exit %d: %s" % (r.returncode, r.stderr))
    v = verdict(lines_json(r.stdout), "prep-nic-binding")
    rm_tree(copy)
    if v is None:  # no NIC selected: no binding step
        return []
    return sorted(n["pci"] for n in (v.get("evidence") or {}).get("nics", []))


def from_daemon(agent, api, root, cfg, tmp):
    copy = copy_root(root, tmp, "run")
    kubelet = Kubelet(api, copy)
    kubelet.start(wipe=True)
    log = open(os.path.join(tmp, "agent.log"), "w")
    env = dict(os.environ, SPINLANE_RESCAN_MS="600000", SPINLANE_IMDS_URL="http://127.0.0.1:9/")
    p = subprocess.Popen([agent, "run", "--root", copy, "--config", cfg], stdout=log, stderr=subprocess.STDOUT,
                         env=env)
    got = [], []
    try:
        kubelet.wait_registrations(2, T)
        for i, sock in enumerate(("spinlane-dpdk-nic.sock", "spinlane-isolated-core.sock")):
            pl = Plugin(api, copy, sock)
            w = Watcher(pl)
            first = w.wait(lambda d: True, T)
            w.cancel()
            pl.close()
            if check(first is not None, "daemon: a ListAndWatch list on %s" % sock):
                got[i].extend(sorted(k for k, (h, _) in first[1].items() if h == "Healthy"))
    finally:
        rc = stop_daemon(p, log)
        kubelet.stop()
        check(rc == 0, "daemon exit %s" % rc)
        if failures:
            with open(os.path.join(tmp, "agent.log")) as f:
                print("---- agent log ----\n" + "".join(f.readlines()[-30:]))
        rm_tree(copy)
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    args = ap.parse_args()
    if NO_GRPC:
        print("SKIP: the daemon's answer (run against the kubelet stand-in): " + NO_GRPC, flush=True)
        api, gen = None, None
    else:
        api, gen = load_api(args.proto_dir)
    tmp = tempfile.mkdtemp(prefix="sl-select-")
    try:
        root = make_fixture(tmp, "eks-x86")
        cfg = os.path.join(tmp, "config.json")
        for conf, nics, cores in CASES:
            with open(cfg, "w") as f:
                json.dump(dict(conf, addresses=ADDR), f)
            name = json.dumps(conf)
            inv_nics, inv_cores = from_inventory(args.agent, root, cfg)
            pre_nics = from_preflight(args.agent, root, cfg)
            prep_nics = from_prepare(args.agent, root, cfg, tmp)
            if api is not None:
                run_nics, run_cores = from_daemon(args.agent, api, root, cfg, tmp)
                print("%s: NICs inventory %s preflight %s prepare %s daemon %s; cores inventory %s daemon %s" %
                      (name, inv_nics, pre_nics, prep_nics, run_nics, inv_cores, run_cores), flush=True)
            else:
                print("%s: NICs inventory %s preflight %s prepare %s; cores inventory %s (daemon skipped)" %
                      (name, inv_nics, pre_nics, prep_nics, inv_cores), flush=True)
            check(inv_nics == nics, "%s: inventory --json resources: NICs %s, want %s" % (name, inv_nics, nics))
            check(pre_nics == nics, "%s: preflight nic-binding: NICs %s, want %s" % (name, pre_nics, nics))
            check(prep_nics == nics, "%s: prepare: NICs %s, want %s" % (name, prep_nics, nics))
            check(inv_cores == cores, "%s: inventory --json resources: cores %s, want %s" % (name, inv_cores, cores))
            if api is not None:
                check(run_nics == nics, "%s: daemon advertises NICs %s, want %s" % (name, run_nics, nics))
                check(run_cores == cores, "%s: daemon advertises cores %s, want %s" % (name, run_cores, cores))
    finally:
        rm_tree(tmp)
        if gen:
            rm_tree(gen)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

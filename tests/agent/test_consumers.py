# SPDX-License-Identifier: Apache-2.0
"""One device value: the same fixture node (eks-x86, tests/fixtures/make-node.py) and config
pushed through every consumer of the device map, and what each shows compared - the same
device IDs, the same health/state, the same attributes:

- `explain --json` (and its lines): every device's state and reason;
- `inventory --json`: its `resources` (the listed devices and their attributes);
- `preflight --json`: the node checks' view (nic-binding's ready NICs, nic-address's NICs
  and their addresses: the addresses consumer);
- the daemon `run` against the kubelet stand-in (Python grpcio, the real device plugin
  API): ListAndWatch (IDs, health, NUMA) and Allocate of each Healthy device (the env and
  device nodes a pod receives), and the map's lines the daemon logs;
- the daemon with --dra-resources nic,core against the TLS API-server stand-in
  (tests/agent/kube/fake_apiserver.py): the ResourceSlice's devices (names, attributes).

The config makes every state show: NIC 06 Healthy (an address with a gateway), NIC 07
listed Unhealthy (no address), the primary and MANA-less rest not advertised; two cores
Healthy, four isolated cores outside cores.cpus not advertised.

usage: test_consumers.py --agent PATH --proto-dir DIR
Exit 0 all agree, 1 a check failed. Without python3 grpcio/grpc_tools the daemon's part is
skipped, without openssl or python3-prometheus-client the ResourceSlice's (decided before
anything runs, said in a SKIP line); the others are compared."""
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
from fixture_node import EKS_NIC6 as NIC6, EKS_NIC7 as NIC7, make_fixture  # noqa: E402
from testcheck import check, failures  # noqa: E402
from agentcli import T, copy_root, lines_json, run, stop_daemon  # noqa: E402

try:  # only the daemon's part needs gRPC (the kubelet stand-in)
    import grpc  # noqa: F401
    import grpc_tools  # noqa: F401
    from kubelet_standin import Kubelet, Plugin, Watcher, load_api  # noqa: E402
    NO_GRPC = None
except ImportError as e:
    NO_GRPC = "python3 grpcio/grpc_tools missing (%s); run with /usr/bin/python3" % e

try:  # the ResourceSlice's part: test_cluster's API-server stand-in (it exits 77 without its needs)
    sys.path.insert(0, os.path.join(HERE, "daemon"))
    import test_cluster as tc  # noqa: E402
    NO_API = None
except SystemExit:
    NO_API = "the API-server stand-in's needs (openssl, python3-prometheus-client) are missing"

NICRES, CORERES = "spinlane.io/dpdk-nic", "spinlane.io/isolated-core"
CONFIG = {"addresses": {"static": [{"pci": NIC6, "ipv4": "10.0.6.10/24", "gateway": "10.0.6.1"}]},
          "cores": {"cpus": "2-3,10-11"}}


def from_explain(agent, root, cfg):
    """{(resource, id): (state, reason)} and the human lines."""
    r = run([agent, "explain", "--json", "--root", root, "--config", cfg])
    check(r.returncode == 0, "explain --json exit %d: %s" % (r.returncode, r.stderr))
    got = {(o["resource"], o["id"]): (o["state"], o["reason"]) for o in lines_json(r.stdout)}
    h = run([agent, "explain", "--root", root, "--config", cfg])
    check(h.returncode == 0, "explain exit %d: %s" % (h.returncode, h.stderr))
    return got, [line for line in h.stdout.splitlines() if line.strip()]


def from_inventory(agent, root, cfg):
    """{(resource, id): attributes} of the listed devices."""
    r = run([agent, "inventory", "--json", "--root", root, "--config", cfg])
    check(r.returncode == 0, "inventory exit %d: %s" % (r.returncode, r.stderr))
    res = json.loads(r.stdout)["resources"]
    got = {}
    for d in res[NICRES]:
        got[(NICRES, d["id"])] = {"pci": d["pci"], "numa": d["numa_node"], "kind": d["kind"], "driver": d["driver"],
                                  "mac": d["mac"] or "", "ipv4": d["ipv4"] or "", "gateway": d["gateway"] or "",
                                  "devices": [x["container_path"] for x in d["devices"]],
                                  "host_devices": [x["host_path"] for x in d["devices"]]}
    for d in res[CORERES]:
        got[(CORERES, d["id"])] = {"numa": d["numa_node"], "cpus": sorted(d["cpus"])}
    return got


def from_preflight(agent, root, cfg):
    """The checks' and the addresses' view: {pci: (address state, ipv4, gateway, mac)} of
    the NICs nic-address judges, and nic-binding's ready NICs."""
    r = run([agent, "preflight", "--json", "--root", root, "--config", cfg])
    check(r.returncode in (0, 1), "preflight exit %d: %s" % (r.returncode, r.stderr))
    objs = lines_json(r.stdout)
    addr = next((o for o in objs if o.get("check") == "nic-address"), None)
    bind = next((o for o in objs if o.get("check") == "nic-binding"), None)
    if not check(addr is not None and bind is not None, "preflight: nic-address and nic-binding verdicts"):
        return {}, []
    nics = {n["pci"]: (n["state"], n.get("ipv4") or "", n.get("gateway") or "", n.get("mac") or "")
            for n in addr["evidence"]["nics"]}
    return nics, sorted(n["pci"] for n in bind["evidence"]["ready"])


def cpu_list(text):
    """The kernel's list syntax ("2-3,10") as sorted ints."""
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return sorted(out)


def env_of(resp):
    c = resp.container_responses[0]
    return dict(c.envs), [(d.host_path, d.container_path) for d in c.devices]


def from_daemon(agent, api, root, cfg, tmp, healthy):
    """{(resource, id): (health, numa, allocate env, device nodes)} and the daemon's log."""
    copy = copy_root(root, tmp, "run")
    kubelet = Kubelet(api, copy)
    kubelet.start(wipe=True)
    logpath = os.path.join(tmp, "agent.log")
    log = open(logpath, "w")
    env = dict(os.environ, SPINLANE_RESCAN_MS="600000", SPINLANE_IMDS_URL="http://127.0.0.1:9/")
    p = subprocess.Popen([agent, "run", "--root", copy, "--config", cfg], stdout=log, stderr=subprocess.STDOUT,
                         env=env)
    got = {}
    try:
        kubelet.wait_registrations(2, T)
        for res, sock in ((NICRES, "spinlane-dpdk-nic.sock"), (CORERES, "spinlane-isolated-core.sock")):
            pl = Plugin(api, copy, sock)
            w = Watcher(pl)
            first = w.wait(lambda d: True, T)
            w.cancel()
            if check(first is not None, "daemon: a ListAndWatch list on %s" % sock):
                for dev, (health, numa) in first[1].items():
                    e, nodes = env_of(pl.alloc([dev])) if (res, dev) in healthy else ({}, [])
                    got[(res, dev)] = (health, numa, e, nodes)
            pl.close()
    finally:
        rc = stop_daemon(p, log)
        kubelet.stop()
        check(rc == 0, "daemon exit %s" % rc)
        shutil.rmtree(copy, ignore_errors=True)
    with open(logpath) as f:
        return got, f.read()


def from_slices(agent, root, cfg, tmp):
    """{device name: attributes} of the node's ResourceSlice, as the daemon publishes it
    with --dra-resources nic,core."""
    copy = copy_root(root, tmp, "dra")
    api = tc.ApiServer()
    env = dict(os.environ, NODE_NAME="node-a", SPINLANE_KUBE_RESYNC_MS="1000", SPINLANE_RESCAN_MS="600000",
               SPINLANE_IMDS_URL="http://127.0.0.1:9/")
    for k in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        env.pop(k, None)
    log = open(os.path.join(tmp, "dra.log"), "w")
    p = subprocess.Popen([agent, "run", "--root", copy, "--config", cfg, "--kubeconfig", tc.write_kubeconfig(tmp, api),
                          "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
                          "--dra-resources", "nic,core"], stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        sl = tc.wait_for(lambda: api.json("slices").get("node-a-spinlane.io"), T)
    finally:
        rc = stop_daemon(p, log)
        api.stop()
        check(rc == 0, "daemon (DRA) exit %s" % rc)
        shutil.rmtree(copy, ignore_errors=True)
    if not check(sl is not None, "the daemon published its ResourceSlice"):
        return {}
    return {d["name"]: d["attributes"] for d in sl["spec"]["devices"]}


def dra_name(key):
    res, dev = key
    return ("nic-" + dev.replace(":", "-").replace(".", "-")) if res == NICRES else "core-" + dev


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    args = ap.parse_args()
    if NO_GRPC:
        print("SKIP: the daemon's part (run against the kubelet stand-in): " + NO_GRPC, flush=True)
        api, gen = None, None
    else:
        api, gen = load_api(args.proto_dir)
    tmp = tempfile.mkdtemp(prefix="sl-consumers-")
    try:
        root = make_fixture(tmp, "eks-x86")
        cfg = os.path.join(tmp, "config.json")
        with open(cfg, "w") as f:
            json.dump(CONFIG, f)

        states, lines = from_explain(args.agent, root, cfg)
        listed = {k for k, (st, _) in states.items() if st != "not-advertised"}
        healthy = {k for k, (st, _) in states.items() if st == "healthy"}
        print("explain: %s" % sorted("%s %s %s/%s" % (k[0], k[1], v[0], v[1]) for k, v in states.items()), flush=True)
        # the fixture and config make every state show, so a consumer cannot agree by accident
        check(states.get((NICRES, NIC6)) == ("healthy", "ok"), "explain: %s healthy: %s" % (NIC6, states.get((NICRES, NIC6))))
        check(states.get((NICRES, NIC7)) == ("unhealthy", "no-address"),
              "explain: %s unhealthy (no-address): %s" % (NIC7, states.get((NICRES, NIC7))))
        check(any(st == "not-advertised" and k[0] == NICRES for k, (st, _) in states.items()),
              "explain: a NIC not advertised")
        check(sorted(k[1] for k in healthy if k[0] == CORERES) == ["p0c2", "p0c3"], "explain: cores p0c2, p0c3 healthy")
        check(any(st == "not-advertised" and k[0] == CORERES for k, (st, _) in states.items()),
              "explain: a core not advertised")
        check(len(lines) == len(states), "explain: one line a device (%d lines, %d devices)" % (len(lines), len(states)))

        inv = from_inventory(args.agent, root, cfg)
        check(set(inv) == listed, "inventory --json resources %s == explain's listed %s" % (sorted(inv), sorted(listed)))

        addr, ready = from_preflight(args.agent, root, cfg)
        listed_nics = sorted(k[1] for k in listed if k[0] == NICRES)
        check(sorted(addr) == listed_nics, "preflight nic-address NICs %s == listed NICs %s" % (sorted(addr), listed_nics))
        check(ready == listed_nics, "preflight nic-binding ready %s == listed NICs %s" % (ready, listed_nics))
        for pci, (st, ipv4, gw, mac) in addr.items():
            a = inv.get((NICRES, pci), {})
            check((st == "known") == ((NICRES, pci) in healthy),
                  "%s: address state %s, explain %s" % (pci, st, states.get((NICRES, pci))))
            check((ipv4, gw, mac) == (a.get("ipv4"), a.get("gateway"), a.get("mac")),
                  "%s: preflight's address %s, inventory's %s" % (pci, (ipv4, gw, mac),
                                                                  (a.get("ipv4"), a.get("gateway"), a.get("mac"))))

        if NO_API:
            print("SKIP: the ResourceSlice's part: " + NO_API, flush=True)
        else:
            sl = from_slices(args.agent, root, cfg, tmp)
            want = sorted(dra_name(k) for k in healthy)
            check(sorted(sl) == want, "ResourceSlice devices %s == explain's healthy %s" % (sorted(sl), want))
            for k in healthy:
                at, a = sl.get(dra_name(k), {}), inv.get(k, {})
                val = {n: list(v.values())[0] for n, v in at.items()}
                if k[0] == NICRES:
                    shown = (val.get("pciAddress"), val.get("kind"), val.get("numaNode"), val.get("ipv4", ""),
                             val.get("resource.kubernetes.io/pciBusID"))
                    wanted = (k[1], a.get("kind"), a.get("numa"), (a.get("ipv4") or "").split("/")[0], k[1])
                else:
                    shown = (val.get("core"), val.get("numaNode"), cpu_list(val.get("cpus", "")))
                    wanted = (k[1], a.get("numa"), a.get("cpus"))
                check(shown == wanted, "%s: ResourceSlice %s, inventory %s" % (k[1], shown, wanted))

        if api is None:
            return
        dev, log = from_daemon(args.agent, api, root, cfg, tmp, healthy)
        check(set(dev) == listed, "daemon ListAndWatch %s == explain's listed %s" % (sorted(dev), sorted(listed)))
        for k, (health, numa, env, nodes) in sorted(dev.items()):
            want = "Healthy" if k in healthy else "Unhealthy"
            check(health == want, "%s %s: ListAndWatch %s, explain %s" % (k[0], k[1], health, states.get(k)))
            a = inv.get(k, {})
            check(numa == ([a["numa"]] if a.get("numa", -1) >= 0 else None),
                  "%s %s: ListAndWatch NUMA %s, inventory %s" % (k[0], k[1], numa, a.get("numa")))
            if k not in healthy:
                continue
            if k[0] == NICRES:
                shown = {"pci": env.get("SPINLANE_NIC_0_PCI"), "numa": int(env.get("SPINLANE_NIC_0_NUMA", "-9")),
                         "kind": env.get("SPINLANE_NIC_0_KIND"), "driver": env.get("SPINLANE_NIC_0_DRIVER"),
                         "mac": env.get("SPINLANE_NIC_0_MAC", ""), "ipv4": env.get("SPINLANE_NIC_0_IPV4", ""),
                         "gateway": env.get("SPINLANE_NIC_0_GATEWAY", "")}
                want_attrs = {x: a.get(x) for x in shown}
                check(shown == want_attrs, "%s: Allocate env %s, inventory %s" % (k[1], shown, want_attrs))
                check(env.get("SPINLANE_NIC_0_DEVICES", "").split(",") == a.get("devices"),
                      "%s: Allocate devices %s, inventory %s" % (k[1], env.get("SPINLANE_NIC_0_DEVICES"), a.get("devices")))
                hosts = [h for h, c in nodes if c in a.get("devices", [])]
                check(hosts == a.get("host_devices"), "%s: Allocate host nodes %s, inventory %s" %
                      (k[1], hosts, a.get("host_devices")))
            else:
                cpus = cpu_list(env.get("SPINLANE_ISOLATED_CPUS", ""))
                check(cpus == a.get("cpus"), "%s: Allocate CPUs %s, inventory %s" % (k[1], cpus, a.get("cpus")))
        # the daemon logs the map's line of every device at its first scan: explain's lines
        for line in lines:
            check(line in log, "daemon log has explain's line: %s" % line)
        if failures:
            print("---- agent log ----\n" + "\n".join(log.splitlines()[-30:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if gen:
            shutil.rmtree(gen, ignore_errors=True)
        print("%d failed" % len(failures))


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)

# SPDX-License-Identifier: Apache-2.0
"""Integration test of the DRA kubelet plugin: `spinlane-agent run --dra-resources nic,core
--root <eks-x86 tree>` with NODE_NAME and --kubeconfig against the TLS API-server stand-in
(tests/agent/kube/fake_apiserver.py, which serves the ResourceClaims) and a DRA kubelet
stand-in (dra_kubelet_standin.py, grpcio, from the kubelet's protos). A claim of one NIC
and two cores on one NUMA node is prepared: the CDI spec names exactly the NIC's device
nodes and the cores and carries the device plugin's environment (the same Allocate of a
device-plugin agent on the same tree, through the device plugin kubelet stand-in), with
the NIC's address; the checkpoint holds it; the agent restarted, the kubelet asks again
(answered from the checkpoint) and unprepares it: spec and entry gone. Refused: a UID that
is not the claim's, a claim of another driver's devices, an unhealthy device, a device of
another pool, too many claims, a malformed request, a claim not found; a corrupt
checkpoint fails every prepare closed, naming it, and the agent keeps running. The
v1beta1 service answers the same. No device plugin serves the resources in the list
(--dra-resources nic: the cores keep theirs, and a core claim is refused by DRA).

usage: test_dra_plugin.py --agent PATH --proto-dir DIR [--wrapper "valgrind ..."]
Exit 0 passed, 1 failed, 77 skipped (a peer's package missing)."""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import grpc
    import grpc_tools  # noqa: F401
except ImportError as e:
    print("SKIP: %s (python3-grpcio, python3-grpc-tools; run with /usr/bin/python3)" % e)
    sys.exit(77)
if not shutil.which("openssl"):
    print("SKIP: openssl is not installed (the API server stand-in makes its CA with it)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "support"))
sys.path.insert(0, os.path.join(SRC, "tests", "agent", "daemon"))
sys.path.insert(0, os.path.join(SRC, "tests", "deviceplugin"))
sys.path.insert(0, HERE)
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402
import test_cluster as tc  # noqa: E402  (its ApiServer, Agent, fixture tree and kubeconfig)
import kubelet_standin  # noqa: E402
from kubelet_standin import Kubelet, Plugin  # noqa: E402
from dra_kubelet_standin import DraKubelet  # noqa: E402

REG_SOCK = "spinlane.io-reg.sock"
DRA_SOCK = "/var/lib/kubelet/plugins/spinlane.io/dra.sock"
CHECKPOINT = "var/lib/spinlane/dra/claims.json"
CDI_DIR = "var/run/cdi"


def claim(ns, name, uid, results):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"namespace": ns, "name": name, "uid": uid},
            "spec": {"devices": {"requests": []}},
            "status": {"allocation": {"devices": {"results": [
                {"request": r, "driver": drv, "pool": pool, "device": dev} for r, drv, pool, dev in results]}}}}


def prepare_later(k, ns, uid, name):
    """NodePrepareResources (v1) of one claim, answered later: a grpc future."""
    return k.channel.unary_unary(
        "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
        request_serializer=PB["v1"].NodePrepareResourcesRequest.SerializeToString,
        response_deserializer=PB["v1"].NodePrepareResourcesResponse.FromString).future(
        PB["v1"].NodePrepareResourcesRequest(claims=[PB["v1"].Claim(namespace=ns, uid=uid, name=name)]),
        timeout=120 * tc.S)


def spec_path(root, uid):
    return os.path.join(root, CDI_DIR, "spinlane.io-claim-%s.json" % uid)


def checkpoint_uids(root):
    with open(os.path.join(root, CHECKPOINT)) as f:
        return [c["uid"] for c in json.load(f)["claims"]]


def devices_of(agent_text, resource):
    """{id: (healthy, numa)} from the agent's "<resource>: device X advertised (...)" lines."""
    out = {}
    for m in re.finditer(re.escape(resource) + r": device (\S+) advertised \((Healthy|Unhealthy), NUMA node (-?\d+)\)",
                         agent_text):
        out[m.group(1)] = (m.group(2) == "Healthy", int(m.group(3)))
    return out


def nic_devnodes(root, pci):
    """The device nodes a vfio-pci NIC of the fixture needs: its IOMMU group and the container."""
    group = os.path.basename(os.readlink(os.path.join(root, "sys/bus/pci/devices", pci, "iommu_group")))
    return {"/dev/vfio/" + group, "/dev/vfio/vfio"}


def start_agent(root, base, api, log, extra=()):
    a = tc.Agent(ARGS.agent, root, os.path.join(base, log),
                 ["--kubeconfig", tc.write_kubeconfig(base, api), "--metrics-bind-address", "0",
                  "--health-probe-bind-address", "0"] + list(extra),
                 # The self-check (tests/deviceplugin/test_selfcheck.py tests it) is off for
                 # the run: under valgrind its call can wait 5 s behind the burst below and
                 # rebuild the plugin in the middle of a case.
                 {"NODE_NAME": "node-a", "SPINLANE_RESCAN_MS": "600000", "SPINLANE_SELFCHECK_MS": "600000"})
    return a


def registered(k, agent):
    """The registration socket appears; GetInfo and NotifyRegistrationStatus as the kubelet."""
    if not check(tc.wait_for(lambda: REG_SOCK in k.sockets(), 60), "registration socket %s appears" % REG_SOCK):
        print(agent.text()[-3000:])
        return None
    info = k.register(REG_SOCK, timeout=10 * tc.S)
    check(info.type == "DRAPlugin" and info.name == "spinlane.io", "PluginInfo type/name: %r %r" % (info.type, info.name))
    check(info.endpoint == DRA_SOCK, "PluginInfo endpoint %r" % info.endpoint)
    check(list(info.supported_versions) == ["v1.DRAPlugin", "v1beta1.DRAPlugin"],
          "PluginInfo versions %r" % list(info.supported_versions))
    check(tc.wait_for(lambda: "registered with the kubelet" in agent.text(), 20), "registration status logged")
    if any("valgrind" in w for w in tc.WRAPPER):  # memcheck checks the daemon itself
        exe = os.path.basename(os.readlink("/proc/%d/exe" % agent.p.pid))
        check(exe != "spinlane-agent-run", "the daemon runs under valgrind, not natively (exe %s)" % exe)
    return info


def dp_allocate_env(base, api):
    """The environment a device-plugin agent on the same tree gives a container for the NIC
    and the two cores (Allocate through the device plugin kubelet stand-in)."""
    api_pb = DP_PB
    os.makedirs(base, exist_ok=True)
    root = tc.make_tree(base)
    kubelet = Kubelet(api_pb, root)
    kubelet.start()
    a = start_agent(root, base, api, "agent-dp.log")
    env = {}
    try:
        regs = []
        for _ in range(2):
            regs.append(kubelet.registrations.get(timeout=60 * tc.S)[1])
        by = {r.resource_name: r for r in regs}
        for res, ids in ((tc.NIC, [NIC_PCI]), (tc.CORE, CORES)):
            p = Plugin(api_pb, root, by[res].endpoint)
            resp = p.alloc(ids)
            env.update(dict(resp.container_responses[0].envs))
            p.close()
    finally:
        check(a.stop() == 0, "device-plugin agent exit 0")
        kubelet.stop()
    return env


def test_main(base):
    api = tc.ApiServer()
    root = tc.make_tree(base)
    # 0000:00:07.0 without an address: advertised Unhealthy
    with open(tc.agent_config(root), "w") as f:
        json.dump({"addresses": {"static": [{"pci": "0000:00:06.0", "ipv4": "10.0.1.10/24",
                                             "gateway": "10.0.1.1"}]}}, f)
    # a device plugin kubelet is there too: the DRA resources must not register with it
    dpk = Kubelet(DP_PB, root)
    dpk.start()
    k = DraKubelet(PB, root)
    a = start_agent(root, base, api, "agent.log", ["--dra-resources", "nic,core"])
    try:
        if not registered(k, a):
            return
        text = a.text()
        nics = devices_of(text, tc.NIC)
        cores = devices_of(text, tc.CORE)
        check(nics.get("0000:00:06.0") == (True, nics.get("0000:00:06.0", (0, -9))[1]), "NIC 06.0 healthy: %r" % nics)
        check(nics.get("0000:00:07.0", (True,))[0] is False, "NIC 07.0 unhealthy (no address): %r" % nics)
        numa = nics["0000:00:06.0"][1]
        same = sorted(c for c, (h, n) in cores.items() if h and n == numa)
        if not check(len(same) >= 2, "two healthy cores on NUMA node %d: %r" % (numa, cores)):
            return
        global CORES
        CORES = same[:2]
        check(dpk.registrations.empty(), "no device plugin registered for DRA resources")

        # the claim allocates from the ResourceSlice the agent published, as the scheduler
        # would: the NIC and the two cores of one NUMA node by their attributes
        sl = tc.wait_for(lambda: api.json("slices").get("node-a-spinlane.io"), 30)
        pub = {d["name"]: {k: list(v.values())[0] for k, v in d.get("attributes", {}).items()}
               for d in (sl or {}).get("spec", {}).get("devices", [])}
        nic_dev = [n for n, at in pub.items() if at.get("type") == "dpdk-nic" and at.get("pciAddress") == NIC_PCI]
        core_devs = sorted(n for n, at in pub.items() if at.get("type") == "isolated-core" and at.get("numaNode") == numa)
        check(nic_dev == ["nic-0000-00-06-0"] and not any(at.get("pciAddress") == "0000:00:07.0" for at in pub.values()),
              "the published slice has the healthy NIC, not the unhealthy one: %r" % sorted(pub))
        check(core_devs[:2] == ["core-" + c for c in CORES], "the slice's cores on NUMA node %d: %r" % (numa, core_devs))
        uid = "11111111-2222-4333-8444-555555555555"
        results = [("nic", "spinlane.io", "node-a", n) for n in nic_dev[:1]] + \
                  [("cores", "spinlane.io", "node-a", n) for n in core_devs[:2]]
        api.ok("claim " + json.dumps(claim("team-a", "dpdk-claim", uid, results)))
        resp = k.prepare([("team-a", uid, "dpdk-claim")])
        r = resp.claims[uid]
        check(r.error == "", "prepared without error: %r" % r.error)
        check(sorted((tuple(d.request_names), d.pool_name, d.device_name) for d in r.devices) ==
              sorted(((req,), pool, dev) for req, _, pool, dev in results), "devices answered: %r" % r.devices)
        check(all(list(d.cdi_device_ids) == ["spinlane.io/claim=" + uid] for d in r.devices), "CDI device ids")
        get = [x for x in api.json("requests") if "resourceclaims" in x["path"]]
        check([x["path"] for x in get] == ["/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/dpdk-claim"],
              "one GET of the claim: %r" % [x["path"] for x in get])
        with open(spec_path(root, uid)) as f:
            spec = json.load(f)
        check(spec["kind"] == "spinlane.io/claim" and [d["name"] for d in spec["devices"]] == [uid],
              "spec kind and device name")
        edits = spec["devices"][0]["containerEdits"]
        nodes = {n["path"] for n in edits["deviceNodes"]}
        check(nodes == nic_devnodes(root, NIC_PCI), "spec device nodes exactly the NIC's: %r" % nodes)
        env = dict(e.split("=", 1) for e in edits["env"])
        check(env.get("SPINLANE_DPDK_NICS") == NIC_PCI, "env SPINLANE_DPDK_NICS: %r" % env)
        check("10.0.1.10/24" in env.values(), "env carries the NIC's address: %r" % env)
        check(env.get("SPINLANE_ISOLATED_CORES") == ",".join(CORES), "env names the cores: %r" % env)
        hp = env.get("SPINLANE_HUGEPAGE_DIR")  # hugetlbfs.pod_mount: the mount as the device plugin's
        check([m["containerPath"] for m in edits.get("mounts", [])] == ([hp] if hp else []),
              "hugetlbfs mount as the env says: %r %r" % (hp, edits.get("mounts")))
        if ARGS.launch and ARGS.make_pod:
            # the launcher reads the claim's CDI env as it reads the device plugin's: its
            # allocation-env check passes on it (it fails on a variable missing or wrong)
            pods = os.path.join(base, "pods")
            subprocess.run([ARGS.make_pod, pods], check=True)
            r = subprocess.run([ARGS.launch, "--check-only", "--json", "--root", os.path.join(pods, "v2")],
                               env=dict(env, PATH=os.environ.get("PATH", "/usr/bin:/bin")), capture_output=True,
                               text=True, timeout=120)
            verdicts = {}
            for line in r.stdout.splitlines():
                try:
                    v = json.loads(line)
                except ValueError:
                    continue
                if isinstance(v, dict) and "check" in v:
                    verdicts[v["check"]] = v
            ae = verdicts.get("allocation-env", {})
            check(ae.get("verdict") == "pass" and NIC_PCI in json.dumps(ae.get("evidence")),
                  "spinlane-launch takes the claim's CDI env: allocation-env %r" % ae)
        want = dp_allocate_env(os.path.join(base, "dp"), api)
        check(env == want, "env is exactly the device plugin's Allocate env:\n  %r\n  %r" % (env, want))
        check(checkpoint_uids(root) == [uid], "checkpoint holds the claim")
        # prepared again (the kubelet retries): the same answer, from the checkpoint
        again = k.prepare([("team-a", uid, "dpdk-claim")]).claims[uid]
        check(again.error == "" and len(again.devices) == 3, "prepared again: %r" % again)
        # the checkpoint cannot be written (a directory in its place): the claim new in the
        # call is refused, its spec gone; the one recorded before stays prepared
        cp = os.path.join(root, CHECKPOINT)
        with open(cp) as f:
            saved = f.read()
        os.unlink(cp)
        os.mkdir(cp)
        uid3 = "33333333-2222-4333-8444-555555555555"
        api.ok("claim " + json.dumps(claim("team-a", "third", uid3, results[:1])))
        resp = k.prepare([("team-a", uid, "dpdk-claim"), ("team-a", uid3, "third")])
        check("writing the checkpoint" in resp.claims[uid3].error and not os.path.exists(spec_path(root, uid3)),
              "a claim that cannot be recorded is not prepared: %r" % resp.claims[uid3].error)
        check(resp.claims[uid].error == "" and os.path.exists(spec_path(root, uid)),
              "the claim recorded before stays prepared: %r" % resp.claims[uid].error)
        os.rmdir(cp)
        with open(cp, "w") as f:
            f.write(saved)

        def refused(claims, needle, version="v1", what=""):
            resp = k.prepare(claims, version=version)
            errs = {u: resp.claims[u].error for u in resp.claims}
            u = claims[0][1]
            return check(needle in errs.get(u, ""), "%s: error names %r: %r" % (what, needle, errs))

        other = "22222222-2222-4333-8444-555555555555"
        api.ok("claim " + json.dumps(claim("team-a", "recreated", "99999999-2222-4333-8444-555555555555", results)))
        refused([("team-a", other, "recreated")], "has uid", what="uid mismatch")
        api.ok("claim " + json.dumps(claim("team-a", "gpu", other, [("g", "gpu.example.com", "node-a", "gpu-0")])))
        refused([("team-a", other, "gpu")], "no devices of driver spinlane.io", what="another driver")
        api.ok("claim " + json.dumps(claim("team-a", "sick", other, [("nic", "spinlane.io", "node-a",
                                                                        "nic-0000-00-07-0")])))
        refused([("team-a", other, "sick")], "nic-0000-00-07-0 is unhealthy", what="unhealthy device")
        api.ok("claim " + json.dumps(claim("team-a", "ghost", other, [("nic", "spinlane.io", "node-a",
                                                                         "nic-0000-00-09-0")])))
        refused([("team-a", other, "ghost")], "is not a device of node node-a", what="unknown device")
        api.ok("claim " + json.dumps(claim("team-a", "elsewhere", other, [("nic", "spinlane.io", "node-b",
                                                                             "nic-0000-00-06-0")])))
        refused([("team-a", other, "elsewhere")], "in pool node-a", what="another node's pool")
        refused([("team-a", other, "absent")], "404", what="claim not found")
        check(not os.path.exists(spec_path(root, other)), "no spec for a refused claim")
        check(checkpoint_uids(root) == [uid], "checkpoint unchanged by refusals")
        # one good and one bad claim in one request: each answered on its own
        resp = k.prepare([("team-a", uid, "dpdk-claim"), ("team-a", other, "sick")])
        check(resp.claims[uid].error == "" and "unhealthy" in resp.claims[other].error, "per-claim answers")
        for claims, what in (([("team-a", "u%d" % i, "c") for i in range(65)], "claims in one request"),
                             ([("team-a", "NOT_A_UID", "c")], "is not a UID"),
                             ([("Team A", other, "c")], "is not a namespace name"),
                             ([("team-a", uid, "c"), ("team-a", uid, "c")], "listed more than once")):
            try:
                k.prepare(claims)
                check(False, "refused: %s" % what)
            except grpc.RpcError as e:
                check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and what in e.details(),
                      "refused %s: %s %s" % (what, e.code(), e.details()))
        try:
            k.prepare(None, raw=b"\x0a\x05\x12\x03a\x00b")
            check(False, "refused: NUL in a string")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and "NUL" in e.details(), "NUL refused: %s" % e.details())
        try:
            k.prepare(None, raw=b"\x0a\xff\xff")
            check(False, "refused: malformed")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and "malformed" in e.details(),
                  "malformed refused: %s" % e.details())
        try:
            k.prepare(None, raw=b"\x0a\x00" * (200 * 1024))
            check(False, "refused: oversize")
        except grpc.RpcError as e:
            check(e.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED),
                  "oversize refused: %s %s" % (e.code(), e.details()))
        # a ResourceClaim read held by the API server: the loop goes on (another call is
        # answered meanwhile), and the held prepare is answered once the read returns
        held = "44444444-2222-4333-8444-555555555555"
        api.ok("claim " + json.dumps(claim("team-a", "held", held, [("cores", "spinlane.io", "node-a",
                                                                      "core-" + same[-1])])))
        api.ok("hold GET /apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/held")
        fut = prepare_later(k, "team-a", held, "held")
        check(tc.wait_for(lambda: api.json("held")["held"] == 1, 30), "the claim's read is held")
        u = k.unprepare([("team-a", other, "never")]).claims[other]
        check(u.error == "" and not fut.done(), "another call answered while a prepare waits for the API server")
        api.ok("release")
        rh = fut.result().claims[held]
        check(rh.error == "" and os.path.exists(spec_path(root, held)), "held prepare answered after the read: %r" % rh)
        check(k.unprepare([("team-a", held, "held")]).claims[held].error == "", "held claim unprepared")
        # the API server down: the claim's error says so; back up: prepared
        api.ok("down")
        rd = k.prepare([("team-a", held, "held")]).claims[held]
        check("reading ResourceClaim team-a/held" in rd.error, "API server down: %r" % rd.error)
        api.ok("up")
        check(tc.wait_for(lambda: k.prepare([("team-a", held, "held")]).claims[held].error == "", 30, step=0.5),
              "prepared once the API server is back")
        check(k.unprepare([("team-a", held, "held")]).claims[held].error == "", "unprepared again")
        # v1beta1: the same service
        b1 = "33333333-2222-4333-8444-555555555555"
        api.ok("claim " + json.dumps(claim("team-b", "beta", b1, [("cores", "spinlane.io", "node-a",
                                                                     "core-" + same[-1])])))
        rb = k.prepare([("team-b", b1, "beta")], version="v1beta1").claims[b1]
        check(rb.error == "" and [d.device_name for d in rb.devices] == ["core-" + same[-1]], "v1beta1 prepare: %r" % rb)
        check(os.path.exists(spec_path(root, b1)), "v1beta1 spec written")
        ub = k.unprepare([("team-b", b1, "beta")], version="v1beta1").claims[b1]
        check(ub.error == "" and not os.path.exists(spec_path(root, b1)), "v1beta1 unprepare")
        check(a.p.poll() is None, "agent alive after the bad requests")
        # stopped while a prepare waits for a held read: a clean exit (no leak, no late callback)
        api.ok("hold GET /apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/held")
        fut = prepare_later(k, "team-a", held, "held")
        check(tc.wait_for(lambda: api.json("held")["held"] == 2, 30), "the claim's read is held again")
        check(a.stop() == 0, "agent exit 0")
        api.ok("release")
        check(fut.exception() is not None and not os.path.exists(spec_path(root, held)),
              "the held prepare ended unanswered, nothing written")
        check(not os.path.exists(os.path.join(root, tc.kubelet_standin.PLUGIN_DIR, "..", "plugins_registry", REG_SOCK)),
              "registration socket removed at exit")

        # restarted: the checkpoint brings the claim back; unprepare removes it
        k.close()
        with open(tc.agent_config(root), "w") as f:  # both NICs with addresses: every node check passes
            json.dump({"addresses": {"static": [
                {"pci": "0000:00:06.0", "ipv4": "10.0.1.10/24", "gateway": "10.0.1.1"},
                {"pci": "0000:00:07.0", "ipv4": "10.0.2.10/24", "gateway": "10.0.2.1"}]}}, f)
        a = start_agent(root, base, api, "agent2.log", ["--dra-resources", "nic,core"])
        if not registered(k, a):
            return
        # readiness: no device plugin registers here, the DRA plugin's registration counts
        check(tc.wait_for(lambda: api.labels().get("spinlane.io/ready") == "true", 30),
              "Node ready once the DRA plugin is registered: %r" % tc.readiness_lines(a))
        check("1 prepared claims in the checkpoint" in a.text(), "checkpoint loaded at start")
        api.json("requests")  # from here on
        os.unlink(spec_path(root, uid))  # as a reboot empties /var/run/cdi
        r = k.prepare([("team-a", uid, "dpdk-claim")]).claims[uid]
        check(r.error == "" and len(r.devices) == 3, "prepared after restart, from the checkpoint: %r" % r)
        check(os.path.exists(spec_path(root, uid)), "spec written again from the checkpoint")
        check(not [x for x in api.json("requests") if "resourceclaims" in x["path"]], "no GET for a prepared claim")
        u = k.unprepare([("team-a", uid, "dpdk-claim")]).claims[uid]
        check(u.error == "", "unprepared: %r" % u.error)
        check(not os.path.exists(spec_path(root, uid)), "spec removed")
        check(checkpoint_uids(root) == [], "checkpoint entry removed")
        u = k.unprepare([("team-a", uid, "dpdk-claim"), ("team-a", other, "never")])
        check(all(u.claims[x].error == "" for x in (uid, other)), "unprepare again / unknown claim: success")
        check(a.stop() == 0, "agent exit 0 after restart")

        # a corrupt checkpoint: said so, every prepare fails closed, no crash
        with open(os.path.join(root, CHECKPOINT), "w") as f:
            f.write('{"version": 1, "claims": [{"uid": "x"')
        k.close()
        a = start_agent(root, base, api, "agent3.log", ["--dra-resources", "nic,core"])
        if registered(k, a):
            check("cannot be used" in a.text(), "corrupt checkpoint logged")
            r = k.prepare([("team-a", uid, "dpdk-claim")]).claims[uid]
            check("checkpoint" in r.error and not os.path.exists(spec_path(root, uid)),
                  "corrupt checkpoint: prepare fails closed: %r" % r.error)
            check(a.p.poll() is None, "agent alive with a corrupt checkpoint")
        check(a.stop() == 0, "agent exit 0 with a corrupt checkpoint")
    finally:
        k.close()
        if a.p.poll() is None:
            a.p.kill()
        dpk.stop()
        api.stop()


def test_nic_only(base):
    """--dra-resources nic: the NICs through DRA only, the cores through their device plugin
    only; a claim of a core is refused by the DRA plugin."""
    api = tc.ApiServer()
    os.makedirs(base, exist_ok=True)
    root = tc.make_tree(base)
    dpk = Kubelet(DP_PB, root)
    dpk.start()
    k = DraKubelet(PB, root)
    a = start_agent(root, base, api, "agent-nic.log", ["--dra-resources", "nic"])
    try:
        if not registered(k, a):
            return
        reg = dpk.registrations.get(timeout=60 * tc.S)[1]
        check(reg.resource_name == tc.CORE, "the core device plugin registers: %s" % reg.resource_name)
        uid = "55555555-2222-4333-8444-555555555555"
        core = sorted(devices_of(a.text(), tc.CORE))[0]
        api.ok("claim " + json.dumps(claim("team-a", "core", uid, [("c", "spinlane.io", "node-a", "core-" + core)])))
        r = k.prepare([("team-a", uid, "core")]).claims[uid]
        check("cores are not served through DRA on this node" in r.error, "a core refused with nic only: %r" % r.error)
        api.ok("claim " + json.dumps(claim("team-a", "nic", uid[:-1] + "6",
                                           [("n", "spinlane.io", "node-a", "nic-0000-00-06-0")])))
        r = k.prepare([("team-a", uid[:-1] + "6", "nic")]).claims[uid[:-1] + "6"]
        check(r.error == "", "a NIC prepared with nic only: %r" % r.error)
        check(k.unprepare([("team-a", uid[:-1] + "6", "nic")]).claims[uid[:-1] + "6"].error == "", "unprepared")
        plugins = sorted(os.listdir(os.path.join(root, kubelet_standin.PLUGIN_DIR)))
        check(dpk.registrations.empty() and "spinlane-dpdk-nic.sock" not in plugins,
              "no NIC device plugin (sockets %s)" % plugins)
        # a config change moving the CDI spec dir: said, the plugin keeps its dir
        with open(tc.agent_config(root)) as f:
            conf = json.load(f)
        conf["cdi"] = {"spec_dir": "/var/run/cdi-other"}
        with open(tc.agent_config(root), "w") as f:
            json.dump(conf, f)
        check(tc.wait_for(lambda: "DRA: cdi.spec_dir is now /var/run/cdi-other" in a.text(), 30),
              "a changed spec dir is logged: %s" % a.text()[-1500:])
        r = k.prepare([("team-a", uid[:-1] + "6", "nic")]).claims[uid[:-1] + "6"]
        check(r.error == "" and os.path.exists(spec_path(root, uid[:-1] + "6")), "specs stay in their dir")
        check(k.unprepare([("team-a", uid[:-1] + "6", "nic")]).claims[uid[:-1] + "6"].error == "", "unprepared")
        check(a.stop() == 0, "agent (nic only) exit 0")
    finally:
        k.close()
        if a.p.poll() is None:
            a.p.kill()
        dpk.stop()
        api.stop()


def fd_count(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1


def test_burst(base):
    """Issue 31: CALLERS prepare calls of 64 claims each at once (every claim a GET of the
    API server). The reads in flight are bounded across calls (DRA_MAX_READS) and the HTTP
    client's connections too (HTTP_MAX_CONNECTIONS in use, HTTP_MAX_IDLE_CONNECTIONS kept):
    the API server never sees more than 16 connections at once, the agent's fds stay
    within a bound during the burst, at most 4 connections stay open after it, every
    call is answered, and a valid prepare after the burst succeeds."""
    callers, per = (4 if tc.WRAPPER else 20), 64  # valgrind: the same bounds, a smaller burst
    api = tc.ApiServer()
    os.makedirs(base, exist_ok=True)
    root = tc.make_tree(base)
    k = DraKubelet(PB, root)
    a = start_agent(root, base, api, "agent-burst.log", ["--dra-resources", "nic,core"])
    try:
        if not registered(k, a):
            return
        sl = tc.wait_for(lambda: api.json("slices").get("node-a-spinlane.io"), 30)
        cores = sorted(d["name"] for d in (sl or {}).get("spec", {}).get("devices", [])
                       if d.get("attributes", {}).get("type", {}).get("string") == "isolated-core")
        if not check(cores, "the slice has cores: %r" % sl):
            return
        # claims of another driver's device: each costs the read, none is prepared
        for c in range(callers):
            for i in range(per):
                check(api.cmd("claim " + json.dumps(claim("burst", "c%d-%d" % (c, i), "u-%d-%d" % (c, i),
                                                          [("x", "other.example.com", "node-a", "d0")]))) == "ok",
                      "claim stored")
        api.json("conns reset")
        pid = a.p.pid
        fds_before = fd_count(pid)
        stub = k.channel.unary_unary(
            "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
            request_serializer=PB["v1"].NodePrepareResourcesRequest.SerializeToString,
            response_deserializer=PB["v1"].NodePrepareResourcesResponse.FromString)
        t_burst = time.monotonic()
        futs = [stub.future(PB["v1"].NodePrepareResourcesRequest(
            claims=[PB["v1"].Claim(namespace="burst", uid="u-%d-%d" % (c, i), name="c%d-%d" % (c, i))
                    for i in range(per)]), timeout=300 * tc.S) for c in range(callers)]
        fd_peak = fds_before
        while not all(f.done() for f in futs):
            fd_peak = max(fd_peak, fd_count(pid))
            time.sleep(0.02)
        burst_s = time.monotonic() - t_burst
        answered = 0
        for f in futs:
            try:
                r = f.result()
                answered += len(r.claims)
            except grpc.RpcError as e:
                print("burst call failed: %s" % e)
        conns = api.json("conns")
        print("burst: %d x %d claims: answered %d; agent fds %d before, %d at most during; API server "
              "connections at most %d at once" % (callers, per, answered, fds_before, fd_peak, conns["peak"]))
        check(answered == callers * per, "every claim of the burst answered: %d" % answered)
        check(conns["peak"] <= 16, "at most 16 API connections at once during the burst: %d" % conns["peak"])
        check(fd_peak - fds_before <= 40, "the agent's fds stay bounded: %d -> %d" % (fds_before, fd_peak))
        after = tc.wait_for(lambda: api.json("conns")["open"] <= 4 or None, 30)
        print("burst: API server connections open after: %d; agent fds after: %d"
              % (api.json("conns")["open"], fd_count(pid)))
        check(after, "at most 4 idle connections kept after the burst: %r" % api.json("conns"))
        # each claim of the burst is refused (another driver's device): a few lines, counted
        refusals = [x for x in a.text().splitlines() if "u-" in x and "not prepared" in x]
        print("burst: %d claims refused, %d refusal lines logged" % (callers * per, len(refusals)))
        # at most 20 lines a 10 s window (DRA_REFUSAL_LINES, DRA_REFUSAL_WINDOW_MS), and a
        # burst of d seconds touches at most d/10 + 2 windows (a slow run, valgrind, more)
        windows = int(burst_s // 10) + 2
        check(len(refusals) <= 20 * windows and len(refusals) < callers * per,
              "refusals logged rate-limited: %d lines for %d refusals in %.1f s (%d windows)"
              % (len(refusals), callers * per, burst_s, windows))
        # the count of the refusals not logged goes out with the next line logged in a new
        # window (DRA_REFUSAL_WINDOW_MS, 10 s): a burst that fits in one window (a slow run)
        # has not said it yet; one more refusal once the window has passed does
        time.sleep(10.5)
        try:
            stub(PB["v1"].NodePrepareResourcesRequest(
                claims=[PB["v1"].Claim(namespace="burst", uid="u-0-0", name="c0-0")]), timeout=60 * tc.S)
        except grpc.RpcError as e:
            print("refusal after the window: %s" % e)
        check(tc.wait_for(lambda: "more refusals not logged" in a.text() or None, 30),
              "the refusals not logged are counted in a line")
        # a valid prepare after the burst
        nic_dev = [d["name"] for d in sl["spec"]["devices"]
                   if d.get("attributes", {}).get("pciAddress", {}).get("string") == NIC_PCI]
        uid = "99999999-2222-4333-8444-555555555555"
        api.cmd("claim " + json.dumps(claim("team-b", "after", uid, [("cores", "spinlane.io", "node-a", cores[0])])))
        r = k.prepare([("team-b", uid, "after")]).claims[uid]
        check(r.error == "" and len(r.devices) == 1, "a valid prepare after the burst: %r (nic %r)" % (r, nic_dev))
        check(a.stop() == 0, "agent exit 0 after the burst")
    finally:
        k.close()
        if a.p.poll() is None:
            a.p.kill()
        api.stop()


def test_options(base):
    for bad, needle in (("gpu", "is not a DRA resource"), ("nic,nic", "given twice"), ("nic,", "trailing comma")):
        os.makedirs(os.path.join(base, "o"), exist_ok=True)
        a = tc.Agent(ARGS.agent, tc.make_tree(os.path.join(base, "o")), os.path.join(base, "opt.log"),
                     ["--dra-resources", bad], {})
        rc = a.p.wait(60 * tc.S)
        check(rc == 2 and needle in a.text(), "--dra-resources %s refused (%s): %s" % (bad, needle, a.text()[-300:]))
        a.log.close()


def main():
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--wrapper", default="")
    ap.add_argument("--launch", default="", help="spinlane-launch: run on the claim's CDI env")
    ap.add_argument("--make-pod", default="", help="make-pod: the launcher's pod-view fixture trees")
    global ARGS, PB, DP_PB
    ARGS = ap.parse_args()
    tc.WRAPPER = shlex.split(ARGS.wrapper)
    tc.S = 20.0 if tc.WRAPPER else 1.0
    kubelet_standin.SCALE = tc.S
    import dra_kubelet_standin
    PB, gen = dra_kubelet_standin.load_protos(ARGS.proto_dir)
    DP_PB, gen2 = kubelet_standin.load_api(ARGS.proto_dir)
    base = tempfile.mkdtemp(prefix="sl-dra-")
    try:
        test_options(base)
        test_main(base)
        test_nic_only(os.path.join(base, "nic-only"))
        test_burst(os.path.join(base, "burst"))
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(gen, ignore_errors=True)
        shutil.rmtree(gen2, ignore_errors=True)
    print("%d checks, %d failed" % (testcheck.checks, len(failures)))
    return 1 if failures else 0


NIC_PCI = "0000:00:06.0"
CORES = []
if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""Integration test of the daemon's ResourceSlice (DRA, issue #25): `spinlane-agent run
--root <eks-x86 tree>` with NODE_NAME, --kubeconfig and --dra-resources against the TLS API-server stand-in
(tests/agent/kube/fake_apiserver.py, which validates resource.k8s.io/v1 ResourceSlices as
the API server does). Checks: the slice is created with the fixture's Healthy NICs and
cores and the contract's attributes; a NIC losing its vfio device node leaves the slice
and the pool generation goes up by one (PUT with the resourceVersion read); back again,
up by one again; a slice deleted by someone else is put back; a 409 on the PUT is read
again and retried; a 403 gives one RBAC line and a retry; a 503 backs off; the stop
deletes the slice; without DRA resources nothing touches resourceslices; a bad list is
refused; 200 cores make a pool of two slices (resourceSliceCount 2, one generation, every
core once), shrinking to 100 deletes the second. The stand-in itself refuses v1beta1-shaped devices, two node selections, an
attribute with two values, a device name that is no DNS label. Every wait is for an
event, with a generous bound.

usage: test_slices.py --agent PATH [--wrapper "valgrind ..."]
Exit 0 passed, 1 failed, 77 skipped (openssl missing)."""
import argparse
import http.client
import json
import os
import re
import shlex
import shutil
import ssl
import subprocess
import sys
import tempfile
import time

if not shutil.which("openssl"):
    print("SKIP: openssl is not installed (the API server stand-in makes its CA with it)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(SRC, "tests", "support"))
sys.path.insert(0, os.path.join(SRC, "tests", "deviceplugin"))  # for test_cluster
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402
import test_cluster as tc  # noqa: E402  (its API-server stand-in, Agent, fixture tree, kubeconfig, wait_for)

SLICE = "node-a-spinlane.io"
PATH = "/apis/resource.k8s.io/v1/resourceslices"
RBAC = ("RBAC: the agent's ClusterRole must grant get, create, update and delete on "
        "resourceslices (API group resource.k8s.io)")


class ApiServer(tc.ApiServer):
    """test_cluster's stand-in, with the slice calls."""

    def slice(self):
        return self.json("slices").get(SLICE)

    def call(self, method, path, body=None):
        ctx = ssl.create_default_context(cafile=os.path.join(self.dir, "ca.pem"))
        c = http.client.HTTPSConnection("127.0.0.1", self.port, context=ctx, timeout=30)
        try:
            c.request(method, path, body=json.dumps(body) if body is not None else None,
                      headers={"Authorization": "Bearer tok-1", "Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, json.loads(r.read() or b"null")
        finally:
            c.close()


def names(sl):
    return [d["name"] for d in (sl or {}).get("spec", {}).get("devices", [])]


def gen(sl):
    return (sl or {}).get("spec", {}).get("pool", {}).get("generation")


CORES = ["core-p0c%d" % i for i in range(2, 8)]
ALL = ["nic-0000-00-06-0", "nic-0000-00-07-0"] + CORES


def slice_log(agent):
    return "\n".join(x for x in agent.text().splitlines() if "ResourceSlice" in x)


def slice_requests(api):
    got = PEEKED + [r for r in api.json("requests") if r["path"].startswith(PATH)]
    del PEEKED[:]
    return got


def slice_requests_peek(api):
    """The slice requests since the last "requests", left for the next call to count."""
    got = slice_requests(api)
    PEEKED.extend(got)
    return got


PEEKED = []


def test_standin(api):
    """The stand-in refuses what the API server refuses."""
    good = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "x-spinlane.io"},
            "spec": {"driver": "spinlane.io", "nodeName": "x", "pool": {"name": "x", "generation": 1,
                                                                         "resourceSliceCount": 1},
                     "devices": [{"name": "nic-0", "attributes": {"kind": {"string": "ena"}}}]}}
    st, _ = api.call("POST", PATH, good)
    check(st == 201, "stand-in: a good slice is created (%s)" % st)
    st, _ = api.call("POST", PATH, good)
    check(st == 409, "stand-in: the same name again is 409 (%s)" % st)
    bad = [("v1beta1 basic", lambda s: s["spec"]["devices"][0].update(basic={"attributes": {}}), "no `basic`"),
           ("two node selections", lambda s: s["spec"].update(allNodes=True), "exactly one of"),
           ("two values", lambda s: s["spec"]["devices"][0]["attributes"].update(x={"int": 1, "string": "a"}),
            "exactly one value"),
           ("device name", lambda s: s["spec"]["devices"][0].update(name="nic-0000:00:06.0"), "a DNS label"),
           ("long string", lambda s: s["spec"]["devices"][0]["attributes"].update(x={"string": "a" * 65}),
            "at most 64"),
           ("attribute name", lambda s: s["spec"]["devices"][0]["attributes"].update({"a-b": {"int": 1}}),
            "C identifier"),
           ("slice count", lambda s: s["spec"]["pool"].update(resourceSliceCount=0), "greater than 0"),
           ("no driver", lambda s: s["spec"].pop("driver"), "spec.driver"),
           ("129 devices", lambda s: s["spec"].update(devices=[{"name": "d%d" % i} for i in range(129)]),
            "at most 128")]
    for what, f, needle in bad:
        o = json.loads(json.dumps(good))
        o["metadata"]["name"] = "y-spinlane.io"
        f(o)
        st, body = api.call("POST", PATH, o)
        check(st == 422 and needle in (body or {}).get("message", ""),
              "stand-in refuses %s: %s %s" % (what, st, (body or {}).get("message")))
    cur = api.call("GET", PATH + "/x-spinlane.io")[1]
    upd = json.loads(json.dumps(cur))
    upd["metadata"]["resourceVersion"] = "1"
    check(api.call("PUT", PATH + "/x-spinlane.io", upd)[0] == 409, "stand-in: a stale resourceVersion is 409")
    upd = json.loads(json.dumps(cur))
    upd["spec"]["driver"] = "other.io"
    check(api.call("PUT", PATH + "/x-spinlane.io", upd)[0] == 422, "stand-in: the driver is immutable")
    st, lst = api.call("GET", PATH + "?fieldSelector=spec.nodeName%3Dx")
    check(st == 200 and [i["metadata"]["name"] for i in lst["items"]] == ["x-spinlane.io"], "stand-in: LIST by node")
    check(api.call("DELETE", PATH + "/x-spinlane.io")[0] == 200, "stand-in: DELETE")
    check(api.call("GET", PATH + "/x-spinlane.io")[0] == 404, "stand-in: gone")
    api.json("requests")  # forget these


def test_publish(args, base):
    root = tc.make_tree(base)
    api = ApiServer()
    test_standin(api)
    agent = tc.Agent(args.agent, root, os.path.join(base, "agent.log"), ["--kubeconfig", tc.write_kubeconfig(base, api), "--metrics-bind-address", "0",
                   "--health-probe-bind-address", "0", "--dra-resources", "nic,core"],
                  {"NODE_NAME": "node-a", "SPINLANE_KUBE_RESYNC_MS": "1000"})
    try:
        # ---- created: the Healthy NICs and cores, the contract's attributes ----
        sl = tc.wait_for(api.slice, 60)
        check(names(sl) == ALL, "slice devices %s" % names(sl))
        if sl:
            spec = sl["spec"]
            check(spec["driver"] == "spinlane.io" and spec["nodeName"] == "node-a" and
                  spec["pool"] == {"name": "node-a", "generation": 1, "resourceSliceCount": 1}, "spec %s" % spec)
            nic = spec["devices"][0]["attributes"]
            check(nic == {"type": {"string": "dpdk-nic"}, "kind": {"string": "ena"},
                          "pciAddress": {"string": "0000:00:06.0"}, "numaNode": {"int": 0},
                          "ipv4": {"string": "10.0.1.10"},
                          "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                          # Kubernetes' standard attributes (issue 32)
                          "resource.kubernetes.io/pciBusID": {"string": "0000:00:06.0"},
                          "resource.kubernetes.io/numaNode": {"int": 0}}, "NIC attributes %s" % nic)
            core = spec["devices"][2]["attributes"]
            check(core == {"type": {"string": "isolated-core"}, "numaNode": {"int": 0}, "core": {"string": "p0c2"},
                           "cpus": {"string": "2,10"}, "resource.kubernetes.io/numaNode": {"int": 0}},
                  "core attributes %s" % core)
        check(tc.wait_for(lambda: "ResourceSlice %s created: generation 1, 8 devices" % SLICE in agent.text(), 10),
              "the create is logged")
        reqs = slice_requests(api)
        check([(r["method"], r["answer"]) for r in reqs][:2] == [("GET", 404), ("POST", 201)],
              "GET 404 then POST 201: %s" % [(r["method"], r["answer"]) for r in reqs])

        # ---- a NIC goes unhealthy: it leaves the slice, generation 2 ----
        os.unlink(os.path.join(root, "dev/vfio/noiommu-0"))
        sl = tc.wait_for(lambda: (lambda s: s if gen(s) == 2 else None)(api.slice()), 30)
        check(names(sl) == ALL[1:], "the unhealthy NIC left: %s (generation %s)" % (names(sl), gen(sl)))
        puts = [r for r in slice_requests(api) if r["method"] == "PUT"]
        check(len(puts) == 1 and json.loads(puts[0]["body"])["metadata"].get("resourceVersion") and
              puts[0]["answer"] == 200, "one PUT with the resourceVersion: %s" % puts)
        # a re-scan of the same node writes nothing (the periodic read-back only GETs)
        time.sleep(1.5)  # not a bound: a window in which a write would be wrong
        check(gen(api.slice()) == 2 and not [r for r in slice_requests(api) if r["method"] != "GET"],
              "no write without a change")

        # ---- back: generation 3 ----
        open(os.path.join(root, "dev/vfio/noiommu-0"), "w").close()
        sl = tc.wait_for(lambda: (lambda s: s if gen(s) == 3 else None)(api.slice()), 30)
        check(names(sl) == ALL, "the NIC is back: %s" % names(sl))

        # ---- deleted by someone else: put back ----
        api.ok("slice-delete " + SLICE)
        sl = tc.wait_for(api.slice, 30)
        check(names(sl) == ALL and gen(sl) == 4, "put back: %s generation %s" % (names(sl), gen(sl)))
        check(tc.wait_for(lambda: "(deleted by someone else); putting it back" in agent.text(), 10), "the put-back is logged:\n" + slice_log(agent))

        # ---- a 409 on the PUT: read again, written ----
        slice_requests(api)
        api.ok("fail PUT %s 409 1" % PATH)
        os.unlink(os.path.join(root, "dev/vfio/noiommu-0"))
        sl = tc.wait_for(lambda: (lambda s: s if gen(s) == 5 else None)(api.slice()), 30)
        check(names(sl) == ALL[1:], "after the conflict: %s" % names(sl))
        seq = [(r["method"], r["answer"]) for r in slice_requests(api)]
        check(("PUT", 409) in seq and seq[seq.index(("PUT", 409)) + 1:][:2] == [("GET", 200), ("PUT", 200)],
              "PUT 409, GET, PUT 200: %s" % seq)

        # ---- 403: the RBAC line, once; retried ----
        api.ok("fail GET %s 403 3" % PATH)
        open(os.path.join(root, "dev/vfio/noiommu-0"), "w").close()
        check(tc.wait_for(lambda: RBAC in agent.text(), 30), "the RBAC line")
        sl = tc.wait_for(lambda: (lambda s: s if gen(s) == 6 else None)(api.slice()), 30)
        check(names(sl) == ALL, "written after the refusals: %s" % names(sl))
        check(agent.text().count(RBAC) == 1, "the RBAC line once (%d)" % agent.text().count(RBAC))
        m = re.search(r"ResourceSlice %s: GET \S+ HTTP 403[^\n]*" % SLICE, agent.text())
        check(m is not None and "cannot get resource \"resourceslices\"" in m.group(0), "the 403 line: %s\n%s" %
              (m.group(0) if m else None, slice_log(agent)))

        # ---- 503: backoff, then written ----
        api.ok("fail GET %s 503 2" % PATH)
        os.unlink(os.path.join(root, "dev/vfio/noiommu-1"))
        sl = tc.wait_for(lambda: (lambda s: s if gen(s) == 7 else None)(api.slice()), 30)
        check(names(sl) == [ALL[0]] + CORES, "written after the 503s: %s" % names(sl))
        check("retrying in" in agent.text() and "with backoff while it fails" in agent.text(), "the backoff line")
        check(not [r for r in api.json("requests") if r["answer"] == 422], "no request was refused as invalid")

        # ---- 409 on every PUT (another writer always wins): backoff on the repeats ----
        # (issue 31: about 8 requests a second before, forever)
        slice_requests(api)
        api.ok("fail PUT %s 409 100000" % PATH)
        open(os.path.join(root, "dev/vfio/noiommu-1"), "w").close()
        t0 = time.monotonic()
        tc.wait_for(lambda: [r for r in slice_requests_peek(api) if r["method"] == "PUT"], 30)
        time.sleep(8)  # not a bound: the window in which the requests are counted
        reqs = slice_requests(api)
        window = time.monotonic() - t0
        puts = [r for r in reqs if r["method"] == "PUT"]
        print("409 on every PUT: %d requests (%d PUTs) in %.1f s" % (len(reqs), len(puts), window))
        check(len(puts) >= 2 and all(r["answer"] == 409 for r in puts), "the PUTs were refused: %s" %
              [(r["method"], r["answer"]) for r in reqs])
        check(len(reqs) <= 24, "backoff on repeated 409s: %d requests in %.1f s (at most 24)" % (len(reqs), window))
        lines = [x for x in agent.text().splitlines() if "in a row); trying again" in x]
        check(len(lines) <= 2, "the repeated 409s logged rate-limited: %d lines" % len(lines))
        api.ok("fail-clear")
        sl = tc.wait_for(lambda: (lambda s: s if names(s) == ALL else None)(api.slice()), 120)
        check(sl is not None, "written once the conflicts stop: %s" % names(api.slice()))

        # ---- the stop deletes it ----
        slice_requests(api)
        rc = agent.stop()
        check(rc == 0, "the agent stops cleanly (%s)" % rc)
        check(api.slice() is None, "the stop deleted the slice")
        check([r["method"] for r in slice_requests(api)][-1:] == ["DELETE"], "a DELETE at the stop")
        check("ResourceSlice %s deleted (the agent stops advertising)" % SLICE in agent.text(), "the delete is logged")
    finally:
        agent.stop()
        api.stop()


def make_many(base):
    """A node of 208 CPUs without SMT, 8-207 isolated (200 cores, NUMA nodes 0 and 1), no
    DPDK NIC: built with make-node.py's Node (not one of its named fixtures)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_node", os.path.join(SRC, "tests", "fixtures", "make-node.py"))
    mn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mn)
    root = os.path.join(base, "many")
    n = mn.Node(root)
    n.cpus(208, lambda c: [c], isolated="8-207", nohz_full="8-207")
    n.numa({0: "0-103", 1: "104-207"})
    n.cmdline += ["isolcpus=8-207", "nohz_full=8-207", "hugepagesz=2M", "hugepages=512"]
    n.hugepages(2048, 512, 512, {0: (256, 256), 1: (256, 256)})
    n.hugepages(1048576, 0, 0, {0: (0, 0), 1: (0, 0)})
    n.hugetlbfs("/dev/hugepages", "2M")
    n.cgroup(2)
    n.module("vfio", {"enable_unsafe_noiommu_mode": "Y"})
    n.nic("0000:00:05.0", driver="ena", netdev="eth0", mac="0a:1b:2c:3d:4e:05", default_route=True)
    n.finish()
    os.makedirs(os.path.join(root, "var/lib/kubelet"), exist_ok=True)
    with open(os.path.join(root, "var/lib/kubelet/cpu_manager_state"), "w") as f:
        json.dump({"policyName": "static", "defaultCpuSet": "0-7", "checksum": 1}, f)
    with open(tc.agent_config(root), "w") as f:
        json.dump({}, f)
    return root


def pool(api):
    """The pool's slices (name -> slice), whatever their names."""
    return {k: v for k, v in api.json("slices").items() if v["spec"]["pool"]["name"] == "node-a"}


def test_pool(args, base):
    """200 cores: the pool split over two slices (128 + 72), resourceSliceCount 2 and one
    generation on both, every core once; the pool shrinks to 100: the second slice is
    deleted, the first says 1; the stop deletes what is left."""
    root = make_many(os.path.join(base, "pool"))
    api = ApiServer()
    agent = tc.Agent(args.agent, root, os.path.join(base, "pool.log"),
                     ["--kubeconfig", tc.write_kubeconfig(base, api), "--metrics-bind-address", "0",
                      "--health-probe-bind-address", "0", "--dra-resources", "nic,core"],
                     {"NODE_NAME": "node-a", "SPINLANE_KUBE_RESYNC_MS": "1000"})
    cores = ["core-p0c%d" % i for i in range(8, 208)]
    try:
        def complete(want_n, count):
            p = pool(api)
            sl = sorted(p.values(), key=lambda x: x["metadata"]["name"])
            gens = {x["spec"]["pool"]["generation"] for x in sl}
            if len(sl) == count and len(gens) == 1 and sum(len(names(x)) for x in sl) == want_n:
                return p
            return None
        p = tc.wait_for(lambda: complete(200, 2), 60)
        check(p is not None, "200 cores in two slices: %s" %
              {k: (len(names(v)), v["spec"]["pool"]) for k, v in pool(api).items()})
        if p:
            check(sorted(p) == [SLICE, SLICE + "-1"], "the slices' names %s" % sorted(p))
            check([len(names(p[SLICE])), len(names(p[SLICE + "-1"]))] == [128, 72],
                  "128 + 72 devices: %d + %d" % (len(names(p[SLICE])), len(names(p[SLICE + "-1"]))))
            got = names(p[SLICE]) + names(p[SLICE + "-1"])
            check(sorted(got) == sorted(cores) and len(set(got)) == 200, "every core once: %d devices, %d distinct"
                  % (len(got), len(set(got))))
            check(all(x["spec"]["pool"]["resourceSliceCount"] == 2 for x in p.values()),
                  "resourceSliceCount 2 on both: %s" % [x["spec"]["pool"] for x in p.values()])
            numa = {d["name"]: d["attributes"].get("resource.kubernetes.io/numaNode", {}).get("int")
                    for x in p.values() for d in x["spec"]["devices"]}
            check(numa.get("core-p0c8") == 0 and numa.get("core-p0c207") == 1,
                  "the standard numaNode: %s %s" % (numa.get("core-p0c8"), numa.get("core-p0c207")))
        check(not [r for r in api.json("requests") if r["answer"] == 422], "no request was refused as invalid")
        gen0 = (p or {}).get(SLICE, {}).get("spec", {}).get("pool", {}).get("generation")

        # ---- the pool shrinks to 100 cores: one slice, the second deleted ----
        with open(os.path.join(root, "sys/devices/system/cpu/isolated"), "w") as f:
            f.write("8-107\n")
        p = tc.wait_for(lambda: complete(100, 1), 60)
        check(p is not None and sorted(p) == [SLICE], "shrunk to one slice: %s" %
              {k: (len(names(v)), v["spec"]["pool"]) for k, v in pool(api).items()})
        if p:
            sl = p[SLICE]
            check(sl["spec"]["pool"]["resourceSliceCount"] == 1 and gen0 is not None and
                  sl["spec"]["pool"]["generation"] == gen0 + 1, "count 1, generation up by one: %s (was %s)"
                  % (sl["spec"]["pool"], gen0))
            check(names(sl) == cores[:100], "the 100 cores left: %d" % len(names(sl)))

        # ---- back to 200, then the stop deletes both ----
        with open(os.path.join(root, "sys/devices/system/cpu/isolated"), "w") as f:
            f.write("8-207\n")
        check(tc.wait_for(lambda: complete(200, 2), 60) is not None, "two slices again")
        rc = agent.stop()
        check(rc == 0, "the agent stops cleanly (%s)" % rc)
        check(pool(api) == {}, "the stop deleted both slices: %s" % sorted(pool(api)))
    finally:
        agent.stop()
        api.stop()


def test_off_and_bad(args, base):
    d = os.path.join(base, "off")
    root = tc.make_tree(d)
    api = ApiServer()
    try:
        a = tc.Agent(args.agent, root, os.path.join(d, "agent.log"), ["--kubeconfig", tc.write_kubeconfig(d, api),
                                                                   "--metrics-bind-address", "0",
                                                                   "--health-probe-bind-address", "0"],
                  {"NODE_NAME": "node-a", "SPINLANE_KUBE_RESYNC_MS": "1000"})
        check(tc.wait_for(lambda: [r for r in api.json("requests") if r["method"] == "PATCH"], 60),
              "without DRA: the labels are sent")
        time.sleep(1.5)  # a window in which a slice call would be wrong
        rc = a.stop()
        check(rc == 0 and not slice_requests(api) and api.json("slices") == {},
              "without DRA resources nothing touches resourceslices (rc %s)" % rc)
        b = tc.Agent(args.agent, root, os.path.join(d, "bad.log"), ["--kubeconfig", tc.write_kubeconfig(d, api),
                                                                 "--metrics-bind-address", "0",
                                                                 "--health-probe-bind-address", "0",
                                                                 "--dra-resources", "nic,gpu"],
                  {"NODE_NAME": "node-a"})
        try:
            rc = b.p.wait(60 * tc.S)
        except subprocess.TimeoutExpired:
            rc = "timeout"
        b.stop()
        check(rc not in (0, "timeout") and
              '--dra-resources: "gpu" is not a DRA resource' in b.text(),
              "a bad list is refused: %s %r" % (rc, b.text()[-300:]))
    finally:
        api.stop()


def main():
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--wrapper", default="")
    args = ap.parse_args()
    tc.WRAPPER = shlex.split(args.wrapper)
    tc.S = 20.0 if tc.WRAPPER else 1.0
    base = tempfile.mkdtemp(prefix="sl-slices-")
    try:
        test_publish(args, base)
        test_pool(args, base)
        test_off_and_bad(args, base)
    finally:
        if not os.environ.get("SL_KEEP"):
            shutil.rmtree(base, ignore_errors=True)
        else:
            print("kept " + base)
    print("%d checks, %d failed" % (testcheck.checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""The DRA DeviceClasses' CEL (issue #25 contract) and ResourceClaim-style selectors,
evaluated by the npm package @marcbachmann/cel-js (tests/helm/cel-device.mjs, the
allocator's order: class selectors, then the request's) on the ResourceSlices the agent's
own builder publishes for the fixture nodes eks-x86, aks-mana and graviton: the C test
program test-dra-slice --write (agent/dra/dra-slice.c over the fixture trees) writes them,
nothing here is written by hand. The classes' expressions are the contract's; when the
chart in this tree renders DeviceClasses (helm at hand, SPINLANE_HELM or <build>/tools),
it checks the chart's selectors are the same expressions. Skipped (77) when node or the
CEL package cannot be had.

usage: test_dra_cel.py   (SPINLANE_SOURCE_DIR, SPINLANE_BINARY_DIR from ctest;
SPINLANE_CEL_DIR: a directory holding node_modules/@marcbachmann/cel-js; SPINLANE_CHART: another
chart directory to compare)"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("SPINLANE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("SPINLANE_BINARY_DIR") or os.path.join(SRC, "build")
sys.path.insert(0, os.path.join(SRC, "tests", "support"))
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402

CLASSES = {  # DRA-CONTRACT: DeviceClasses and their selector CEL
    "dpdk-nic.spinlane.io": ['device.driver == "spinlane.io" && device.attributes["spinlane.io"].type == "dpdk-nic"'],
    "isolated-core.spinlane.io": ['device.driver == "spinlane.io" && '
                                  'device.attributes["spinlane.io"].type == "isolated-core"'],
}
A = 'device.attributes["spinlane.io"]'
REQUESTS = [
    {"name": "nic", "class": "dpdk-nic.spinlane.io", "selectors": []},
    {"name": "core", "class": "isolated-core.spinlane.io", "selectors": []},
    {"name": "ena", "class": "dpdk-nic.spinlane.io", "selectors": [A + '.kind == "ena"']},
    {"name": "mana", "class": "dpdk-nic.spinlane.io", "selectors": [A + '.kind == "mana"']},
    {"name": "nic-numa0", "class": "dpdk-nic.spinlane.io", "selectors": [A + ".numaNode == 0"]},
    {"name": "core-numa0", "class": "isolated-core.spinlane.io", "selectors": [A + ".numaNode == 0"]},
    {"name": "core-numa1", "class": "isolated-core.spinlane.io", "selectors": [A + ".numaNode == 1"]},
    {"name": "subnet", "class": "dpdk-nic.spinlane.io", "selectors": [A + '.ipv4.startsWith("10.0.1.")']},
    {"name": "pcie-root", "class": "dpdk-nic.spinlane.io",
     "selectors": ['device.attributes["resource.kubernetes.io"].pcieRoot == "pci8a3c:00"']},
    # Kubernetes' standard attributes (what another driver's devices match on)
    {"name": "std-nic-numa0", "class": "dpdk-nic.spinlane.io",
     "selectors": ['device.attributes["resource.kubernetes.io"].numaNode == 0']},
    {"name": "std-core-numa0", "class": "isolated-core.spinlane.io",
     "selectors": ['device.attributes["resource.kubernetes.io"].numaNode == 0']},
    {"name": "std-pci", "class": "dpdk-nic.spinlane.io",
     "selectors": ['device.attributes["resource.kubernetes.io"].pciBusID == "0000:00:07.0"']},
    {"name": "smt-core", "class": "isolated-core.spinlane.io", "selectors": [A + '.cpus.contains(",")']},
    # the class selector keeps cores away from a NIC-only attribute (no evaluation error)
    {"name": "jumbo", "class": "dpdk-nic.spinlane.io", "selectors": ['"mtu" in %s && %s.mtu >= 9000' % (A, A)]},
]
EKS_CORES = ["core-p0c%d" % i for i in range(2, 8)]
EXPECT = {
    "eks-x86": {"nic": ["nic-0000-00-06-0", "nic-0000-00-07-0"], "core": EKS_CORES,
                "ena": ["nic-0000-00-06-0", "nic-0000-00-07-0"], "mana": [],
                "nic-numa0": ["nic-0000-00-06-0", "nic-0000-00-07-0"], "core-numa0": EKS_CORES, "core-numa1": [],
                "subnet": ["nic-0000-00-06-0"], "pcie-root": [], "smt-core": EKS_CORES, "jumbo": [],
                "std-nic-numa0": ["nic-0000-00-06-0", "nic-0000-00-07-0"], "std-core-numa0": EKS_CORES,
                "std-pci": ["nic-0000-00-07-0"]},
    "aks-mana": {"nic": ["nic-8a3c-00-00-0"], "core": ["core-p0c1", "core-p0c2", "core-p0c3"], "ena": [],
                 "mana": ["nic-8a3c-00-00-0"], "nic-numa0": ["nic-8a3c-00-00-0"],
                 "core-numa0": ["core-p0c1", "core-p0c2", "core-p0c3"], "core-numa1": [], "subnet": [],
                 "pcie-root": ["nic-8a3c-00-00-0"], "smt-core": [], "jumbo": ["nic-8a3c-00-00-0"],
                 "std-nic-numa0": ["nic-8a3c-00-00-0"], "std-core-numa0": ["core-p0c1", "core-p0c2", "core-p0c3"],
                 "std-pci": []},
}


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(77)


def cel_dir():
    d = os.environ.get("SPINLANE_CEL_DIR")
    if d:
        return d
    d = os.path.join(BIN, "tools", "cel")
    r = subprocess.run(["bash", os.path.join(SRC, "tests", "helm", "get-cel.sh"), d], capture_output=True, text=True)
    if r.returncode != 0:
        skip("no CEL evaluator: " + r.stderr.strip())
    return d


def chart_classes():
    """The chart's DeviceClass selectors (resourceApi.mode=dra), or None when this tree's
    chart has none or helm is not at hand (never fetched here)."""
    try:
        import yaml
    except ImportError:
        return None
    helm = os.environ.get("SPINLANE_HELM") or os.path.join(BIN, "tools", "bin", "helm")
    chart = os.environ.get("SPINLANE_CHART") or os.path.join(SRC, "helm", "spinlane")
    if not os.access(helm, os.X_OK) or not os.path.exists(os.path.join(chart, "templates", "dra.yaml")):
        return None
    r = subprocess.run([helm, "template", "spinlane", chart, "-n", "spinlane", "-f",
                        os.path.join(chart, "..", "..", "tests", "helm", "values-images.yaml"),
                        "--set", "resourceApi.mode=dra"],
                       capture_output=True, text=True)
    if not check(r.returncode == 0, "helm template resourceApi.mode=dra: %s" % r.stderr.strip()):
        return None
    out = {}
    for d in yaml.safe_load_all(r.stdout):
        if d and d.get("kind") == "DeviceClass":
            out[d["metadata"]["name"]] = [s["cel"]["expression"] for s in d["spec"].get("selectors", [])]
    return out


def main():
    if not shutil.which("node"):
        skip("node is not installed: no CEL evaluator")
    cel = cel_dir()
    prog = os.path.join(BIN, "tests", "agent", "dra", "test-dra-slice")
    if not check(os.access(prog, os.X_OK), "the slice writer %s is built" % prog):
        return 1
    chart = chart_classes()
    if chart is None:
        print("the chart here renders no DeviceClasses (or helm is not at hand): the contract's expressions are "
              "evaluated")
    else:
        check(chart == CLASSES, "the chart's DeviceClass selectors are the contract's: %s" % chart)
    tmp = tempfile.mkdtemp(prefix="sl-dracel-")
    try:
        r = subprocess.run([prog, "--write", tmp], capture_output=True, text=True)
        check(r.returncode == 0, "test-dra-slice --write: %s %s" % (r.returncode, r.stderr.strip()))
        for fixture in ("eks-x86", "aks-mana", "graviton"):
            with open(os.path.join(tmp, fixture + ".json")) as f:
                sl = json.load(f)
            inp = os.path.join(tmp, fixture + "-in.json")
            with open(inp, "w") as f:
                json.dump({"slices": [sl], "classes": CLASSES, "requests": REQUESTS}, f)
            r = subprocess.run(["node", os.path.join(SRC, "tests", "helm", "cel-device.mjs"), cel, inp],
                               capture_output=True, text=True)
            if not check(r.returncode == 0, "%s: cel-device.mjs: %s" % (fixture, r.stderr.strip())):
                continue
            res = json.loads(r.stdout)
            for q in REQUESTS:
                got = res.get(q["name"], {})
                check("error" not in got, "%s %s: no evaluation error: %s" % (fixture, q["name"], got.get("error")))
                if fixture in EXPECT:
                    check(got.get("devices") == EXPECT[fixture][q["name"]],
                          "%s %s: %s, want %s" % (fixture, q["name"], got.get("devices"), EXPECT[fixture][q["name"]]))
            # every device is in exactly one class
            check(sorted(res["nic"]["devices"] + res["core"]["devices"]) ==
                  sorted(d["name"] for d in sl["spec"]["devices"]), "%s: the classes cover the slice" % fixture)
            # the claim example: one NIC and two cores, matchAttribute spinlane.io/numaNode
            numa = {d["name"]: d["attributes"]["numaNode"]["int"] for d in sl["spec"]["devices"]}
            ok = any(sum(numa[c] == numa[n] for c in res["core"]["devices"]) >= 2 for n in res["nic"]["devices"])
            check(ok, "%s: a NIC and two cores on one NUMA node can be allocated: %s" % (fixture, numa))
            # deploy/examples' claim: matchAttribute resource.kubernetes.io/numaNode (a device
            # without the attribute cannot take part); on these nodes the same sets as
            # spinlane's own numaNode, and the standard one is spinlane's where it is known
            std = {d["name"]: d["attributes"].get("resource.kubernetes.io/numaNode", {}).get("int")
                   for d in sl["spec"]["devices"]}
            check(all(std[k] == (v if v >= 0 else None) for k, v in numa.items()),
                  "%s: the standard numaNode is spinlane's where known, absent otherwise: %s" % (fixture, std))
            ok = any(std[n] is not None and sum(std[c] == std[n] for c in res["core"]["devices"]) >= 2
                     for n in res["nic"]["devices"])
            check(ok, "%s: matchAttribute resource.kubernetes.io/numaNode: a NIC and two cores: %s" % (fixture, std))
            # pciBusID: every NIC, its PCI address; no core
            for d in sl["spec"]["devices"]:
                at = d["attributes"]
                want = at.get("pciAddress")
                check(at.get("resource.kubernetes.io/pciBusID") == ({"string": want["string"]} if want else None),
                      "%s %s: pciBusID %s" % (fixture, d["name"], at.get("resource.kubernetes.io/pciBusID")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks, %d failed" % (testcheck.checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

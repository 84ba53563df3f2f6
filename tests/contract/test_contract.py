# SPDX-License-Identifier: Apache-2.0
"""End-to-end contract test between the device plugin (`spinlane-agent run`) and the
launcher (`spinlane-launch`): nothing is shared but the AllocateResponse.

For each fixture node (tests/fixtures/make-node.py: eks-x86 = ENA on vfio no-IOMMU,
graviton = ENA with an IOMMU group, aks-mana = MANA): start the agent on it, let the
kubelet stand-in ask GetPreferredAllocation and then Allocate for every healthy NIC and
two isolated cores, exactly as a kubelet would (each NIC's address from a metadata
stand-in, tests/agent/cloud/fake_imds.py, by the MAC recorded in the bind state or the
netdev's, or from a static entry of the config); build the container's view of the world
from the AllocateResponses alone (DeviceSpecs' container paths as device files, the
Mounts with a mountinfo line, a cgroup v2 with no quota whose cpuset is the granted
CPUs, the host's topology and isolated files, the envs as the launcher's environment);
run `spinlane-launch --check-only --json` on it and require the contract's checks to
pass, then `spinlane-launch -- /usr/bin/env` and compare SPINLANE_EAL_ARGS with the one
written down here. With hugetlbfs.pod_mount false (the default) the allocation carries no
mount and no SPINLANE_HUGEPAGE_DIR and the container's hugetlbfs is the pod's own
emptyDir (medium HugePages-2Mi, as the kubelet mounts it); graviton runs again with
pod_mount true, where the plugin hands out the node's shared hugetlbfs. Also: the
config's NIC selection decides what is advertised.

usage: test_contract.py --agent PATH --launch PATH --proto-dir DIR --make-node PATH
Exit 0 passed, 1 a check failed, 77 skipped (grpcio/grpc_tools missing)."""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

try:
    import grpc  # noqa: F401
    import grpc_tools  # noqa: F401
except ImportError as e:
    print("SKIP: python3 grpcio/grpc_tools missing (%s); run with /usr/bin/python3" % e)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deviceplugin"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "agent", "cloud"))
from imds_standin import FakeImds  # noqa: E402
from kubelet_standin import Kubelet, Plugin, Watcher, load_api, wait_for  # noqa: E402

NIC = "spinlane.io/dpdk-nic"
CORE = "spinlane.io/isolated-core"
NIC_SOCK = "spinlane-dpdk-nic.sock"
CORE_SOCK = "spinlane-isolated-core.sock"
POD_UID = "6f1c2a3e-0b7d-4c1e-9a55-2d3f4e5a6b7c"
MEMORY_MB = 256
CHECKS = ("allocation-env", "devices", "hugepages", "cpuset", "smt-siblings", "aeron-config")

# What each fixture's NICs must turn into on the EAL command line and as addresses:
# written down here, from make-node.py's fixtures and the metadata below, not computed by
# either side. eks-x86: its ENAs are on vfio-pci with their MACs in the bind state (as the
# agent records them when it binds); 06.0's address comes from AWS IMDS, 07.0's from a
# static entry by MAC that overrides what IMDS says. graviton: no MAC on record, a static
# entry by PCI address. aks-mana: Azure IMDS, by the netdev's MAC.
BIND_MACS = {"eks-x86": {"0000:00:06.0": "0a:1b:2c:3d:4e:06", "0000:00:07.0": "0a:1b:2c:3d:4e:07"}}
METADATA = [("aws", "0a:1b:2c:3d:4e:06", ["10.0.6.10"], "10.0.6.0/24"),
            ("aws", "0a:1b:2c:3d:4e:07", ["10.0.7.10"], "10.0.7.0/24"),
            ("azure", "00:0d:3a:aa:00:02", "10.1.0.4", "10.1.0.0", "24")]
FIXTURES = {
    "eks-x86": {"nics": ["0000:00:06.0", "0000:00:07.0"],
                "devargs": ["0000:00:06.0", "0000:00:07.0"],
                "devices": {"/dev/vfio/vfio": "/dev/vfio/vfio", "/dev/vfio/0": "/dev/vfio/noiommu-0",
                            "/dev/vfio/1": "/dev/vfio/noiommu-1"},
                "config": {"addresses": {"static": [{"mac": "0a:1b:2c:3d:4e:07", "ipv4": "192.168.7.7/24",
                                                     "gateway": "192.168.7.1"}]}},
                "ipv4": ["10.0.6.10/24", "192.168.7.7/24"], "gateway": ["10.0.6.1", "192.168.7.1"]},
    "graviton": {"nics": ["0000:00:06.0"], "devargs": ["0000:00:06.0"],
                 "devices": {"/dev/vfio/vfio": "/dev/vfio/vfio", "/dev/vfio/5": "/dev/vfio/5"},
                 "config": {"addresses": {"static": [{"pci": "0000:00:06.0", "ipv4": "10.2.0.5/20"}]}},
                 "ipv4": ["10.2.0.5/20"], "gateway": [""]},
    "aks-mana": {"nics": ["8a3c:00:00.0"], "devargs": ["8a3c:00:00.0,mac=00:0d:3a:aa:00:02"],
                 "devices": {"/dev/infiniband/uverbs1": "/dev/infiniband/uverbs1"},
                 "config": {}, "ipv4": ["10.1.0.4/24"], "gateway": ["10.1.0.1"]},
}

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402


def cpulist_parse(s):
    out = set()
    for part in s.strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def cpulist(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def read(root, rel):
    with open(os.path.join(root, rel.lstrip("/"))) as f:
        return f.read()


def write(root, rel, data):
    p = os.path.join(root, rel.lstrip("/"))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(data)


class Node:
    """A fixture node with the agent and the kubelet stand-in running on it."""
    count = 0

    def __init__(self, args, api, tmp, name, config):
        Node.count += 1
        tmp = os.path.join(tmp, "n%d" % Node.count)   # a fresh node each time
        os.makedirs(tmp)
        self.root = os.path.join(tmp, name)
        r = subprocess.run([sys.executable, args.make_node, tmp, name], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("make-node.py %s failed: %s" % (name, r.stderr))
        macs = BIND_MACS.get(name)
        if macs:  # as the agent records them before it unbinds a NIC
            write(self.root, "/var/lib/spinlane/bind-state.json", json.dumps({
                "version": 1, "count": len(macs), "nics": [
                    {"pci": pci, "original_driver": "ena", "driver": "vfio-pci", "netdev": "", "mac": mac}
                    for pci, mac in sorted(macs.items())]}))
        self.cfg = os.path.join(tmp, name + "-config.json")
        with open(self.cfg, "w") as f:
            json.dump(config, f)
        self.kubelet = Kubelet(api, self.root)
        self.kubelet.start()
        self.logpath = os.path.join(tmp, name + "-agent.log")
        self.log = open(self.logpath, "w")
        self.agent = subprocess.Popen([args.agent, "run", "--root", self.root, "--config", self.cfg],
                                      stdout=self.log, stderr=subprocess.STDOUT)
        try:
            self.kubelet.wait_registrations(2, 30)
        except TimeoutError:
            self.agent.kill()
            self.kubelet.stop()
            raise SystemExit("%s: the agent did not register:\n%s" % (name, open(self.logpath).read()))
        self.nic = Plugin(api, self.root, NIC_SOCK)
        self.core = Plugin(api, self.root, CORE_SOCK)
        self.nic_watch = Watcher(self.nic)
        self.core_watch = Watcher(self.core)

    def devices(self, watch):
        """The advertised devices once every one is Healthy (a NIC is Unhealthy until its
        address is known); else the last list."""
        got = watch.wait(lambda d: all(h == "Healthy" for h, _ in d.values()), 30)
        if got:
            return got[1]
        return watch.lists[-1][1] if watch.lists else None

    def stop(self):
        for w in (self.nic_watch, self.core_watch):
            w.cancel()
        self.nic.close()
        self.core.close()
        self.agent.send_signal(signal.SIGTERM)
        try:
            rc = self.agent.wait(30)
        except subprocess.TimeoutExpired:
            self.agent.kill()
            rc = "timeout"
        self.kubelet.stop()
        self.log.close()
        if not check(rc == 0, "agent exits 0 on SIGTERM (got %s)" % rc):
            print(open(self.logpath).read())


def kubelet_allocate(plugin, devices, n):
    """GetPreferredAllocation over the healthy devices, then Allocate what it preferred."""
    healthy = sorted(i for i, (h, _) in devices.items() if h == "Healthy")
    chosen = plugin.prefer(healthy, [], n)
    check(len(chosen) == n and set(chosen) <= set(healthy),
          "preferred allocation of %d from %s: %s" % (n, healthy, chosen))
    return chosen, plugin.alloc(chosen).container_responses[0]


def container_view(node_root, view, nic_resp, core_resp):
    """The container's /proc, /sys and /dev, from the AllocateResponses and the node."""
    env = dict(nic_resp.envs)
    env.update(core_resp.envs)
    check(not core_resp.devices and not core_resp.mounts, "cores come without devices or mounts")
    for d in list(nic_resp.devices) + list(core_resp.devices):
        # host paths are the host's own: under the fake node they live below its root
        check(os.path.exists(os.path.join(node_root, d.host_path.lstrip("/"))),
              "DeviceSpec host_path %s exists on the node" % d.host_path)
        check(d.permissions == "rw", "DeviceSpec %s permissions rw (got %r)" % (d.container_path, d.permissions))
        write(view, d.container_path, "")
    mountinfo = "70 60 0:30 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate\n"
    node_mounts = read(node_root, "/proc/mounts")
    if not nic_resp.mounts:
        # hugetlbfs.pod_mount false: the pod's own emptyDir of medium HugePages-2Mi at
        # /dev/hugepages (deploy/examples/aeron-media-driver.yaml), a hugetlbfs of its
        # own that the kubelet mounted with pagesize=2M
        os.makedirs(os.path.join(view, "dev/hugepages"), exist_ok=True)
        mountinfo += "89 60 0:49 / /dev/hugepages rw,relatime - hugetlbfs nodev rw,pagesize=2M\n"
    for i, m in enumerate(nic_resp.mounts):
        host = [ln.split() for ln in node_mounts.splitlines() if ln.split()[1:2] == [m.host_path]]
        check(host and host[0][2] == "hugetlbfs", "Mount host_path %s is a hugetlbfs on the node" % m.host_path)
        opts = host[0][3] if host else "rw"
        check(not m.read_only, "hugetlbfs mount %s is read-write" % m.container_path)
        os.makedirs(os.path.join(view, m.container_path.lstrip("/")), exist_ok=True)
        mountinfo += "%d 60 0:%d / %s rw,relatime - hugetlbfs nodev %s\n" % (90 + i, 50 + i, m.container_path, opts)
    write(view, "/proc/self/mountinfo", mountinfo)
    for rel in ("/proc/meminfo", "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
                "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
                "/sys/devices/system/cpu/online", "/sys/devices/system/cpu/isolated",
                "/sys/devices/system/cpu/nohz_full"):
        write(view, rel, read(node_root, rel))
    cpus = cpulist_parse(env.get("SPINLANE_ISOLATED_CPUS", ""))
    check(cpus, "SPINLANE_ISOLATED_CPUS is a CPU list: %r" % env.get("SPINLANE_ISOLATED_CPUS"))
    for c in cpus:
        topo = "/sys/devices/system/cpu/cpu%d/topology" % c
        for f in os.listdir(os.path.join(node_root, topo.lstrip("/"))):
            write(view, topo + "/" + f, read(node_root, topo + "/" + f))
    # a MANA NIC's netdev as the chart's driver pod sees it: the host's /sys/devices mounted
    # read-only (net_mana reads <device>/net/<if>/address; the pod's own sysfs lists none)
    for i, bdf in enumerate(filter(None, env.get("SPINLANE_DPDK_NICS", "").split(","))):
        if env.get("SPINLANE_NIC_%d_KIND" % i) != "mana":
            continue
        net = "/sys/bus/pci/devices/%s/net" % bdf
        for ifname in os.listdir(os.path.join(node_root, net.lstrip("/"))):
            write(view, "%s/%s/address" % (net, ifname), read(node_root, "%s/%s/address" % (net, ifname)))
    cl = cpulist(cpus)
    write(view, "/proc/self/cgroup", "0::/\n")
    write(view, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n")
    write(view, "/sys/fs/cgroup/cpu.max", "max 100000\n")
    write(view, "/sys/fs/cgroup/cpu.stat", "usage_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n")
    write(view, "/sys/fs/cgroup/cpuset.cpus.effective", cl + "\n")
    write(view, "/sys/fs/cgroup/hugetlb.2MB.max", "%d\n" % (512 * 2 * 1024 * 1024))
    write(view, "/sys/fs/cgroup/hugetlb.2MB.current", "0\n")
    write(view, "/proc/self/status", "Name:\tspinlane-launch\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0\n" % cl)
    write(view, "/proc/self/limits",
          "Limit                     Soft Limit           Hard Limit           Units     \n"
          "Max locked memory         unlimited            unlimited            bytes     \n")
    # the pod's own variables (deploy/examples/aeron-media-driver.yaml)
    env.update({"SPINLANE_POD_UID": POD_UID, "SPINLANE_DPDK_MEMORY_MB": str(MEMORY_MB), "AERON_DIR": "/dev/shm/aeron"})
    return env, cpus


def launch(args, view, env, extra):
    # a fake node tree carries no DPDK: the datapath check is tested on veths (test-datapath-veth)
    e = {"PATH": "/usr/bin:/bin", "SPINLANE_DATAPATH": "off"}
    e.update(env)
    return subprocess.run([args.launch, "--root", view] + extra, capture_output=True, text=True, env=e, timeout=60)


def test_fixture(args, api, tmp, name, shared=False):
    """shared: hugetlbfs.pod_mount true (the node's hugetlbfs mounted by the plugin)."""
    want = FIXTURES[name]
    config = dict(want["config"], hugetlbfs={"pod_mount": True}) if shared else want["config"]
    node = Node(args, api, tmp, name, config)
    if shared:
        name += " (pod_mount true)"
    try:
        nics = node.devices(node.nic_watch)
        cores = node.devices(node.core_watch)
        check(nics is not None and sorted(nics) == want["nics"],
              "%s: advertised NICs %s, want %s" % (name, sorted(nics or {}), want["nics"]))
        if not nics or not cores:
            return
        nic_ids, nic_resp = kubelet_allocate(node.nic, nics, len(want["nics"]))
        core_ids, core_resp = kubelet_allocate(node.core, cores, 2)
        specs = {d.container_path: d.host_path for d in nic_resp.devices}
        check(specs == want["devices"], "%s: DeviceSpecs %s, want %s" % (name, specs, want["devices"]))
        # each NIC's address, in SPINLANE_DPDK_NICS order
        env_nic = dict(nic_resp.envs)
        got_addr = [(env_nic.get("SPINLANE_NIC_%d_IPV4" % i), env_nic.get("SPINLANE_NIC_%d_GATEWAY" % i))
                    for i in range(len(want["nics"]))]
        check(got_addr == list(zip(want["ipv4"], want["gateway"])),
              "%s: SPINLANE_NIC_<i>_IPV4/_GATEWAY %s, want %s" % (name, got_addr, list(zip(want["ipv4"], want["gateway"]))))
        if shared:
            check(len(nic_resp.mounts) == 1 and nic_resp.mounts[0].host_path == "/dev/hugepages" and
                  nic_resp.mounts[0].container_path == "/dev/hugepages" and
                  nic_resp.envs.get("SPINLANE_HUGEPAGE_DIR") == "/dev/hugepages",
                  "%s: the node's hugetlbfs mounted and named (got %s)" % (name, list(nic_resp.mounts)))
        else:
            check(not nic_resp.mounts and "SPINLANE_HUGEPAGE_DIR" not in nic_resp.envs,
                  "%s: pod_mount false: no mount, no SPINLANE_HUGEPAGE_DIR (got %s)" % (name, list(nic_resp.mounts)))
        view = os.path.join(tmp, name.split()[0] + ("-shared" if shared else "") + "-container")
        env, cpus = container_view(node.root, view, nic_resp, core_resp)
        if args.bindings_lib:
            env["SPINLANE_AERON_LIBRARY"] = args.bindings_lib
        check(sorted(env.get("SPINLANE_ISOLATED_CORES", "").split(",")) == sorted(core_ids),
              "%s: SPINLANE_ISOLATED_CORES %r names the granted cores %s" % (
                  name, env.get("SPINLANE_ISOLATED_CORES"), core_ids))

        r = launch(args, view, env, ["--check-only", "--json", "--", "/bin/true"])
        verdicts = {}
        for line in r.stdout.splitlines():
            try:
                v = json.loads(line)
            except ValueError:
                continue
            if isinstance(v, dict) and "check" in v:
                verdicts[v["check"]] = v
        for c in CHECKS:
            v = verdicts.get(c)
            check(v is not None and v["verdict"] == "pass", "%s: launcher check %s passes: %s" % (
                name, c, json.dumps(v) if v else "missing"))
        check(r.returncode == 0, "%s: --check-only exits 0 (got %d)\n%s%s" % (name, r.returncode, r.stdout, r.stderr))

        # Every variable the plugin sends must be one the launcher reads: spoil each in
        # turn and the launcher must fail a check naming it (a renamed variable on either
        # side is then ignored, and this fails).
        sent = sorted(set(nic_resp.envs) | set(core_resp.envs))
        check(len(sent) >= 9, "%s: the plugin sends the NIC and core variables: %s" % (name, sent))
        for var in sent:
            spoiled = dict(env)
            spoiled[var] = "spoiled!"
            r = launch(args, view, spoiled, ["--check-only", "--json", "--", "/bin/true"])
            named = [ln for ln in r.stdout.splitlines() if '"verdict":"fail"' in ln and var in ln]
            check(r.returncode == 1 and named, "%s: the launcher reads %s (spoiled, it must fail a check naming "
                  "it; exit %d)" % (name, var, r.returncode))

        r = launch(args, view, env, ["--", "/usr/bin/env"])
        got = dict(ln.split("=", 1) for ln in r.stdout.splitlines() if "=" in ln and not ln.startswith("{"))
        huge = env.get("SPINLANE_HUGEPAGE_DIR", "/dev/hugepages")  # the launcher's default
        check(huge == "/dev/hugepages", "%s: SPINLANE_HUGEPAGE_DIR=%r" % (name, huge))
        eal = "-l %s --main-lcore %d --file-prefix spinlane-%s --huge-dir %s --socket-mem %d%s" % (
            cpulist(cpus), min(cpus), POD_UID, huge, MEMORY_MB, "".join(" -a " + d for d in want["devargs"]))
        check(r.returncode == 0 and got.get("SPINLANE_EAL_ARGS") == eal,
              "%s: SPINLANE_EAL_ARGS\n  got  %r\n  want %r\n(exit %d; %s)" % (
                  name, got.get("SPINLANE_EAL_ARGS"), eal, r.returncode, r.stderr.strip()))
        # the allocation's addresses handed on to the bypass driver: one NIC carries both
        # roles, two have one each (sender the first, receiver the second)
        roles = {"SENDER": 0, "RECEIVER": 1 if len(want["nics"]) > 1 else 0}
        for role, i in roles.items():
            check(got.get("SPINLANE_%s_IPV4" % role) == want["ipv4"][i] and
                  got.get("SPINLANE_%s_GATEWAY" % role, "") == want["gateway"][i],
                  "%s: the driver gets SPINLANE_%s_IPV4=%r GATEWAY=%r, want %r %r" % (
                      name, role, got.get("SPINLANE_%s_IPV4" % role), got.get("SPINLANE_%s_GATEWAY" % role),
                      want["ipv4"][i], want["gateway"][i]))
        print("%s: %d NIC(s), cores %s, CPUs %s, %s" % (name, len(nic_ids), ",".join(core_ids), cpulist(cpus),
                                                        "FAILED" if failures else "launcher checks pass, EAL args as agreed"),
              flush=True)
    finally:
        node.stop()


def test_selection(args, api, tmp):
    """The config selects only MANA: the vfio-bound ENAs of eks-x86 are not advertised;
    selecting one ENA by PCI address advertises that one only."""
    for config, want in (({"nics": {"kinds": ["mana"]}}, []),
                         ({"nics": {"pci": ["0000:00:07.0"]}}, ["0000:00:07.0"]),
                         ({"nics": {"max": 1}}, ["0000:00:06.0"])):
        node = Node(args, api, tmp, "eks-x86", config)
        try:
            nics = node.devices(node.nic_watch)
            check(nics is not None and sorted(nics) == want,
                  "config %s: advertised NICs %s, want %s" % (json.dumps(config), sorted(nics or {}), want))
        finally:
            node.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--launch", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--make-node", required=True)
    ap.add_argument("--bindings-lib", default="", help="the bindings library spinlane-launch checks (a stand-in)")
    args = ap.parse_args()
    api, protodir = load_api(args.proto_dir)
    tmp = tempfile.mkdtemp(prefix="sl-contract-")
    imds = FakeImds()  # every agent here inherits SPINLANE_IMDS_URL
    for m in METADATA:
        imds.aws(*m[1:]) if m[0] == "aws" else imds.azure(*m[1:])
    os.environ["SPINLANE_IMDS_URL"] = imds.url
    try:
        for name in FIXTURES:
            test_fixture(args, api, tmp, name)
        test_fixture(args, api, tmp, "graviton", shared=True)
        test_selection(args, api, tmp)
    finally:
        imds.close()
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(protodir, ignore_errors=True)
    print("%d checks, %d failed" % (testcheck.checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

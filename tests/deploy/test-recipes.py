#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks of the node pool recipes deploy/eks/ and deploy/aks/ (docs/install-eks.md,
docs/install-aks.md) against the rules that make a node join or refuse to.

    test-recipes.py eks|aks

The files are parsed (YAML, JSON, the MIME user data, bash -n) and the kubelet rules the
guides rely on are written out below, each with its source; every rule is also run on a
config that breaks it (the NodeConfig the old guide shipped among them), so a rule that
cannot fail fails the test. Exit 0 pass, 1 fail, 77 skipped (python3-yaml missing).
"""

import copy
import email
import json
import os
import re
import subprocess
import sys

SKIP = 77
SRC = os.environ.get("SPINLANE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EKS = os.path.join(SRC, "deploy", "eks")
AKS = os.path.join(SRC, "deploy", "aks")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from testcheck import check, failures  # noqa: E402


def need_yaml():
    try:
        import yaml  # Debian python3-yaml
        return yaml
    except ImportError:
        print("SKIP: python3-yaml is not installed (apt-get install python3-yaml)")
        sys.exit(SKIP)


def mib(q):
    """A memory quantity in MiB (exact: Ki/Mi/Gi and plain bytes that divide), else None."""
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti)?", str(q))
    if not m:
        return None
    b = int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[m.group(2)]
    return b / (1 << 20)


def cpus(s):
    out = set()
    for part in filter(None, str(s).split(",")):
        a, _, b = part.partition("-")
        out |= set(range(int(a), int(b or a) + 1))
    return out


# ---------------------------------------------------------------- EKS rules

# What nodeadm puts into the kubelet config before it merges the NodeConfig's
# spec.kubelet.config over it (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go:
# defaultKubeletSubConfig's evictionHard, withDefaultReservedResources' cgroups, maxPods
# from the instance's ENIs and kubeReserved memory getMemoryMebibytesToReserve =
# 11 * maxPods + 255; the e2e case kubelet-user-kube-reserved shows maxPods 100 -> 1355Mi).
NODEADM_CGROUPS = {"kubeReservedCgroup": "/runtime", "systemReservedCgroup": "/system"}
NODEADM_EVICTION_MEMORY = "100Mi"

# EC2 instance types the recipe is written for: (vCPUs, threads per core, NUMA nodes,
# ENIs, IPv4 addresses per ENI), from the EC2 instance type documentation
# (`aws ec2 describe-instance-types` NetworkInfo.MaximumNetworkInterfaces /
# Ipv4AddressesPerInterface); eni-max-pods.txt gives c7i.4xlarge 8 * (30 - 1) + 2 = 234.
INSTANCES = {"c7i.4xlarge": (16, 2, 1, 8, 30), "c7gn.4xlarge": (16, 1, 1, 8, 30)}


def nodeadm_kubelet(kc, instance):
    """The kubelet config nodeadm writes: its defaults, then the NodeConfig's keys (a map
    key by key, as nodeadm's merge does)."""
    _, _, _, enis, ips = INSTANCES[instance]
    out = dict(NODEADM_CGROUPS)
    max_pods = enis * (ips - 1) + 2
    out["maxPods"] = max_pods
    out["evictionHard"] = {"memory.available": NODEADM_EVICTION_MEMORY, "nodefs.available": "10%", "nodefs.inodesFree": "5%"}
    out["kubeReserved"] = {"cpu": "70m", "ephemeral-storage": "1Gi", "memory": "%dMi" % (11 * max_pods + 255)}
    for k, v in kc.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = dict(out[k], **v)
        else:
            out[k] = v
    if "maxPods" in kc and "memory" not in kc.get("kubeReserved", {}):
        out["kubeReserved"]["memory"] = "%dMi" % (11 * kc["maxPods"] + 255)
    return out


def rule_reserved_cpus(kc):
    """kubernetes pkg/kubelet/apis/config/validation/validation.go: "can't use
    --reserved-cpus with --system-reserved-cgroup or --kube-reserved-cgroup"; nodeadm sets
    both, so the NodeConfig sets them to "" (nodeadm e2e case kubelet-config-set-empty,
    awslabs/amazon-eks-ami#1334, #2794). kc: the merged config."""
    if not kc.get("reservedSystemCPUs"):
        return []
    return ["reservedSystemCPUs with %s=%r: the kubelet refuses to start" % (k, kc[k])
            for k in ("kubeReservedCgroup", "systemReservedCgroup") if kc.get(k)]


def rule_memory_manager(kc):
    """kubernetes pkg/kubelet/cm/memorymanager/memory_manager.go validateReservedMemory:
    with the Static policy the sum of reservedMemory must equal the Node Allocatable
    reservation, kubeReserved + systemReserved + evictionHard memory.available ("the total
    amount ... is not equal to the value ... determined by Node Allocatable feature");
    the Kubernetes task "Utilizing the NUMA-aware Memory Manager", Reserved memory flag."""
    if kc.get("memoryManagerPolicy") != "Static":
        return []
    res = kc.get("reservedMemory") or []
    if not res:
        return ["memoryManagerPolicy Static without reservedMemory"]
    total = sum(mib(r.get("limits", {}).get("memory", "0")) or 0 for r in res)
    want = ((mib(kc.get("kubeReserved", {}).get("memory", "0")) or 0) +
            (mib(kc.get("systemReserved", {}).get("memory", "0")) or 0) +
            (mib(kc.get("evictionHard", {}).get("memory.available", "0")) or 0))
    if total != want:
        return ["reservedMemory totals %gMi, kubeReserved + systemReserved + evictionHard memory is %gMi" % (total, want)]
    return []


def rule_max_pods(raw, instance, unmanaged):
    """maxPods must be set by the NodeConfig: nodeadm computes ENIs x (IPv4 per ENI - 1) + 2
    (getMaxPodsFromENIInfo) counting every ENI, and the VPC CNI uses none of the
    no_manage ones (aws/amazon-vpc-cni-k8s README), so the computed value overstates what
    the node can hold; and it must fit the managed ENIs."""
    if "maxPods" not in raw:
        return ["maxPods not set: nodeadm's value counts the no_manage ENI"]
    _, _, _, enis, ips = INSTANCES[instance]
    limit = (enis - unmanaged) * (ips - 1) + 2
    if not 1 <= raw["maxPods"] <= limit:
        return ["maxPods %s is more than (%d - %d) x (%d - 1) + 2 = %d" % (raw["maxPods"], enis, unmanaged, ips, limit)]
    return []


def rule_cpu_manager(kc, instance):
    """docs/launch.md, kubelet-pinned: static CPU manager, full-pcpus-only, and
    reservedSystemCPUs made of whole cores (siblings n and n + vCPUs/2 on these x86 types)."""
    out = []
    if kc.get("cpuManagerPolicy") != "static" or kc.get("cpuManagerPolicyOptions", {}).get("full-pcpus-only") != "true":
        out.append("no static CPU manager with full-pcpus-only")
    vcpus, tpc, _, _, _ = INSTANCES[instance]
    res = cpus(kc.get("reservedSystemCPUs", ""))
    if not res or not res <= set(range(vcpus)):
        out.append("reservedSystemCPUs %r not CPUs of a %s" % (kc.get("reservedSystemCPUs"), instance))
    if tpc == 2 and any((c + vcpus // 2) % vcpus not in res for c in res):
        out.append("reservedSystemCPUs %r splits a core" % kc.get("reservedSystemCPUs"))
    if kc.get("topologyManagerPolicy") != "single-numa-node":
        out.append("topologyManagerPolicy is not single-numa-node")
    return out


def eks_rules(raw, instance, unmanaged=1):
    kc = nodeadm_kubelet(raw, instance)
    numa = INSTANCES[instance][2]
    out = rule_reserved_cpus(kc) + rule_memory_manager(kc) + rule_max_pods(raw, instance, unmanaged) + rule_cpu_manager(kc, instance)
    for r in kc.get("reservedMemory") or []:
        if not 0 <= r.get("numaNode", -1) < numa:
            out.append("reservedMemory numaNode %s: a %s has %d NUMA node(s)" % (r.get("numaNode"), instance, numa))
    return out


# The kubelet config of the NodeConfig the guide shipped before the recipe (it never
# joined): each rule must refuse it.
OLD_GUIDE = {"cpuManagerPolicy": "static", "cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
             "reservedSystemCPUs": "0,8", "topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod",
             "memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]}


def rule_security_groups(lt):
    """EKS user guide, "Customize managed nodes with launch templates": with security
    groups in the launch template EKS adds no cluster security group, and nodes without the
    rules it carries cannot join. Every interface must carry the cluster security group
    (the placeholder create-nodegroup.sh fills from describe-cluster)."""
    out = []
    for n in lt.get("NetworkInterfaces", []):
        g = n.get("Groups")
        if g is not None and "CLUSTER_SECURITY_GROUP" not in g:
            out.append("interface %s: security groups %s without the cluster security group" % (n.get("DeviceIndex"), g))
    if lt.get("SecurityGroupIds") and "CLUSTER_SECURITY_GROUP" not in lt["SecurityGroupIds"]:
        out.append("SecurityGroupIds %s without the cluster security group" % lt["SecurityGroupIds"])
    return out


def kargs_of(script):
    m = re.search(r'^KARGS="([^"]*)"', script, re.M)
    return m.group(1).split() if m else []


def rule_kargs(kargs, kc, instance):
    """The user data's kernel arguments against the NodeConfig: isolcpus, nohz_full and
    rcu_nocbs are every CPU but reservedSystemCPUs (the CPU manager hands out isolated
    cores only), irqaffinity is reservedSystemCPUs, and 2 MiB pages are reserved at boot
    (kubernetes#111757: the kubelet counts hugepages only when it starts)."""
    out = []
    vcpus = INSTANCES[instance][0]
    res = cpus(kc.get("reservedSystemCPUs", ""))
    want = set(range(vcpus)) - res
    args = dict(a.split("=", 1) for a in kargs if "=" in a)
    for k in ("isolcpus", "nohz_full", "rcu_nocbs"):
        if k not in args or cpus(args[k]) != want:
            out.append("%s=%s is not every CPU but reservedSystemCPUs (%s)" % (k, args.get(k), sorted(want)))
    if "irqaffinity" not in args or cpus(args["irqaffinity"]) != res:
        out.append("irqaffinity=%s is not reservedSystemCPUs" % args.get("irqaffinity"))
    if args.get("hugepagesz") != "2M" or not args.get("hugepages", "0").isdigit() or int(args.get("hugepages", "0")) < 1:
        out.append("no 2 MiB hugepages reserved at boot")
    return out


STUBS = {
    # IMDS: two ENIs, the DPDK one at device index 1
    "curl": r'''#!/bin/bash
echo "curl $*" >>"$CALLS"
url=
for a in "$@"; do case "$a" in http://*) url=$a ;; esac; done
case "$url" in
  */api/token) echo TOKEN ;;
  */placement/region) echo us-east-1 ;;
  */network/interfaces/macs/) printf '0a:00:00:00:00:05/\n0a:00:00:00:00:06/\n' ;;
  */macs/0a:00:00:00:00:05/device-number) echo 0 ;;
  */macs/0a:00:00:00:00:06/device-number) echo 1 ;;
  */macs/0a:00:00:00:00:05/interface-id) echo eni-primary ;;
  */macs/0a:00:00:00:00:06/interface-id) echo eni-dpdk ;;
  *) exit 22 ;;
esac
''',
    "uname": "#!/bin/bash\necho 6.1.150-174.273.amzn2023.x86_64\n",
    # grubby: records the arguments where the next boot's /proc/cmdline comes from
    "grubby": r'''#!/bin/bash
echo "grubby $*" >>"$CALLS"
for a in "$@"; do case "$a" in --args=*) echo "${a#--args=}" >>"$SPINLANE_TEST_ROOT/boot/grubby-args" ;; esac; done
''',
    # get-vfio-with-wc.sh's result: the stock modules kept as *_no_wc
    "git": r'''#!/bin/bash
echo "git $*" >>"$CALLS"
if [ "$1" = clone ]; then
  mkdir -p "$3/userspace/dpdk/enav2-vfio-patch"
  cat >"$3/userspace/dpdk/enav2-vfio-patch/get-vfio-with-wc.sh" <<'S'
echo "get-vfio-with-wc.sh" >>"$CALLS"
d=$SPINLANE_TEST_ROOT/lib/modules/6.1.150-174.273.amzn2023.x86_64/kernel/drivers/vfio/pci
mkdir -p "$d" && touch "$d/vfio-pci.ko.xz_no_wc"
S
fi
''',
}
RECORDERS = ("aws", "systemctl", "networkctl", "ip", "modprobe", "dnf", "reboot", "shutdown", "depmod", "make")


def run_user_data(script, root, stubs):
    env = dict(os.environ, SPINLANE_TEST_ROOT=root, CALLS=os.path.join(root, "calls.log"),
               PATH=stubs + ":/usr/bin:/bin")
    r = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    try:
        with open(os.path.join(root, "calls.log")) as f:
            calls = f.read().splitlines()
        os.unlink(os.path.join(root, "calls.log"))
    except FileNotFoundError:
        calls = []
    return r, calls


def test_user_data_script(script, kargs, what):
    """The user data's script run against a host tree with stand-in tools (each records
    its call): a first boot, the boot after its reboot, and a node whose bootloader ignored
    grubby (no second reboot)."""
    import shutil
    import tempfile
    # a script that does not write under SPINLANE_TEST_ROOT would write this machine's /etc
    if not check(re.search(r'^R=\$\{SPINLANE_TEST_ROOT:-\}$', script, re.M) is not None,
                 "%s: the script takes no SPINLANE_TEST_ROOT: not run" % what):
        return
    tmp = tempfile.mkdtemp(prefix="spinlane-userdata-")
    try:
        stubs = os.path.join(tmp, "bin")
        root = os.path.join(tmp, "root")
        os.makedirs(stubs)
        for name, body in STUBS.items():
            with open(os.path.join(stubs, name), "w") as f:
                f.write(body)
        for name in RECORDERS:
            with open(os.path.join(stubs, name), "w") as f:
                f.write('#!/bin/bash\necho "%s $*" >>"$CALLS"\n' % name)
        for name in os.listdir(stubs):
            os.chmod(os.path.join(stubs, name), 0o755)
        for d in ("proc", "boot", "etc/modprobe.d", "etc/modules-load.d", "run/systemd/network", "var/lib", "var/tmp",
                  "lib/modules/6.1.150-174.273.amzn2023.x86_64/kernel/drivers/vfio/pci"):
            os.makedirs(os.path.join(root, d))
        boot = "BOOT_IMAGE=(hd0,gpt1)/boot/vmlinuz root=UUID=0b7c console=ttyS0 nvme_core.io_timeout=4294967295"
        with open(os.path.join(root, "proc/cmdline"), "w") as f:
            f.write(boot + "\n")
        nodeadm_net = os.path.join(root, "run/systemd/network/70-eks-ens6.network")
        with open(nodeadm_net, "w") as f:
            f.write("[Match]\nName=ens6\n[Network]\nDHCP=yes\n")

        # first boot
        r, calls = run_user_data(script, root, stubs)
        print("%s, first boot: exit %d, calls %s" % (what, r.returncode, [c for c in calls if not c.startswith("curl")]))
        check(r.returncode == 0, "%s: the script failed on a first boot: %s" % (what, r.stderr[-2000:]))
        called = lambda prefix: [i for i, c in enumerate(calls) if c.startswith(prefix)]
        check(called("aws ec2 create-tags --region us-east-1 --resources eni-dpdk --tags Key=node.k8s.amazonaws.com/no_manage,Value=true"),
              "%s: the ENI at device index 1 is not tagged no_manage" % what)
        check(not any("eni-primary" in c for c in calls), "%s: the primary ENI was touched" % what)
        unit = os.path.join(root, "etc/systemd/network/10-spinlane-dpdk.network")
        check(os.path.exists(unit) and "Unmanaged=yes" in open(unit).read() and "Name=ens6" in open(unit).read(),
              "%s: no networkd file that leaves ens6 unmanaged" % what)
        check(not os.path.exists(nodeadm_net), "%s: nodeadm's 70-eks-ens6.network (DHCP) is still there" % what)
        check(called("networkctl reload") and called("ip addr flush dev ens6"),
              "%s: the DPDK ENI's DHCP address is not flushed after networkd lets go of it" % what)
        if called("networkctl reload") and called("ip addr flush dev ens6"):
            check(called("networkctl reload")[0] < called("ip addr flush dev ens6")[0],
                  "%s: the address is flushed before networkd lets go of the ENI (it would lease it again)" % what)
        check(called("get-vfio-with-wc.sh") or called("modprobe igb_uio wc_activate=1"),
              "%s: no write-combining driver for ENA LLQ (get-vfio-with-wc.sh or igb_uio wc_activate=1)" % what)
        check(called("modprobe vfio enable_unsafe_noiommu_mode=1") and called("modprobe vfio-pci"),
              "%s: vfio-pci is not loaded in no-IOMMU mode" % what)
        if called("get-vfio-with-wc.sh") and called("modprobe vfio-pci"):
            check(called("get-vfio-with-wc.sh")[0] < called("modprobe vfio-pci")[0],
                  "%s: stock vfio-pci is loaded before the write-combining build replaces it" % what)
        g = called("grubby --update-kernel=ALL --args=")
        check(len(g) == 1 and calls[g[0]] == "grubby --update-kernel=ALL --args=" + " ".join(kargs),
              "%s: the kernel arguments are not set once with grubby --update-kernel=ALL" % what)
        rb = called("systemctl --no-block reboot") + called("reboot") + called("shutdown -r")
        check(len(rb) == 1 and rb[0] == len(calls) - 1, "%s: not exactly one reboot, as the last step" % what)
        mask = called("systemctl mask --runtime nodeadm-run.service")
        check(mask and rb and mask[0] < rb[0], "%s: the kubelet (nodeadm-run.service) may start before the reboot" % what)
        check(os.path.exists(os.path.join(root, "var/lib/spinlane/kargs-reboot")), "%s: no reboot marker" % what)

        # the boot after the reboot: the arguments are on the command line; no build, no reboot
        if not check(os.path.exists(os.path.join(root, "boot/grubby-args")), "%s: grubby set no arguments" % what):
            return
        with open(os.path.join(root, "boot/grubby-args")) as f:
            added = f.read().split()
        with open(os.path.join(root, "proc/cmdline"), "w") as f:
            f.write(" ".join([boot] + added) + "\n")
        with open(nodeadm_net, "w") as f:  # nodeadm writes it again at every boot
            f.write("[Match]\nName=ens6\n[Network]\nDHCP=yes\n")
        r, calls = run_user_data(script, root, stubs)
        print("%s, after the reboot: exit %d, calls %s" % (what, r.returncode, [c for c in calls if not c.startswith("curl")]))
        check(r.returncode == 0, "%s: the script failed after the reboot: %s" % (what, r.stderr[-2000:]))
        check(not called("grubby") and not called("systemctl --no-block reboot") and not called("reboot")
              and not called("systemctl mask"), "%s: a second run sets arguments or reboots again" % what)
        check(not called("get-vfio-with-wc.sh") and not called("dnf"), "%s: the write-combining vfio is built again" % what)

        # a bootloader that ignored grubby: the marker stops a reboot loop, the node joins
        with open(os.path.join(root, "proc/cmdline"), "w") as f:
            f.write(boot + "\n")
        r, calls = run_user_data(script, root, stubs)
        check(r.returncode == 0 and not called("grubby") and not called("systemctl --no-block reboot")
              and not called("systemctl mask"), "%s: with the marker and no arguments it reboots again (a loop): %s" % (what, calls))
        check("not rebooting again" in r.stderr, "%s: a node left without its arguments says nothing" % what)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_eks_variant(yaml, lt_name, ud_name):
    """One launch template + user data pair: the template, the NodeConfig's kubelet rules,
    and the script run against a host tree."""
    with open(os.path.join(EKS, lt_name)) as f:
        lt = json.load(f)
    instance = lt.get("InstanceType")
    if not check(instance in INSTANCES, "%s InstanceType %s: not one the recipe's numbers are for %s" % (lt_name, instance, sorted(INSTANCES))):
        return None, None, None, None
    for e in rule_security_groups(lt):
        check(False, "%s: %s" % (lt_name, e))
    check(lt.get("UserData") == "BASE64_OF_deploy/eks/" + ud_name, "%s UserData is not the placeholder create-nodegroup.sh fills" % lt_name)
    with open(os.path.join(EKS, ud_name)) as f:
        msg = email.message_from_string(f.read())
    parts = {p.get_content_type(): p.get_payload() for p in msg.walk() if not p.is_multipart()}
    nc = yaml.safe_load(parts.get("application/node.eks.aws", "")) or {}
    raw = nc.get("spec", {}).get("kubelet", {}).get("config", {})
    for e in eks_rules(raw, instance):
        check(False, "%s NodeConfig: %s" % (ud_name, e))
    sh = parts.get("text/x-shellscript", "")
    kargs = kargs_of(sh)
    kc = nodeadm_kubelet(raw, instance)
    for e in rule_kargs(kargs, kc, instance):
        check(False, "%s kernel arguments: %s" % (ud_name, e))
    test_user_data_script(sh, kargs, ud_name)
    return lt, raw, sh, kc


def test_eks():
    yaml = need_yaml()
    # the launch template
    with open(os.path.join(EKS, "launch-template.json")) as f:
        lt = json.load(f)
    instance = lt.get("InstanceType")
    if not check(instance in INSTANCES, "launch template InstanceType %s: not one the recipe's numbers are for %s" % (instance, sorted(INSTANCES))):
        return
    nis = lt.get("NetworkInterfaces", [])
    check(sorted(n.get("DeviceIndex") for n in nis) == [0, 1], "launch template: NetworkInterfaces device indexes %s, want [0, 1]" %
          [n.get("DeviceIndex") for n in nis])
    # several interfaces at launch: EC2 assigns no public IPv4 and refuses to be asked to
    check(not any(n.get("AssociatePublicIpAddress") for n in nis), "launch template asks a public IPv4 with two ENIs")
    # TagSpecifications tag every ENI the launch creates, the primary too: the VPC CNI
    # would then leave the primary alone and no pod would get an address
    for ts in lt.get("TagSpecifications", []):
        if ts.get("ResourceType") == "network-interface":
            check(not any(t.get("Key") == "node.k8s.amazonaws.com/no_manage" for t in ts.get("Tags", [])),
                  "launch template tags every ENI (the primary too) no_manage")
    check(lt.get("MetadataOptions", {}).get("HttpTokens") == "required", "launch template: IMDSv2 not required")
    check(lt.get("UserData") == "BASE64_OF_deploy/eks/user-data.mime", "launch template UserData is not the placeholder create-nodegroup.sh fills")
    # the user data
    with open(os.path.join(EKS, "user-data.mime")) as f:
        msg = email.message_from_string(f.read())
    check(msg.is_multipart() and msg.get_content_type() == "multipart/mixed", "user data: not multipart/mixed")
    parts = {p.get_content_type(): p.get_payload() for p in msg.walk() if not p.is_multipart()}
    check(sorted(parts) == ["application/node.eks.aws", "text/x-shellscript"], "user data parts %s" % sorted(parts))
    nc = yaml.safe_load(parts.get("application/node.eks.aws", "")) or {}
    check(nc.get("apiVersion") == "node.eks.aws/v1alpha1" and nc.get("kind") == "NodeConfig", "no NodeConfig in the user data")
    check(set(nc.get("spec", {}).get("cluster", {})) >= {"name", "apiServerEndpoint", "certificateAuthority", "cidr"},
          "NodeConfig spec.cluster incomplete (a custom AMI needs all four)")
    raw = nc.get("spec", {}).get("kubelet", {}).get("config", {})
    errs = eks_rules(raw, instance)
    for e in errs:
        check(False, "NodeConfig: " + e)
    kc = nodeadm_kubelet(raw, instance)
    if not errs:
        print("NodeConfig on %s: reservedSystemCPUs %s, cgroups %r/%r, maxPods %d, reservedMemory %s = kubeReserved %s + "
              "systemReserved %s + evictionHard %s" % (instance, kc["reservedSystemCPUs"], kc["kubeReservedCgroup"],
                                                      kc["systemReservedCgroup"], kc["maxPods"],
                                                      [r["limits"]["memory"] for r in kc["reservedMemory"]],
                                                      kc["kubeReserved"]["memory"], kc.get("systemReserved", {}).get("memory", "0"),
                                                      kc["evictionHard"]["memory.available"]))
    # kubeReserved memory is nodeadm's own rule for the maxPods set
    check(mib(kc["kubeReserved"]["memory"]) == 11 * kc["maxPods"] + 255,
          "kubeReserved memory %s is not 11 x maxPods + 255 Mi" % kc["kubeReserved"]["memory"])
    # each rule can fail: the old guide's config, and the recipe broken one way at a time
    old = eks_rules(OLD_GUIDE, instance)
    print("the old guide's NodeConfig: %s" % old)
    for want in ("kubeReservedCgroup", "reservedMemory totals", "maxPods not set"):
        check(any(want in e for e in old), "a rule did not refuse the old guide's NodeConfig: %s not in %s" % (want, old))
    for what, mutate, want in (
            ("a reserved cgroup back", lambda c: c.pop("systemReservedCgroup"), "systemReservedCgroup"),
            ("reservedMemory 1Mi off", lambda c: c["reservedMemory"][0]["limits"].__setitem__("memory", "2076Mi"), "reservedMemory totals"),
            ("systemReserved changed alone", lambda c: c["systemReserved"].__setitem__("memory", "1Gi"), "reservedMemory totals"),
            ("maxPods over the managed ENIs", lambda c: c.__setitem__("maxPods", 234), "maxPods 234"),
            ("half a core reserved", lambda c: c.__setitem__("reservedSystemCPUs", "0"), "splits a core"),
            ("a NUMA node the instance lacks", lambda c: c["reservedMemory"][0].__setitem__("numaNode", 1), "numaNode 1")):
        bad = copy.deepcopy(raw)
        mutate(bad)
        got = eks_rules(bad, instance)
        check(any(want in e for e in got), "%s: not refused (%s)" % (what, got))
    # the memory manager off (the first trial's fallback) passes without reservedMemory
    off = copy.deepcopy(raw)
    off.pop("memoryManagerPolicy")
    off.pop("reservedMemory")
    check(not eks_rules(off, instance), "the memory manager off is refused: %s" % eks_rules(off, instance))
    # the script: valid bash; tags the ENI at device index 1 no_manage; keeps it unmanaged
    sh = parts.get("text/x-shellscript", "")
    r = subprocess.run(["bash", "-n"], input=sh, capture_output=True, text=True)
    check(r.returncode == 0, "user data script: %s" % r.stderr)
    check(re.search(r'device-number"?\)?"? = 1', sh) and
          re.search(r"aws ec2 create-tags .*\n?.*Key=node\.k8s\.amazonaws\.com/no_manage,Value=true", sh),
          "the user data does not tag the ENI at device index 1 no_manage=true")
    # the launch template rule refuses the template the recipe shipped before (custom
    # groups without the cluster security group: nodes that never join)
    old_lt = {"NetworkInterfaces": [{"DeviceIndex": 0, "Groups": ["sg-0123456789abcdef0"]},
                                    {"DeviceIndex": 1, "Groups": ["sg-0123456789abcdef0"]}]}
    check(len(rule_security_groups(old_lt)) == 2, "the security group rule accepts groups without the cluster's")
    # the kernel argument rule refuses arguments that do not match the NodeConfig
    check(rule_kargs(["isolcpus=2-7,10-15", "nohz_full=2-7,10-15", "rcu_nocbs=2-7,10-15", "irqaffinity=0,8",
                      "hugepagesz=2M", "hugepages=1024"], kc, instance), "the kernel argument rule accepts a core left out")
    check(rule_kargs(["isolcpus=1-7,9-15", "nohz_full=1-7,9-15", "rcu_nocbs=1-7,9-15", "irqaffinity=0,8"], kc, instance),
          "the kernel argument rule accepts no boot hugepages")
    # x86 and Graviton: the template, the NodeConfig's rules and the user data's script
    check_eks_variant(yaml, "launch-template.json", "user-data.mime")
    glt, graw, gsh, gkc = check_eks_variant(yaml, "launch-template-graviton.json", "user-data-graviton.mime")
    if glt:
        check(glt["InstanceType"].startswith(("c7gn.", "c8g.", "c7g.", "c8gn.")), "the Graviton template is not a Graviton instance")
        # the two user data scripts differ only in the kernel arguments and their comment
        strip = lambda t: [ln for ln in t.splitlines() if not ln.startswith(("KARGS=", "# Kernel arguments for", "# interrupts (=", "# pages reserved"))]
        check(strip(gsh) == strip(sh), "the Graviton user data's script differs from the x86 one beyond its kernel arguments")
    # eksctl ClusterConfig and the aws CLI script: the same node group
    with open(os.path.join(EKS, "cluster.yaml")) as f:
        cc = yaml.safe_load(f)
    check(cc.get("apiVersion") == "eksctl.io/v1alpha5" and cc.get("kind") == "ClusterConfig", "cluster.yaml is not an eksctl ClusterConfig")
    ngs = cc.get("managedNodeGroups", [])
    if check(len(ngs) == 1, "cluster.yaml: %d managed node groups, want 1" % len(ngs)):
        ng = ngs[0]
        check(ng.get("launchTemplate", {}).get("id", "").startswith("lt-"), "cluster.yaml: no launch template")
        check("instanceType" not in ng and "ami" not in ng, "cluster.yaml: the instance type belongs in the launch template")
        check(ng.get("privateNetworking") is True, "cluster.yaml: two ENIs get no public IPv4: privateNetworking must be true")
        check(ng.get("labels", {}).get("spinlane.io/node-pool") == "true", "cluster.yaml: no spinlane.io/node-pool=true label")
        check({"key": "spinlane.io/dedicated", "value": "true", "effect": "NoSchedule"} in ng.get("taints", []),
              "cluster.yaml: no spinlane.io/dedicated taint")
        with open(os.path.join(EKS, "create-nodegroup.sh")) as f:
            cli = f.read()
        r = subprocess.run(["bash", "-n"], input=cli, capture_output=True, text=True)
        check(r.returncode == 0, "create-nodegroup.sh: %s" % r.stderr)
        check("--nodegroup-name %s" % ng["name"] in cli and "--labels spinlane.io/node-pool=true" in cli and
              "key=spinlane.io/dedicated,value=true,effect=NO_SCHEDULE" in cli,
              "create-nodegroup.sh does not create the node group cluster.yaml describes")
        check("deploy/eks/user-data.mime" in cli and "deploy/eks/launch-template.json" in cli and "base64 -w0" in cli,
              "create-nodegroup.sh does not build the launch template from the two files")
        check("clusterSecurityGroupId" in cli and '"CLUSTER_SECURITY_GROUP"' in cli,
              "create-nodegroup.sh does not put the cluster security group on the interfaces")
        check("AL2023_ARM_64_STANDARD" in cli and "deploy/eks/launch-template-graviton.json" in cli and
              "deploy/eks/user-data-graviton.mime" in cli, "create-nodegroup.sh has no Graviton variant")
        # scale from zero: the Cluster Autoscaler's node template as ASG tags (its AWS README:
        # k8s.io/cluster-autoscaler/node-template/{label,taint,resources}/<name>)
        t = "k8s.io/cluster-autoscaler/node-template/"
        tags = ng.get("tags", {})
        want = {t + "label/spinlane.io/node-pool": "true", t + "taint/spinlane.io/dedicated": "true:NoSchedule",
                t + "resources/spinlane.io/dpdk-nic": "1"}
        for k, v in want.items():
            check(tags.get(k) == v, "cluster.yaml: ASG tag %s is %r, want %r" % (k, tags.get(k), v))
        vcpus, tpc = INSTANCES[instance][0], INSTANCES[instance][1]
        ncores = (vcpus - len(cpus(kc["reservedSystemCPUs"]))) // tpc
        check(tags.get(t + "resources/spinlane.io/isolated-core") == str(ncores),
              "cluster.yaml: isolated-core tag %r, the NodeConfig isolates %d cores" % (tags.get(t + "resources/spinlane.io/isolated-core"), ncores))
        hp = dict(a.split("=", 1) for a in kargs_of(sh) if "=" in a).get("hugepages", "0")
        check(mib(tags.get(t + "resources/hugepages-2Mi", "")) == 2 * int(hp),
              "cluster.yaml: hugepages-2Mi tag %r, the kernel reserves %s pages of 2 MiB" % (tags.get(t + "resources/hugepages-2Mi"), hp))
        check(ng.get("propagateASGTags") is True, "cluster.yaml: the tags do not reach the ASG (propagateASGTags)")
        for k in want:
            check(k.split("node-template/")[1] in cli, "create-nodegroup.sh does not tag the ASG with %s" % k)


# ---------------------------------------------------------------- AKS rules

# AKS KubeletConfig and LinuxOSConfig fields (Azure SDK references of
# Microsoft.ContainerService, "KubeletConfig"/"LinuxOSConfig"; AKS custom node
# configuration): no reservedSystemCPUs, no cpuManagerPolicyOptions.
AKS_KUBELET = {"cpuManagerPolicy": ("none", "static"), "cpuCfsQuota": (True, False), "cpuCfsQuotaPeriod": None,
               "imageGcHighThreshold": None, "imageGcLowThreshold": None,
               "topologyManagerPolicy": ("none", "best-effort", "restricted", "single-numa-node"),
               "allowedUnsafeSysctls": None, "failSwapOn": (True, False), "containerLogMaxSizeMB": None,
               "containerLogMaxFiles": None, "podMaxPids": None}
AKS_OS = {"sysctls": None, "transparentHugePageEnabled": ("always", "madvise", "never"),
          "transparentHugePageDefrag": ("always", "defer", "defer+madvise", "madvise", "never"), "swapFileSizeMB": None}


def aks_kubelet_rules(kc):
    out = []
    for k, v in kc.items():
        if k not in AKS_KUBELET:
            out.append("kubeletConfig.%s is not an AKS kubelet setting" % k)
        elif AKS_KUBELET[k] is not None and v not in AKS_KUBELET[k]:
            out.append("kubeletConfig.%s %r is none of %s" % (k, v, AKS_KUBELET[k]))
    # docs/launch.md: without reservedSystemCPUs the static CPU manager would hand out
    # non-isolated CPUs (neither pin mode); spinlane-pinned = none + no CFS quota
    if kc.get("cpuManagerPolicy", "none") != "none" or kc.get("cpuCfsQuota", True) is not False:
        out.append("not the spinlane-pinned mode (cpuManagerPolicy none, cpuCfsQuota false)")
    if kc.get("topologyManagerPolicy") != "single-numa-node":
        out.append("topologyManagerPolicy is not single-numa-node")
    return out


def test_aks():
    yaml = need_yaml()
    with open(os.path.join(AKS, "nodepool.json")) as f:
        body = json.load(f)
    p = body.get("properties", {})
    with open(os.path.join(AKS, "kubelet-config.json")) as f:
        kc = json.load(f)
    with open(os.path.join(AKS, "linux-os-config.json")) as f:
        osc = json.load(f)
    check(p.get("kubeletConfig") == kc, "nodepool.json kubeletConfig differs from kubelet-config.json")
    check(p.get("linuxOSConfig") == osc, "nodepool.json linuxOSConfig differs from linux-os-config.json")
    for e in aks_kubelet_rules(kc):
        check(False, "kubelet-config.json: " + e)
    for what, bad, want in (("the static CPU manager", dict(kc, cpuManagerPolicy="static"), "spinlane-pinned"),
                            ("an EKS-only key", dict(kc, reservedSystemCPUs="0-1"), "reservedSystemCPUs is not an AKS"),
                            ("the CFS quota on", dict(kc, cpuCfsQuota=True), "spinlane-pinned")):
        check(any(want in e for e in aks_kubelet_rules(bad)), "kubelet rules accept %s" % what)
    for k, v in osc.items():
        check(k in AKS_OS and (AKS_OS[k] is None or v in AKS_OS[k]), "linux-os-config.json: %s=%r" % (k, v))
    # the secondary NIC: accelerated (the MANA VF), Standard (a subnet of the same VNet),
    # and DRANET not managed by AKS, so it does not hand the same VF to pods
    net = p.get("networkProfile", {})
    sec = net.get("secondaryNetworkInterfaces", [])
    if check(len(sec) == 1, "nodepool.json: %d secondary NICs, want 1" % len(sec)):
        check(sec[0].get("type") == "Standard" and sec[0].get("enableAcceleratedNetworking") is True and
              "/subnets/" in sec[0].get("vnetSubnetId", ""), "nodepool.json: the secondary NIC %s" % sec[0])
        vnet = lambda sid: sid.split("/subnets/")[0]
        check(vnet(sec[0]["vnetSubnetId"]) == vnet(p.get("vnetSubnetID", "")), "the secondary NIC's subnet is not in the pool's VNet")
    check(net.get("dranet") == {"mode": "Unmanaged"}, "nodepool.json: DRANET not Unmanaged: %s" % net.get("dranet"))
    check(re.fullmatch(r"Standard_[A-Z]+\d+[a-z]*_v6", p.get("vmSize", "")) is not None,
          "vmSize %s: MANA (Azure Boost) sizes are the v6 families" % p.get("vmSize"))
    check(p.get("osType") == "Linux" and p.get("mode") == "User", "nodepool.json: not a Linux user pool")
    with open(os.path.join(SRC, "helm", "spinlane", "values.yaml")) as f:
        values = yaml.safe_load(f)
    check(p.get("nodeLabels", {}).get("spinlane.io/node-pool") == values["nodeSelector"]["spinlane.io/node-pool"],
          "nodepool.json: not labelled for the chart's nodeSelector")
    check(any(re.fullmatch(r"spinlane\.io/dedicated=true:NoSchedule", t) for t in p.get("nodeTaints", [])) and
          any(t.get("key") == "spinlane.io/dedicated" for t in values["tolerations"]), "nodepool.json: taint not the one the chart tolerates")
    with open(os.path.join(AKS, "create-nodepool.sh")) as f:
        cli = f.read()
    r = subprocess.run(["bash", "-n"], input=cli, capture_output=True, text=True)
    check(r.returncode == 0, "create-nodepool.sh: %s" % r.stderr)
    api = re.search(r"^API=(\S+)$", cli, re.M)
    check(api and re.fullmatch(r"\d{4}-\d{2}-\d{2}-preview", api.group(1)) and "api-version=$API" in cli,
          "create-nodepool.sh does not pin a preview API version")
    check("az rest --method put" in cli and "deploy/aks/nodepool.json" in cli, "create-nodepool.sh does not PUT nodepool.json")
    # Microsoft's multi-NIC prerequisites ("Configure Multi-NIC pods using AKS supported
    # DRANET (Preview)"): Kubernetes 1.35+, the NetworkingMultiNICPreview feature, the CLI
    # flag --secondary-network-interfaces; the script refuses to start without the first two
    check(re.search(r"az feature show --namespace Microsoft\.ContainerService --name NetworkingMultiNICPreview", cli) and
          "Registered" in cli, "create-nodepool.sh does not check that NetworkingMultiNICPreview is registered")
    check("currentKubernetesVersion" in cli and "1.35" in cli, "create-nodepool.sh does not check Kubernetes 1.35+")
    with open(os.path.join(SRC, "docs", "install-aks.md")) as f:
        guide = f.read()
    check("--secondary-network-interfaces" in guide and not re.search(r"nodepool add[^\n]*--secondary-nics", guide),
          "install-aks.md: the CLI flag is --secondary-network-interfaces (not --secondary-nics)")
    check("az feature register --namespace Microsoft.ContainerService --name NetworkingMultiNICPreview" in guide and
          "1.35" in guide, "install-aks.md: the multi-NIC prerequisites (feature registration, Kubernetes 1.35+) are missing")
    print("AKS pool: %s, secondary NIC %s, dranet %s, kubelet %s, os %s, api %s" % (
        p.get("vmSize"), {k: v for k, v in sec[0].items() if k != "vnetSubnetId"} if sec else None, net.get("dranet"), kc, osc,
        api.group(1) if api else None))


def main(argv):
    tests = {"eks": test_eks, "aks": test_aks}
    if len(argv) != 2 or argv[1] not in tests:
        print("usage: test-recipes.py %s" % "|".join(tests), file=sys.stderr)
        return 2
    tests[argv[1]]()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

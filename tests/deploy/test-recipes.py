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
INSTANCES = {"c7i.4xlarge": (16, 2, 1, 8, 30)}


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

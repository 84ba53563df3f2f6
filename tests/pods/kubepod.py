# SPDX-License-Identifier: Apache-2.0
"""The chart's workloads as Pods podman can play (`podman kube play`), changed only where
podman or this machine cannot do what a cluster does; every change is listed in the
returned notes and printed by the test.

Kept as the chart wrote them: every container and init container (whatever their number:
sidecars included) with command, args, env values, volume mounts, securityContext,
resources; hostNetwork; hostPath volumes (re-rooted under the host tree), configMap and
emptyDir volumes.

Changed, because nothing here can do it (no kubelet, no API server, no scheduler):
  - a DaemonSet's or Deployment's pod template becomes a bare Pod;
  - hostPath PATH becomes TREE/PATH (the fake node's host root);
  - env valueFrom.fieldRef (spec.nodeName, metadata.uid, metadata.namespace, ...) becomes a
    plain value: podman does not resolve spec.nodeName;
  - projected volumes (the service-account token) become emptyDirs: podman has no
    projected tokens and there is no API server to use them with;
  - probes go: no kubelet probes here (podman would turn httpGet into a curl health check
    the images lack);
  - ports go when hostNetwork is set (podman refuses them there);
  - pod resourceClaims and container resources.claims go (no DRA in podman: the claim's CDI
    spec is applied with `podman run --device` by the test instead);
  - restartPolicy Never, so that a container that exits stays exited with its logs.
Only the standard library and python3-yaml.
"""

import copy
import os


def workloads(docs):
    """[(kind, name, pod spec doc)] of every DaemonSet, Deployment and Pod in docs."""
    out = []
    for d in docs:
        if d and d.get("kind") in ("DaemonSet", "Deployment", "Pod"):
            out.append((d["kind"], d["metadata"]["name"], d))
    return out


def to_pod(doc, tree, values, name=None, keep=()):
    """(pod, notes): doc (a DaemonSet, Deployment or Pod) as a podman-playable Pod.
    tree: the host root hostPaths are moved under, but those in keep (host paths the
    test wants as this machine has them, e.g. /sys for sysfs's network-namespace view).
    values: fieldPath -> value for env fieldRefs (spec.nodeName must be given)."""
    notes = []
    if doc["kind"] == "Pod":
        meta, spec = copy.deepcopy(doc["metadata"]), copy.deepcopy(doc["spec"])
    else:
        t = doc["spec"]["template"]
        meta, spec = copy.deepcopy(t.get("metadata", {})), copy.deepcopy(t["spec"])
        notes.append("%s %s: its pod template as a Pod" % (doc["kind"], doc["metadata"]["name"]))
    meta["name"] = name or doc["metadata"]["name"]
    meta.pop("namespace", None)
    spec["restartPolicy"] = "Never"
    if spec.pop("resourceClaims", None) is not None:
        notes.append("resourceClaims dropped (no DRA in podman; the claim's CDI spec is applied by the test)")
    host_network = spec.get("hostNetwork", False)
    for v in spec.get("volumes", []):
        if "hostPath" in v and v["hostPath"]["path"] in keep:
            notes.append("volume %s: hostPath %s kept as this machine has it" % (v["name"], v["hostPath"]["path"]))
        elif "hostPath" in v:
            p = v["hostPath"]["path"]
            v["hostPath"]["path"] = os.path.join(tree, p.lstrip("/"))
            if v["hostPath"].get("type") == "DirectoryOrCreate":
                os.makedirs(v["hostPath"]["path"], exist_ok=True)
        elif "projected" in v:
            v.pop("projected")
            v["emptyDir"] = {}
            notes.append("volume %s: projected -> emptyDir (no service-account tokens in podman)" % v["name"])
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        for e in c.get("env", []):
            fr = e.get("valueFrom", {}).get("fieldRef")
            if fr:
                fp = fr["fieldPath"]
                if fp not in values:
                    raise ValueError("container %s env %s: fieldRef %s has no value given" % (c["name"], e["name"], fp))
                e.pop("valueFrom")
                e["value"] = values[fp]
                notes.append("%s: env %s = %r (fieldRef %s, which podman does not resolve)" %
                             (c["name"], e["name"], values[fp], fp))
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            if c.pop(probe, None) is not None:
                notes.append("%s: %s dropped (no kubelet)" % (c["name"], probe))
        if host_network and c.pop("ports", None) is not None:
            notes.append("%s: ports dropped (podman refuses ports with hostNetwork)" % c["name"])
        res = c.get("resources", {})
        if res.pop("claims", None) is not None:
            notes.append("%s: resources.claims dropped (no DRA in podman)" % c["name"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}, notes


def host_paths(doc):
    """{volume name: host path} of a workload's hostPath volumes."""
    spec = doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["template"]["spec"]
    return {v["name"]: v["hostPath"]["path"] for v in spec.get("volumes", []) if "hostPath" in v}

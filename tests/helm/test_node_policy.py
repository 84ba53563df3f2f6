#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent's one-node admission policy, evaluated: the ValidatingAdmissionPolicy that
helm/spinlane renders (and the one deploy/node-policy adds to the kustomize overlays) is applied
to Node updates as the API server would apply it: matchConditions, variables, then the
validations in order, the first false one denying. The CEL is evaluated by the npm
package @marcbachmann/cel-js (tests/helm/cel-eval.mjs, installed by get-cel.sh /
scripts/install-deps.sh); no API server runs here, so what is tested is the expressions'
meaning in CEL, not the API server's admission plumbing.

Also: the rendered RBAC (ClusterRole nodes get/patch, a Role for events in the namespace
the agent posts Events to, KUBE_EVENT_NAMESPACE in agent/kube/kube-api.h), and that
rbac.nodePolicy=false / rbac.create=false render no policy.

Exit 0 pass, 1 fail, 77 skipped (helm/kubectl, node or the npm package cannot be had).
Environment: SPINLANE_SOURCE_DIR, SPINLANE_BINARY_DIR, optional SPINLANE_HELM/_KUBECTL.
"""

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
SRC = os.environ.get("SPINLANE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("SPINLANE_BINARY_DIR") or os.path.join(SRC, "build")
CHART = os.path.join(SRC, "helm", "spinlane")
# the chart refuses its placeholder image repositories: render with real-looking ones
IMAGES = ["-f", os.path.join(SRC, "tests", "helm", "values-images.yaml")]
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
OWN = ["spinlane.io/ready", "spinlane.io/nic-kind", "spinlane.io/dpdk-nics", "spinlane.io/isolated-cores",
       "spinlane.io/pin-mode"]

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(SKIP)


def tools():
    h, k = os.environ.get("SPINLANE_HELM"), os.environ.get("SPINLANE_KUBECTL")
    if h and k:
        return h, k
    d = os.path.join(BIN, "tools")
    if not (os.access(os.path.join(d, "bin", "helm"), os.X_OK) and os.access(os.path.join(d, "bin", "kubectl"), os.X_OK)):
        r = subprocess.run(["bash", os.path.join(SRC, "tests", "deploy", "get-kubectl.sh"), d], capture_output=True, text=True)
        if r.returncode != 0:
            skip("no helm/kubectl: " + r.stderr.strip())
    return h or os.path.join(d, "bin", "helm"), k or os.path.join(d, "bin", "kubectl")


def node(name, labels=None, annotations=None, spec=None):
    meta = {"name": name, "uid": "u-" + name, "resourceVersion": "7"}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "spec": spec if spec is not None else {"providerID": "aws:///us-east-1a/i-0abc", "podCIDR": "10.244.1.0/24"}}


BASE_LABELS = {"kubernetes.io/hostname": "node-a", "spinlane.io/node-pool": "true",
               "node.kubernetes.io/instance-type": "c7i.4xlarge", "spinlane.io/ready": "false"}


def agent(ns, sa, node_names=("node-a",)):
    extra = {"authentication.kubernetes.io/pod-name": ["spinlane-agent-x"]}
    if node_names is not None:
        extra[NODE_NAME_KEY] = list(node_names)
    return {"userInfo": {"username": "system:serviceaccount:%s:%s" % (ns, sa), "extra": extra}}


def cases(ns, sa):
    """(name, old, new, request, allowed, message substring)."""
    old = node("node-a", dict(BASE_LABELS))
    me = agent(ns, sa)
    out = []

    def upd(name, mutate, req=me, allowed=True, msg="", base=old):
        new = copy.deepcopy(base)
        mutate(new)
        out.append((name, base, new, req, allowed, msg))

    # what the agent does: its own labels set, changed, removed
    upd("own labels set", lambda n: n["metadata"]["labels"].update(
        {"spinlane.io/ready": "true", "spinlane.io/nic-kind": "ena", "spinlane.io/dpdk-nics": "2",
         "spinlane.io/isolated-cores": "6", "spinlane.io/pin-mode": "kubelet-pinned"}))
    upd("own label removed", lambda n: n["metadata"]["labels"].pop("spinlane.io/ready"))
    upd("nothing changed", lambda n: None)
    bare = node("node-a")  # a Node without any label or annotation yet
    upd("first label on a bare Node", lambda n: n["metadata"].update({"labels": {"spinlane.io/ready": "false"}}),
        base=bare)
    # another Node, or no Node named in the token
    other = node("node-b", dict(BASE_LABELS, **{"kubernetes.io/hostname": "node-b"}))
    upd("another Node's label", lambda n: n["metadata"]["labels"].update({"spinlane.io/ready": "true"}),
        base=other, allowed=False, msg="only the Node it runs on (node-a), not node-b")
    upd("token without node-name", lambda n: n["metadata"]["labels"].update({"spinlane.io/ready": "true"}),
        req=agent(ns, sa, None), allowed=False, msg="names no Node")
    upd("token with two node names", lambda n: n["metadata"]["labels"].update({"spinlane.io/ready": "true"}),
        req=agent(ns, sa, ("node-a", "node-b")), allowed=False, msg="names no Node")
    upd("token with an empty node name list", lambda n: None, req=agent(ns, sa, ()), allowed=False,
        msg="names no Node")
    # spec: cordon, taints, provider ID
    upd("cordon", lambda n: n["spec"].update({"unschedulable": True}), allowed=False, msg="spec")
    upd("taint", lambda n: n["spec"].update({"taints": [{"key": "x", "effect": "NoSchedule"}]}), allowed=False,
        msg="spec")
    upd("podCIDR", lambda n: n["spec"].update({"podCIDR": "10.0.0.0/8"}), allowed=False, msg="spec")
    # other labels and annotations
    upd("the node-pool label changed", lambda n: n["metadata"]["labels"].update({"spinlane.io/node-pool": "false"}),
        allowed=False, msg="only its own labels")
    upd("a spinlane.io label not its own", lambda n: n["metadata"]["labels"].update({"spinlane.io/admin": "1"}),
        allowed=False, msg="only its own labels")
    upd("a foreign label added", lambda n: n["metadata"]["labels"].update({"node-role.kubernetes.io/control-plane": ""}),
        allowed=False, msg="only its own labels")
    upd("a foreign label removed", lambda n: n["metadata"]["labels"].pop("kubernetes.io/hostname"),
        allowed=False, msg="only its own labels")
    upd("all labels removed", lambda n: n["metadata"].pop("labels"), allowed=False, msg="only its own labels")
    upd("an annotation added", lambda n: n["metadata"].update({"annotations": {"a": "b"}}), allowed=False,
        msg="annotations")
    # somebody else: not this policy's business
    kubelet = {"userInfo": {"username": "system:node:node-a", "extra": {}}}
    upd("the kubelet cordons", lambda n: n["spec"].update({"unschedulable": True}), req=kubelet)
    same_name_other_ns = {"userInfo": {"username": "system:serviceaccount:other:%s" % sa,
                                       "extra": {NODE_NAME_KEY: ["node-b"]}}}
    upd("a same-named SA elsewhere", lambda n: n["spec"].update({"unschedulable": True}), req=same_name_other_ns)
    return out


def rslice(node_name, driver="spinlane.io", gen=1):
    spec = {"driver": driver, "pool": {"name": node_name or "all", "generation": gen, "resourceSliceCount": 1},
            "devices": [{"name": "nic-0000-00-06-0", "attributes": {"type": {"string": "dpdk-nic"}, "numaNode": {"int": 0}}}]}
    if node_name:
        spec["nodeName"] = node_name
    else:
        spec["allNodes"] = True
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "%s-%s" % (node_name or "all", driver)}, "spec": spec}


def slice_cases(ns, sa):
    """resourceApi dra/both: the agent's ResourceSlice writes (CREATE: no old object,
    DELETE: no new one), (name, old, new, request, allowed, message substring)."""
    me = agent(ns, sa)
    mine, other = rslice("node-a"), rslice("node-b")
    return [
        ("its slice created", None, mine, me, True, ""),
        ("its slice updated", mine, rslice("node-a", gen=2), me, True, ""),
        ("its slice deleted", mine, None, me, True, ""),
        ("another Node's slice created", None, other, me, False, "only the ResourceSlices of the Node it runs on (node-a)"),
        ("another Node's slice updated", other, rslice("node-b", gen=2), me, False, "the Node it runs on"),
        ("another Node's slice deleted", other, None, me, False, "the Node it runs on"),
        ("its slice moved to another Node", mine, other, me, False, "the Node it runs on"),
        ("another Node's slice moved to its Node", other, mine, me, False, "the Node it runs on"),
        ("a slice for all nodes", None, rslice(None), me, False, "the Node it runs on"),
        ("another driver's slice on its Node", None, rslice("node-a", "gpu.example.com"), me, False, "its own driver spinlane.io"),
        ("another driver's slice on its Node deleted", rslice("node-a", "gpu.example.com"), None, me, False, "its own driver"),
        ("token without node-name", None, mine, agent(ns, sa, None), False, "names no Node"),
        ("the kubelet deletes a slice", other, None, {"userInfo": {"username": "system:node:node-b", "extra": {}}}, True, ""),
    ]


def evaluate(spec, tcs, cel_dir, tmp, tag):
    inp = os.path.join(tmp, "in-%s.json" % re.sub(r"\W", "_", tag))
    with open(inp, "w") as f:
        json.dump({"spec": spec, "cases": [{"name": n, "object": new, "oldObject": old, "request": req}
                                          for n, old, new, req, _, _ in tcs]}, f)
    r = subprocess.run(["node", os.path.join(SRC, "tests", "helm", "cel-eval.mjs"), cel_dir, inp],
                       capture_output=True, text=True, timeout=120)
    if not check(r.returncode == 0, "%s: cel-eval.mjs exit %d: %s" % (tag, r.returncode, r.stderr.strip()[-500:])):
        return
    res = {x["name"]: x for x in json.loads(r.stdout)}
    for n, _, _, _, allowed, msg in tcs:
        x = res.get(n, {})
        check("evaluation error" not in x.get("message", ""), "%s: %s: %s" % (tag, n, x.get("message")))
        check(x.get("allowed") == allowed, "%s: %s: %s, want %s (%s)" % (
            tag, n, "allowed" if x.get("allowed") else "denied", "allowed" if allowed else "denied", x.get("message")))
        if not allowed:
            check(msg in x.get("message", ""), "%s: %s: message %r lacks %r" % (tag, n, x.get("message"), msg))
    print("%s: %d cases evaluated" % (tag, len(tcs)))


def policy_checks(docs, tag, ns, sa):
    """The policy and its binding; returns the policy's spec (or None)."""
    vap = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicy"]
    vapb = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding"]
    if not check(len(vap) == 1 and len(vapb) == 1, "%s: one ValidatingAdmissionPolicy and one binding (got %d, %d)" % (
            tag, len(vap), len(vapb))):
        return None
    p, b = vap[0], vapb[0]
    check(p["apiVersion"] == "admissionregistration.k8s.io/v1" and b["apiVersion"] == "admissionregistration.k8s.io/v1",
          "%s: admissionregistration.k8s.io/v1 (GA in 1.30)" % tag)
    spec = p["spec"]
    check(spec.get("failurePolicy") == "Fail", "%s: failurePolicy %s" % (tag, spec.get("failurePolicy")))
    check(spec["matchConstraints"]["resourceRules"] == [{"apiGroups": [""], "apiVersions": ["v1"],
                                                         "operations": ["UPDATE"], "resources": ["nodes"]}],
          "%s: matchConstraints %s" % (tag, spec["matchConstraints"]))
    check(b["spec"].get("policyName") == p["metadata"]["name"] and b["spec"].get("validationActions") == ["Deny"],
          "%s: binding %s" % (tag, b["spec"]))
    check(any(("system:serviceaccount:%s:%s" % (ns, sa)) in m["expression"] for m in spec.get("matchConditions", [])),
          "%s: matchConditions name the agent's service account %s/%s" % (tag, ns, sa))
    own = set(re.findall(r"'(spinlane\.io/[\w-]+)'", " ".join(v["expression"] for v in spec["variables"])))
    check(own == set(OWN), "%s: the policy's own labels %s, the agent's %s" % (tag, sorted(own), OWN))
    return spec


def rbac_checks(docs, tag, ns, sa):
    with open(os.path.join(SRC, "agent", "kube", "kube-api.h")) as f:
        ev_ns = re.search(r'#define KUBE_EVENT_NAMESPACE "([^"]+)"', f.read()).group(1)
    cr = [d for d in docs if d["kind"] == "ClusterRole"]
    roles = [d for d in docs if d["kind"] == "Role"]
    rbs = [d for d in docs if d["kind"] == "RoleBinding"]
    check(len(cr) == 1 and cr[0]["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}],
          "%s: the ClusterRole grants nodes get/patch only: %s" % (tag, [c["rules"] for c in cr]))
    check(len(roles) == 1 and roles[0]["metadata"].get("namespace") == ev_ns and
          roles[0]["rules"] == [{"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}],
          "%s: one Role in %s (KUBE_EVENT_NAMESPACE) for events create/patch: %s" % (
              tag, ev_ns, [(r["metadata"].get("namespace"), r["rules"]) for r in roles]))
    check(len(rbs) == 1 and rbs[0]["metadata"].get("namespace") == ev_ns and
          rbs[0]["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                "name": roles[0]["metadata"]["name"] if roles else None} and
          rbs[0]["subjects"] == [{"kind": "ServiceAccount", "name": sa, "namespace": ns}],
          "%s: the RoleBinding in %s binds %s/%s: %s" % (tag, ev_ns, ns, sa, rbs))


def main():
    try:
        import yaml
    except ImportError:
        skip("python3-yaml is not installed")
    if not shutil.which("node"):
        skip("node is not installed: no CEL evaluator")
    helm, kubectl = tools()
    cel_dir = os.path.join(BIN, "tools", "cel")
    r = subprocess.run(["bash", os.path.join(SRC, "tests", "helm", "get-cel.sh"), cel_dir], capture_output=True, text=True)
    if r.returncode != 0:
        skip("no CEL evaluator: " + r.stderr.strip())
    tmp = tempfile.mkdtemp(prefix="sl-vap-")
    try:
        for ns, release, extra in (("spinlane", "spinlane", []), ("infra", "dp", ["--set", "serviceAccount.name=sl"])):
            r = subprocess.run([helm, "template", release, CHART, "-n", ns] + IMAGES + extra, capture_output=True, text=True)
            if not check(r.returncode == 0, "helm template %s: %s" % (extra, r.stderr.strip())):
                continue
            docs = [d for d in yaml.safe_load_all(r.stdout) if d]
            sa = [d for d in docs if d["kind"] == "ServiceAccount"][0]["metadata"]["name"]
            tag = "chart -n %s %s" % (ns, " ".join(extra))
            rbac_checks(docs, tag, ns, sa)
            spec = policy_checks(docs, tag, ns, sa)
            if spec:
                evaluate(spec, cases(ns, sa), cel_dir, tmp, tag)
        # DRA: the second policy, on the agent's ResourceSlice writes
        for mode in (["--set", "resourceApi.mode=dra"], ["--set", "resourceApi.mode=both"]):
            r = subprocess.run([helm, "template", "spinlane", CHART, "-n", "spinlane"] + IMAGES + mode, capture_output=True, text=True)
            if not check(r.returncode == 0, "helm template %s: %s" % (mode, r.stderr.strip())):
                continue
            docs = [d for d in yaml.safe_load_all(r.stdout) if d]
            tag = "chart %s" % " ".join(mode)
            vap = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ValidatingAdmissionPolicy"}
            vapb = {d["spec"]["policyName"]: d for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding"}
            p = vap.get("spinlane-agent-slices")
            if not check(p is not None and sorted(vap) == sorted(vapb) == ["spinlane-agent-node", "spinlane-agent-slices"],
                         "%s: policies %s, bound %s" % (tag, sorted(vap), sorted(vapb))):
                continue
            spec = p["spec"]
            check(spec.get("failurePolicy") == "Fail" and vapb["spinlane-agent-slices"]["spec"].get("validationActions") == ["Deny"],
                  "%s: slices policy not Fail/Deny" % tag)
            check(spec["matchConstraints"]["resourceRules"] == [{"apiGroups": ["resource.k8s.io"], "apiVersions": ["*"],
                                                                 "operations": ["CREATE", "UPDATE", "DELETE"], "resources": ["resourceslices"]}],
                  "%s: slices matchConstraints %s" % (tag, spec["matchConstraints"]))
            evaluate(spec, slice_cases("spinlane", "spinlane-agent"), cel_dir, tmp, tag + " slices")
            # the node policy is the same one as without DRA
            node_spec = policy_checks([d for d in docs if not d["metadata"]["name"].endswith("-slices")], tag, "spinlane", "spinlane-agent")
            if node_spec:
                evaluate(node_spec, cases("spinlane", "spinlane-agent"), cel_dir, tmp, tag)
        for sets in (["--set", "rbac.nodePolicy=false"], ["--set", "rbac.create=false"]):
            r = subprocess.run([helm, "template", "spinlane", CHART, "-n", "spinlane"] + IMAGES + sets, capture_output=True,
                               text=True)
            kinds = [d["kind"] for d in yaml.safe_load_all(r.stdout) if d] if r.returncode == 0 else None
            check(kinds is not None and "ValidatingAdmissionPolicy" not in kinds, "%s: no policy (%s)" % (sets, kinds))
        # the plain manifests: the base's RBAC, and the policy the overlays add (cluster-
        # scoped: no namespace, which kustomize's base namespace would have given it)
        for d in ("base", "overlays/eks", "overlays/aks"):
            r = subprocess.run([kubectl, "kustomize", os.path.join(SRC, "deploy", d)], capture_output=True, text=True)
            if not check(r.returncode == 0, "kubectl kustomize deploy/%s: %s" % (d, r.stderr.strip())):
                continue
            docs = [x for x in yaml.safe_load_all(r.stdout) if x]
            tag = "deploy/" + d
            rbac_checks(docs, tag, "spinlane", "spinlane-agent")
            if d == "base":
                continue
            for x in docs:
                if x["kind"].startswith("ValidatingAdmissionPolicy"):
                    check("namespace" not in x["metadata"], "%s: %s has a namespace" % (tag, x["kind"]))
            spec = policy_checks(docs, tag, "spinlane", "spinlane-agent")
            if spec:
                evaluate(spec, cases("spinlane", "spinlane-agent"), cel_dir, tmp, tag)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks, %d failed" % (testcheck.checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

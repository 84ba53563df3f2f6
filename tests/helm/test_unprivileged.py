#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The chart's unprivileged agent (agent.privileged=false), rendered and tried.

Rendered: the agent container is not privileged, cannot gain privileges, drops every
capability but exactly NET_ADMIN and SYS_PTRACE, mounts /dev HostToContainer (no
Bidirectional mount anywhere), and the chart refuses the mode while the agent would mount
hugetlbfs itself (config.hugetlbfs.mount true, also through a nodeConfigs entry); the
default stays privileged with its one Bidirectional mount.

Tried as far as this machine allows: the DaemonSet's own command line (host root and
config swapped for a fixture node of tests/fixtures/make-node.py, preparing once) run as
root with the capability bounding set cut to the rendered list and no_new_privs
(setpriv), against the same run with every capability: the same verdicts. A fixture tree
is plain files, so this shows the agent asks for no capability outside the list for what
a fake node exercises (inventory, checks, binding through sysfs files, the bind state,
the config); the kernel's side on a real node (sysfs, procfs of the host, ethtool,
netlink) is not exercised here.

Exit 0 pass, 1 fail, 77 skipped (helm cannot be had). The capability run is skipped,
with the reason printed, when not root or without setpriv.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import importlib.util

SRC = os.environ.get("SPINLANE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
spec = importlib.util.spec_from_file_location("testhelm", os.path.join(SRC, "tests", "helm", "test-helm.py"))
th = importlib.util.module_from_spec(spec)
spec.loader.exec_module(th)

CAPS = ["NET_ADMIN", "SYS_PTRACE"]
MODE = ["--set", "agent.privileged=false", "--set", "config.hugetlbfs.mount=false"]


def agent_container(docs):
    ds = th.objs(docs, "DaemonSet")
    return [(d["metadata"]["name"], d["spec"]["template"]["spec"]) for d in ds]


def test_render():
    for preset in ("default", "eks", "aks"):
        docs = th.template(*(th.PRESETS[preset] + MODE))
        if not docs:
            continue
        for name, spec in agent_container(docs):
            t = "%s %s" % (preset, name)
            c = spec["containers"][0]
            sc = c.get("securityContext", {})
            th.check(sc.get("privileged") is False and sc.get("allowPrivilegeEscalation") is False,
                     "%s: privileged %s, allowPrivilegeEscalation %s" % (t, sc.get("privileged"), sc.get("allowPrivilegeEscalation")))
            th.check(sc.get("capabilities") == {"drop": ["ALL"], "add": CAPS},
                     "%s: capabilities %s, want drop ALL, add %s" % (t, sc.get("capabilities"), CAPS))
            th.check(sc.get("readOnlyRootFilesystem") is True, "%s: readOnlyRootFilesystem" % t)
            props = {m["mountPath"]: m.get("mountPropagation", "None") for m in c["volumeMounts"]}
            th.check(props.get("/host/dev") == "HostToContainer" and "Bidirectional" not in props.values(),
                     "%s: mount propagation %s" % (t, props))
    # the default: privileged, the one Bidirectional mount
    docs = th.template()
    if docs:
        c = agent_container(docs)[0][1]["containers"][0]
        props = {m["mountPath"]: m.get("mountPropagation", "None") for m in c["volumeMounts"]}
        th.check(c["securityContext"].get("privileged") is True and
                 [p for p, v in props.items() if v == "Bidirectional"] == ["/host/dev"],
                 "default: privileged with /host/dev Bidirectional (%s, %s)" % (c["securityContext"], props))
    # refused while the agent would mount hugetlbfs itself
    tmp = tempfile.mkdtemp(prefix="sl-unpriv-")
    try:
        vf = th.values_file(tmp, "nodecfg", "nodeConfigs:\n  big:\n    hugetlbfs: {mount: true}\n")
        for args, what in ((["--set", "agent.privileged=false"], "config"),
                           (MODE + ["-f", vf], "big")):
            r = th.helm("template", "spinlane", th.CHART, "-n", "spinlane", *args)
            th.check(r.returncode != 0 and "agent.privileged false needs hugetlbfs.mount false" in r.stderr and
                     (what + ":") in r.stderr, "%s: refused (exit %d: %s)" % (args, r.returncode, r.stderr.strip()[-300:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def verdict_lines(out):
    return sorted(l for l in out.splitlines() if re.match(r"^(PASS|WARN|FAIL|SKIP) [\w-]+:", l))


def test_capabilities():
    if os.geteuid() != 0:
        print("SKIP (capability run): not root, the bounding set cannot be cut to the rendered list")
        return
    setpriv = shutil.which("setpriv")
    if not setpriv:
        print("SKIP (capability run): no setpriv (util-linux)")
        return
    if not os.access(th.AGENT, os.X_OK):
        raise SystemExit("spinlane-agent not built at %s" % th.AGENT)
    tmp = tempfile.mkdtemp(prefix="sl-unpriv-")
    try:
        for preset, fx in (("default", "eks-x86"), ("aks", "aks-mana")):
            text, argv = th.rendered_config(th.PRESETS[preset] + MODE)
            if text is None:
                continue
            docs = th.template(*(th.PRESETS[preset] + MODE))
            caps = agent_container(docs)[0][1]["containers"][0]["securityContext"]["capabilities"]["add"]
            runs = {}
            for mode in ("all", "rendered"):
                d = os.path.join(tmp, "%s-%s-%s" % (preset, fx, mode))
                os.makedirs(d)
                cfg = os.path.join(d, "config.json")
                with open(cfg, "w") as f:
                    f.write(text)
                root = th.fixture(d, fx)
                a = [th.AGENT] + argv[1:]
                a[a.index("--root") + 1] = root
                a[a.index("--config") + 1] = cfg
                a[a.index("--metrics-bind-address") + 1] = "0"
                if mode == "rendered":
                    bset = "-all," + ",".join("+" + c.lower() for c in caps)
                    a = [setpriv, "--nnp", "--bounding-set", bset, "--inh-caps", "-all"] + a
                pre = a[:a.index(th.AGENT)]  # the setpriv prefix, or nothing
                r = subprocess.run(a + ["--once"], capture_output=True, text=True, timeout=120)
                # and the node checks (preflight) the daemon prints at start, the same way
                p = subprocess.run(pre + [th.AGENT, "preflight", "--root", root, "--config", cfg],
                                   capture_output=True, text=True, timeout=120)
                runs[mode] = (r.returncode, verdict_lines(r.stdout) + verdict_lines(p.stdout),
                              r.stdout + r.stderr + p.stdout + p.stderr, p.returncode)
                print("%s on %s, %s capabilities: exit %d, %d verdicts" % (preset, fx, mode, r.returncode, len(runs[mode][1])))
            (rc_all, v_all, _, p_all), (rc_cap, v_cap, out_cap, p_cap) = runs["all"], runs["rendered"]
            t = "%s on %s" % (preset, fx)
            th.check(rc_all == 0 and rc_cap == rc_all and p_cap == p_all and p_all in (0, 1),
                     "%s: exit %d/%d (run --once/preflight) with %s only, %d/%d with all:\n%s" % (
                         t, rc_cap, p_cap, caps, rc_all, p_all, out_cap[-3000:]))
            th.check(v_cap == v_all and v_all, "%s: verdicts differ with %s only:\n  %s\nvs\n  %s" % (
                t, caps, "\n  ".join(sorted(set(v_cap) - set(v_all))), "\n  ".join(sorted(set(v_all) - set(v_cap)))))
            th.check("Operation not permitted" not in out_cap and "Permission denied" not in out_cap,
                     "%s: EPERM/EACCES with %s only:\n%s" % (t, caps, out_cap[-3000:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    th.HELM, th.KUBECTL = th.tools()
    th.need_yaml()
    test_render()
    test_capabilities()
    if th.failures:
        print("%d failure(s)" % len(th.failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

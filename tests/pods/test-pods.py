#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The chart's pods, run by a real container runtime (podman kube play, runc, catatonit).

    test-pods.py WORKDIR AGENT HELM

WORKDIR: an empty scratch folder (removed by the caller); AGENT: a host build of
spinlane-agent (the same source as the images); HELM: a helm binary. The images are
localhost/spinlane-test/{agent,driver}:latest (scripts/test-images.sh); podman runs with its
own containers.conf (CONTAINERS_CONF, set by scripts/test-pods.sh), the host's is untouched.

For each preset the chart is rendered with the local images; every DaemonSet/Deployment
template becomes a Pod (tests/pods/kubepod.py says what is changed and why, and each change
is printed), each hostPath points into a fake node laid out as a host root
(tests/fixtures/make-node.py + /etc, /boot, /usr/sbin stand-in boot-loader tools, /run,
/var/lib/kubelet), and podman plays it. What is proven, from `podman logs`:
  - each preset's agent pod (`spinlane-agent run ...` as the chart wrote it) prints the node
    verdicts, and they equal `spinlane-agent preflight --root TREE` run on this host for the
    same tree (nic-address's text aside: preflight never asks the metadata service);
  - kernel_args.manage: the agent pod writes the grub drop-in and the reboot sentinel into
    the tree through the chart's own mounts (and runs the stand-in update-grub), and the
    chart's restore pod (restore: true) takes both back.
No kubelet exists here: the agent serves its device plugins and waits for one; cluster
reporting stays off (no API server: podman sets no KUBERNETES_SERVICE_HOST).
"""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
CHART = os.path.join(SRC, "helm", "spinlane")
sys.path.insert(0, HERE)
import kubepod  # noqa: E402

# the images scripts/test-images.sh builds (:latest); SPINLANE_PODS_{AGENT,DRIVER}_REPO
# name others (a developer's image with one binary replaced)
AGENT_IMAGE = os.environ.get("SPINLANE_PODS_AGENT_REPO", "localhost/spinlane-test/agent")
DRIVER_IMAGE = os.environ.get("SPINLANE_PODS_DRIVER_REPO", "localhost/spinlane-test/driver")
TAG = "pods"  # the chart refuses :latest; scripts/test-pods.sh tags the images so
NODE_NAME = "pods-node-1"
FAILS = []


def fail(msg):
    print("FAIL: " + msg, flush=True)
    FAILS.append(msg)


def step(msg):
    print("\n== %s (%ds)" % (msg, time.time() - T0), flush=True)


def run(cmd, check=True, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s%s" % (" ".join(cmd), r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    return r


def render(helm, *args):
    a = ["--set", "image.repository=%s,image.tag=%s,image.pullPolicy=Never" % (AGENT_IMAGE, TAG),
         "--set", "driverImage.repository=%s,driverImage.tag=%s,driverImage.pullPolicy=Never" % (DRIVER_IMAGE, TAG)]
    r = run([helm, "template", "sl", CHART, "-n", "spinlane"] + a + list(args))
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def make_host(work, name, fixture, os_id):
    """A fake node laid out as a host root: the fixture's /sys, /proc, /dev and
    rtnetlink dump, plus /etc (os-release, default/grub), /boot, stand-in update-grub and
    grubby in /usr/sbin (they log their calls to /boot/tools.log, through the fake root
    the agent gives them), /run with /var/run linked to it, /var/lib/kubelet."""
    base = os.path.join(work, "fixtures-" + name)
    run([sys.executable, os.path.join(SRC, "tests", "fixtures", "make-node.py"), base, fixture])
    tree = os.path.join(work, "host-" + name)
    shutil.move(os.path.join(base, fixture), tree)
    os.rmdir(base)
    for d in ("dev", "etc/default", "boot/grub", "usr/sbin", "run", "var/lib/kubelet/device-plugins",
              "var/lib/kubelet/plugins_registry", "var/lib/spinlane"):
        os.makedirs(os.path.join(tree, d), exist_ok=True)
    os.symlink("../run", os.path.join(tree, "var/run"))
    with open(os.path.join(tree, "etc/os-release"), "w") as f:
        f.write('ID=%s\nNAME="%s"\n' % (os_id, os_id))
    with open(os.path.join(tree, "etc/default/grub"), "w") as f:
        f.write('GRUB_CMDLINE_LINUX_DEFAULT="quiet"\n')
    for tool in ("update-grub", "grubby"):
        p = os.path.join(tree, "usr/sbin", tool)
        with open(p, "w") as f:
            f.write('#!/bin/sh\n# stand-in: records its call where the host\'s /boot is\n'
                    'echo "%s $*" >> "${SPINLANE_FAKE_ROOT:-}/boot/tools.log"\n' % tool)
        os.chmod(p, 0o755)
    return tree


VERDICT = re.compile(r"^(PASS|WARN|FAIL|SKIP) ([a-z0-9-]+): (.*)$")


def verdict_blocks(text):
    """[[(status, id, message)]] of each verdict block ending in a summary line."""
    blocks, cur = [], []
    for line in text.splitlines():
        m = VERDICT.match(line)
        if m:
            cur.append((m.group(1), m.group(2), m.group(3)))
        elif line.startswith("summary: "):
            blocks.append(cur)
            cur = []
    return blocks


def podman(*args, check=True):
    return run(["podman"] + list(args), check=check)


def play(work, name, pod, configmaps):
    """podman kube play the pod (with the rendered ConfigMaps); returns the pod's name."""
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(pod, f, sort_keys=False)
    cmd = ["kube", "play", "--quiet"]
    for cm in configmaps:
        cmd += ["--configmap", cm]
    # one of an interrupted run would be in the way; a failed play may leave it too
    podman("pod", "rm", "-f", pod["metadata"]["name"], check=False)
    PODS.append(pod["metadata"]["name"])
    podman(*(cmd + [path]))
    return pod["metadata"]["name"]


def logs(ctr):
    r = podman("logs", ctr, check=False)
    return r.stdout + r.stderr


def wait_for(what, pred, timeout=180, every=1.0):
    """pred() until true; generous: a loaded 2-CPU machine starts containers slowly."""
    end = time.time() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.time() > end:
            return None
        time.sleep(every)


def stop(pod):
    podman("pod", "rm", "-f", "-t", "5", pod, check=False)
    if pod in PODS:
        PODS.remove(pod)


PODS = []


def configmaps(work, docs, tag):
    out = []
    for d in docs:
        if d["kind"] == "ConfigMap":
            p = os.path.join(work, "%s-cm-%s.yaml" % (tag, d["metadata"]["name"]))
            with open(p, "w") as f:
                yaml.safe_dump(d, f)
            out.append(p)
    return out


def fixture_mount(pod, tree):
    """The fake node's stand-in for the kernel's rtnetlink answers (make-node.py's
    spinlane-fixture/, which the agent reads under a fake root instead of asking the
    kernel) into every container that sees the host at /host: not the chart's, the fake
    node's own."""
    pod["spec"].setdefault("volumes", []).append(
        {"name": "fixture-netlink", "hostPath": {"path": os.path.join(tree, "spinlane-fixture"), "type": "Directory"}})
    for c in pod["spec"].get("initContainers", []) + pod["spec"]["containers"]:
        if any(m["mountPath"].startswith("/host/") for m in c.get("volumeMounts", [])):
            c["volumeMounts"].append({"name": "fixture-netlink", "mountPath": "/host/spinlane-fixture", "readOnly": True})
    return "test only: the fake node's rtnetlink stand-in mounted at /host/spinlane-fixture"


def agent_pod(work, helm, agent, tag, fixture, os_id, helm_args, cmdline=None, prepare=None, running=None):
    """Render, play the agent DaemonSet's pod on a fresh host tree, wait for its node
    verdicts, compare them with preflight on the host. Returns (tree, verdicts, log)."""
    step("%s: the agent pod (helm %s)" % (tag, " ".join(helm_args)))
    docs = render(helm, *helm_args)
    tree = make_host(work, tag, fixture, os_id)
    if cmdline:
        with open(os.path.join(tree, "proc/cmdline"), "w") as f:
            f.write(cmdline + "\n")
    if prepare:
        prepare(tree)
    ds = [d for d in docs if d["kind"] == "DaemonSet"]
    if len(ds) != 1:
        fail("%s: %d DaemonSets rendered, expected 1" % (tag, len(ds)))
        return tree, [], ""
    pod, notes = kubepod.to_pod(ds[0], tree, {"spec.nodeName": NODE_NAME}, name="agent-" + tag)
    notes.append(fixture_mount(pod, tree))
    for n in notes:
        print("  podman: " + n)
    print("  hostPaths: " + ", ".join("%s=%s" % kv for kv in sorted(kubepod.host_paths(ds[0]).items())))
    cms = configmaps(work, docs, tag)
    cfg = [d for d in docs if d["kind"] == "ConfigMap" and "config.json" in d.get("data", {})][0]["data"]["config.json"]
    cfg_path = os.path.join(work, tag + "-config.json")
    with open(cfg_path, "w") as f:
        f.write(cfg)
    name = play(work, "agent-" + tag, pod, cms)
    ctr = name + "-agent"
    # the node verdicts: the block after node preparation's summary
    text = wait_for("verdicts", lambda: (lambda t: t if len(verdict_blocks(t)) >= 2 else None)(logs(ctr)))
    out = logs(ctr)
    state = podman("inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", ctr, check=False).stdout.strip()
    if text and running:
        running(tree)
    stop(name)
    if not text:
        fail("%s: the agent pod printed no node verdicts within 180 s (container %s); its log:\n%s" %
             (tag, state, out[-3000:]))
        return tree, [], out
    for line in out.splitlines():
        print("  | " + line)
    got = verdict_blocks(text)[1]
    r = run([agent, "preflight", "--root", tree, "--config", cfg_path], check=False)
    want = verdict_blocks(r.stdout)
    if not want:
        fail("%s: preflight on the host printed no verdicts: %s" % (tag, r.stdout + r.stderr))
        return tree, got, out

    def key(v):  # nic-address: preflight never asks the metadata service, the agent does
        return (v[0], v[1], "" if v[1] == "nic-address" else v[2])
    if [key(v) for v in got] != [key(v) for v in want[0]]:
        a, b = set(map(key, got)), set(map(key, want[0]))
        fail("%s: the agent pod's verdicts differ from preflight --root TREE on the host:\n  pod only:\n    %s\n  host only:\n    %s" %
             (tag, "\n    ".join(" ".join(v) for v in got if key(v) not in b),
              "\n    ".join(" ".join(v) for v in want[0] if key(v) not in a)))
    else:
        print("  the pod's %d node verdicts equal preflight --root TREE on the host (%s)" %
              (len(got), ", ".join("%s %s" % (v[0], v[1]) for v in got)))
    return tree, got, out


def main():
    work, agent, helm = sys.argv[1:4]
    # SPINLANE_PODS_ONLY=aks,kargs,...: only those parts (while working on one)
    only = [x for x in os.environ.get("SPINLANE_PODS_ONLY", "").split(",") if x]
    presets = [
        ("eks", "eks-al2023", "amzn", ["-f", os.path.join(CHART, "values-eks.yaml")]),
        ("aks", "aks-mana", "ubuntu", ["-f", os.path.join(CHART, "values-aks.yaml")]),
        ("dra", "eks-al2023", "amzn", ["-f", os.path.join(CHART, "values-eks.yaml"), "--set", "resourceApi.mode=dra"]),
    ]
    parts = [(t, (lambda a: lambda: agent_pod(work, helm, agent, *a))((t, f, o, args))) for t, f, o, args in presets]
    parts += [("kargs", lambda: kargs(work, helm, agent)), ("cdi", lambda: cdi(work, helm, agent)), ("launch", lambda: launch(work, helm)),
              ("mana", lambda: mana(work, helm))]
    tagged = []
    try:
        for img in (AGENT_IMAGE, DRIVER_IMAGE):
            podman("tag", img + ":latest", "%s:%s" % (img, TAG))
            tagged.append(img)
        for name, fn in parts:
            if not only or name in only:
                try:
                    fn()
                except (RuntimeError, OSError, KeyError, IndexError, ValueError) as e:
                    fail("%s: %s: %s" % (name, type(e).__name__, e))
    finally:
        for p in list(PODS):
            stop(p)
        for img in tagged:
            podman("untag", "%s:%s" % (img, TAG), "%s:%s" % (img, TAG), check=False)
    print()
    if FAILS:
        print("test-pods: %d failure(s):\n  %s" % (len(FAILS), "\n  ".join(FAILS)))
        return 1
    print("test-pods: PASS (%ds)" % (time.time() - T0))
    return 0


def run_to_exit(work, name, pod, ctr, timeout=180):
    """Play pod, wait for container ctr to exit; (state, log). The pod is removed."""
    try:
        play(work, name, pod, [])
    except RuntimeError as e:
        fail("%s: podman kube play: %s" % (name, e))
        return None, ""
    st = wait_for(name, lambda: (lambda s: s if s.startswith("exited") else None)(
        podman("inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", ctr, check=False).stdout.strip()), timeout)
    out = logs(ctr)
    stop(name)
    if not st:
        fail("%s: container %s did not exit within %d s; its log:\n%s" % (name, ctr, timeout, out[-2000:]))
    return st, out


def launcher_verdicts(out):
    """{id: (status, message)} of spinlane-launch's verdict lines (the last block)."""
    b = verdict_blocks(out)
    return {v[1]: (v[0], v[2]) for v in (b[-1] if b else [])}


def drop_cpu(pod):
    for c in pod["spec"]["containers"]:
        for k in ("requests", "limits"):
            c.get("resources", {}).get(k, {}).pop("cpu", None)


def launch(work, helm):
    """The helm-test pod and the example driver pod print spinlane-launch's verdicts through
    the runtime; with the chart's CPU limit runc gives the container a real CFS quota and
    cpu-quota FAILs, without a CPU limit it PASSes. No device plugin or kubelet here: no
    SPINLANE_* grant, so allocation-env fails and devices skips (said in the log)."""
    for tag, values in (("eks", "values-eks.yaml"), ("aks", "values-aks.yaml")):
        step("%s: the helm-test pod and the example driver pod (spinlane-launch)" % tag)
        docs = render(helm, "-f", os.path.join(CHART, values), "--set", "example.enabled=true",
                      "--set", "example.appImage=%s:%s" % (DRIVER_IMAGE, TAG),
                      "--set-json", 'example.appCommand=["sleep","2"]')
        tree = make_host(work, "launch-" + tag, "eks-x86", "debian")
        tests = [d for d in docs if d["kind"] == "Pod" and d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]
        example = [d for d in docs if d["kind"] == "Deployment"]
        if len(tests) != 1 or len(example) != 1:
            fail("%s: rendered %d helm-test pods and %d example Deployments, expected one each" % (tag, len(tests), len(example)))
            continue
        vals = {"metadata.uid": "pods-uid-" + tag}
        for what, doc, ctr, cpu in (("helm-test", tests[0], "check-only", True), ("helm-test", tests[0], "check-only", False),
                                    ("example", example[0], "media-driver", True)):
            name = "%s-%s-%s" % (what, tag, "limit" if cpu else "nolimit")
            pod, notes = kubepod.to_pod(doc, tree, vals, name=name, keep=("/sys/devices",))
            if not cpu:
                drop_cpu(pod)
                notes.append("cpu requests and limits dropped (the no-quota arm)")
            for n in notes:
                print("  podman: " + n)
            st, out = run_to_exit(work, name, pod, name + "-" + ctr)
            for line in out.splitlines():
                print("  | " + line)
            v = launcher_verdicts(out)
            if not v:
                fail("%s: %s printed no spinlane-launch verdicts (%s)" % (tag, name, st))
                continue
            q = v.get("cpu-quota", ("none", ""))
            want = "FAIL" if cpu else "PASS"
            if q[0] != want:
                fail("%s: %s: cpu-quota %s, want %s (%s)" % (tag, name, q[0], want, q[1]))
            else:
                print("  %s: %d verdicts through the runtime; cpu-quota %s: %s" % (name, len(v), q[0], q[1]))


def mana(work, helm):
    """MANA inside the driver pod: the AKS helm-test pod as the chart renders it (own
    network namespace, the host's /sys/devices read-only at /sys/devices) and as it was
    before (no host mount). A veth in this machine's network namespace stands in for the
    VF's netdev (this kernel has no dummy netdevs); a fake root (spinlane-launch --root,
    its test option) maps the VF's PCI device to sys/devices/virtual, where the chart's
    host /sys/devices volume is mounted a second time (its net/ lists the veth, which the
    pod's own sysfs would not), and nothing in the arm without that volume. The grant is given as the device plugin
    gives it (SPINLANE_* env)."""
    step("mana: the VF's net/<if>/address inside the driver pod")
    pci, mac = "7870:00:00.0", "02:5a:%02x:%02x:00:01" % ((os.getpid() >> 8) & 0xff, os.getpid() & 0xff)
    dummy = "slmana%d" % (os.getpid() % 100000)
    r = run(["ip", "link", "add", dummy, "address", mac, "type", "veth", "peer", "name", dummy + "p"], check=False)
    if r.returncode != 0:
        fail("mana: cannot make the dummy netdev %s: %s" % (dummy, r.stderr.strip()))
        return
    try:
        fake = os.path.join(work, "mana-root")
        os.makedirs(os.path.join(fake, "sys/bus/pci/devices"))
        os.makedirs(os.path.join(fake, "dev/infiniband"))
        open(os.path.join(fake, "dev/infiniband/uverbs0"), "w").close()
        # spinlane-launch resolves every path inside its root (common/hostfs): no link
        # may lead out of /fake. The VF's PCI device is a link inside it, to
        # sys/devices/virtual; sys/devices is a mount point that gets, in the chart's
        # arm, the chart's own host /sys/devices volume (a second mount of it), and in
        # the other arm nothing (the pod without the host's view)
        os.makedirs(os.path.join(fake, "sys/devices"))
        os.symlink("../../../devices/virtual", os.path.join(fake, "sys/bus/pci/devices", pci))
        docs = render(helm, "-f", os.path.join(CHART, "values-aks.yaml"))
        test = [d for d in docs if d["kind"] == "Pod" and d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"][0]
        env = [("SPINLANE_ISOLATED_CPUS", "0-1"), ("SPINLANE_ISOLATED_CORES", "0"), ("SPINLANE_DPDK_NICS", pci),
               ("SPINLANE_NIC_0_PCI", pci), ("SPINLANE_NIC_0_MAC", mac), ("SPINLANE_NIC_0_NUMA", "0"),
               ("SPINLANE_NIC_0_KIND", "mana"), ("SPINLANE_NIC_0_DRIVER", "mana"),
               ("SPINLANE_NIC_0_DEVARGS", "%s,mac=%s" % (pci, mac)), ("SPINLANE_NIC_0_DEVICES", "/dev/infiniband/uverbs0"),
               ("SPINLANE_NIC_0_IPV4", "10.0.0.10/24"), ("SPINLANE_NIC_0_GATEWAY", "10.0.0.1")]
        results = {}
        for arm in ("chart", "no-host-sys"):
            name = "mana-" + arm
            pod, notes = kubepod.to_pod(test, work, {"metadata.uid": "pods-uid-mana"}, name=name, keep=("/sys/devices",))
            spec = pod["spec"]
            c = spec["containers"][0]
            if arm == "no-host-sys":
                spec["volumes"] = [v for v in spec["volumes"] if v["name"] != "host-sys-devices"]
                c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "host-sys-devices"]
                notes.append("the chart's host /sys/devices mount removed (the driver pod before the fix)")
            elif not any(m["mountPath"] == "/sys/devices" for m in c["volumeMounts"]):
                fail("mana: the AKS helm-test pod mounts no /sys/devices (the chart's MANA mount is missing)")
            if spec.get("hostNetwork"):
                fail("mana: the AKS helm-test pod has hostNetwork (the test needs its own netns)")
            c["env"] = c.get("env", []) + [{"name": k, "value": v} for k, v in env]
            c["command"] = c["command"] + ["--root", "/fake"]
            spec["volumes"].append({"name": "fake-root", "hostPath": {"path": fake, "type": "Directory"}})
            c["volumeMounts"].append({"name": "fake-root", "mountPath": "/fake"})
            if arm == "chart":
                c["volumeMounts"].append({"name": "host-sys-devices", "mountPath": "/fake/sys/devices", "readOnly": True})
                notes.append("test only: the chart's host /sys/devices volume also mounted at /fake/sys/devices")
            notes += ["test only: the MANA grant as SPINLANE_* env (the device plugin's Allocate answer)",
                      "test only: --root /fake, where the VF's PCI device is /sys/devices/virtual and the veth %s (%s) its netdev" % (dummy, mac)]
            for n in notes:
                print("  podman: " + n)
            st, out = run_to_exit(work, name, pod, name + "-check-only")
            v = launcher_verdicts(out)
            results[arm] = v.get("devices", ("none", out[-1500:]))
            print("  %s: devices %s: %s" % (arm, results[arm][0], results[arm][1]))
        path = "/sys/bus/pci/devices/%s/net/<if>/address" % pci
        if results.get("no-host-sys", ("",))[0] != "FAIL" or path not in results["no-host-sys"][1]:
            fail("mana: without the host's /sys/devices the devices check should FAIL naming %s: %s" % (path, results.get("no-host-sys")))
        if results.get("chart", ("",))[0] != "PASS":
            fail("mana: the chart's driver pod (host /sys/devices read only) should PASS devices: %s" % (results.get("chart"),))
    finally:
        run(["ip", "link", "del", dummy], check=False)


def cdi(work, helm, agent):
    """The device plugin's CDI mode (cdi.enabled): the agent pod writes the NIC resource's
    CDI spec into the host tree; podman applies it (`--device spinlane.io/dpdk-nic=<bdf>`,
    from /var/run/cdi, as containerd does for the kubelet) to the EKS helm-test pod's
    container, whose spinlane-launch then finds and opens the NIC's device nodes. The
    fixture's /dev/vfio nodes are made character devices (1:3, /dev/null's numbers: CDI
    needs real device nodes); the spec's host paths are re-rooted into the tree, as every
    hostPath is; the env is what the device plugin's Allocate answer sets."""
    def chardevs(tree):
        d = os.path.join(tree, "dev/vfio")
        for n in os.listdir(d):
            p = os.path.join(d, n)
            if os.path.isfile(p):
                os.unlink(p)
                os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    specs = {}

    def grab(tree):
        p = os.path.join(tree, "var/run/cdi/spinlane.io-dpdk-nic.json")
        ok = wait_for("cdi spec", lambda: os.path.exists(p), timeout=60)
        if ok:
            with open(p) as f:
                specs["spec"] = json.load(f)
            specs["tree"] = tree
    args = ["-f", os.path.join(CHART, "values-eks.yaml"), "--set", "config.cdi.enabled=true",
            "--set-json", "config.nics.interfaces=[]", "--set-json", 'config.nics.pci=["0000:00:06.0"]']
    agent_pod(work, helm, agent, "cdi", "eks-x86", "amzn", args, prepare=chardevs, running=grab)
    if "spec" not in specs:
        fail("cdi: the agent pod wrote no CDI spec (var/run/cdi/spinlane.io-dpdk-nic.json) in the host tree")
        return
    spec, tree = specs["spec"], specs["tree"]
    dev = spec["devices"][0]
    nodes = dev["containerEdits"]["deviceNodes"]
    print("  the agent's CDI spec: kind %s, devices %s; %s: %s" % (
        spec["kind"], [d["name"] for d in spec["devices"]], dev["name"], [n["path"] for n in nodes]))
    for d in spec["devices"]:
        for n in d["containerEdits"].get("deviceNodes", []):
            n["hostPath"] = os.path.join(tree, n.get("hostPath", n["path"]).lstrip("/"))
    for m in spec.get("containerEdits", {}).get("mounts", []):
        m["hostPath"] = os.path.join(tree, m["hostPath"].lstrip("/"))
        os.makedirs(m["hostPath"], exist_ok=True)
    os.makedirs("/var/run/cdi", exist_ok=True)
    path = "/var/run/cdi/spinlane-pods-%d.json" % os.getpid()
    with open(path, "w") as f:
        json.dump(spec, f)
    try:
        docs = render(helm, *args)
        test = [d for d in docs if d["kind"] == "Pod" and d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"][0]
        c = test["spec"]["containers"][0]
        sc = c["securityContext"]
        pci = dev["name"]
        env = {"SPINLANE_ISOLATED_CPUS": "0-1", "SPINLANE_ISOLATED_CORES": "0", "SPINLANE_DPDK_NICS": pci,
               "SPINLANE_NIC_0_PCI": pci, "SPINLANE_NIC_0_MAC": "02:00:00:00:00:06", "SPINLANE_NIC_0_NUMA": "0",
               "SPINLANE_NIC_0_KIND": "ena", "SPINLANE_NIC_0_DRIVER": "vfio-pci", "SPINLANE_NIC_0_DEVARGS": pci,
               "SPINLANE_NIC_0_DEVICES": ",".join(n["path"] for n in nodes),
               "SPINLANE_NIC_0_IPV4": "10.0.0.10/24", "SPINLANE_NIC_0_GATEWAY": "10.0.0.1", "SPINLANE_POD_UID": "pods-uid-cdi"}
        cmd = ["run", "--rm", "--name", "cdi-check-only", "--device", "%s=%s" % (spec["kind"], pci), "--cap-drop", "ALL"]
        cmd += ["--cap-add=" + ",".join(sc["capabilities"]["add"])] if sc["capabilities"].get("add") else []
        cmd += ["--read-only"] if sc.get("readOnlyRootFilesystem") else []
        cmd += ["--security-opt", "no-new-privileges"] if sc.get("allowPrivilegeEscalation") is False else []
        for k, v in sorted(env.items()):
            cmd += ["-e", "%s=%s" % (k, v)]
        cmd += ["--entrypoint", c["command"][0], "%s:%s" % (DRIVER_IMAGE, TAG)] + c["command"][1:]
        print("  podman " + " ".join(cmd[:9]) + " ... (the EKS helm-test container's command, capabilities, "
              "read-only root; SPINLANE_* as the device plugin's Allocate sets them)")
        podman("rm", "-f", "cdi-check-only", check=False)
        r = podman(*cmd, check=False)
        out = r.stdout + r.stderr
        for line in out.splitlines():
            print("  | " + line)
        v = launcher_verdicts(out).get("devices")
        want = "%d device nodes of 1 NIC exist and open" % len(nodes)
        if not v or v[0] != "PASS" or want not in v[1]:
            fail("cdi: the container given %s=%s by podman: devices %s, want PASS (%s)" % (spec["kind"], pci, v, want))
        else:
            print("  the NIC's device nodes came through the agent's CDI spec: devices %s: %s" % v)
    finally:
        os.unlink(path)


def kargs(work, helm, agent):
    """kernel_args.manage on AKS (the only way to isolated cores and boot hugepages
    there): the agent pod writes the drop-in and the sentinel into the host tree, the
    chart's restore pod takes them back."""
    args = ["-f", os.path.join(CHART, "values-aks.yaml"), "--set", "config.kernel_args.manage=true",
            "--set-string", "config.cores.cpus=2-3"]
    # an AKS node image as it comes: no isolation arguments on its command line
    tree, got, out = agent_pod(work, helm, agent, "kargs", "aks-mana", "ubuntu", args,
                               cmdline="BOOT_IMAGE=/boot/vmlinuz-6.8.0-1021-azure root=PARTUUID=0 ro console=ttyS0")
    dropin = os.path.join(tree, "etc/default/grub.d/99-spinlane.cfg")
    sentinel = os.path.join(tree, "run/reboot-required")
    tools = os.path.join(tree, "boot/tools.log")
    ka = [v for v in got if v[1] == "kernel-args"]
    print("  kernel-args: %s" % (" ".join(ka[0]) if ka else "(none)"))
    ok = True
    for what, p in (("the grub drop-in", dropin), ("the reboot sentinel", sentinel), ("update-grub's call", tools)):
        if os.path.exists(p):
            print("  %s is in the host tree: %s" % (what, os.path.relpath(p, tree)))
        else:
            fail("kargs: %s is not in the host tree (%s); kernel-args verdict: %s" %
                 (what, os.path.relpath(p, tree), " ".join(ka[0]) if ka else "none"))
            ok = False
    if not ok:
        return
    with open(dropin) as f:
        text = f.read()
    if "rcu_nocbs=2-3" not in text:
        fail("kargs: the drop-in lacks the config's arguments: %r" % text)

    step("kargs: the chart's restore pod (restore: true)")
    docs = render(helm, *(args + ["--set", "restore=true"]))
    ds = [d for d in docs if d["kind"] == "DaemonSet"][0]
    pod, notes = kubepod.to_pod(ds, tree, {"spec.nodeName": NODE_NAME}, name="restore-kargs")
    # keep the init container after it ran, for its log (podman removes a "once" one)
    pod["metadata"].setdefault("annotations", {})["io.podman.annotations.init.container.type"] = "always"
    for n in notes + ["init containers of type always (kept for their logs)"]:
        print("  podman: " + n)
    name, ctr = "restore-kargs", "restore-kargs-restore"
    try:
        play(work, name, pod, configmaps(work, docs, "restore"))
    except RuntimeError as e:  # kube play fails when an init container exits non-zero
        out = logs(ctr)
        stop(name)
        fail("kargs: the restore pod failed: %s; the restore init container's log:\n%s" % (e, out))
        return
    st = wait_for("restore", lambda: (lambda s: s if s.startswith("exited") else None)(
        podman("inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", ctr, check=False).stdout.strip()))
    out = logs(ctr)
    stop(name)
    for line in out.splitlines():
        print("  | " + line)
    if not st:
        fail("kargs: the restore init container did not finish within 180 s")
    for what, p in (("the grub drop-in", dropin), ("the reboot sentinel", sentinel)):
        if os.path.exists(p):
            fail("kargs: restore left %s in the host tree (%s) (init container: %s)" % (what, os.path.relpath(p, tree), st))
        else:
            print("  restore removed %s" % what)
    with open(tools) as f:
        calls = f.read().split("\n")
    print("  boot-loader tool calls: %s" % [c for c in calls if c])


if __name__ == "__main__":
    T0 = time.time()
    sys.exit(main())

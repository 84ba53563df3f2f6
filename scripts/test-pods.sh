#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The chart's pods run by a real container runtime: podman 4.3 (`podman kube play`) with
# runc and catatonit, on the images scripts/test-images.sh built (podman shares buildah's
# image store). tests/pods/test-pods.py renders the chart per preset, turns each workload
# into a Pod on a fake host tree and proves the verdicts from `podman logs` (its header
# says what). podman runs with a containers.conf of its own (CONTAINERS_CONF): runc with
# cgroupfs, the file events logger, and open-file/process limits within this sandbox's
# hard limit (runc cannot raise RLIMIT_NOFILE past it); the host's
# /etc/containers/containers.conf is not touched. Every pod and scratch folder it makes is
# removed at exit, also on failure. Exit 77 (SKIP) when the machine lacks a tool or the
# images, decided before anything runs; with CI=true that is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

. scripts/lib-scratch.sh
scratch_name=test-pods
[ "$(id -u)" -eq 0 ] || skip "needs root (podman with runc, hostPath mounts, privileged pods)"
for t in podman runc catatonit python3; do
  command -v "$t" >/dev/null 2>&1 || [ -x "/usr/libexec/podman/$t" ] ||
    skip "no $t (scripts/install-deps.sh installs podman, runc, catatonit)"
done
/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "no python3-yaml"
agent=${SPINLANE_AGENT:-$repo/build/agent/spinlane-agent}
[ -x "$agent" ] || skip "no host build of spinlane-agent at $agent (scripts/test.sh builds build/; or set SPINLANE_AGENT)"
# helm: SPINLANE_HELM, or the one the helm tests fetched (tests/deploy/get-kubectl.sh)
helm=${SPINLANE_HELM:-}
for h in "$repo/build-asan/tools/bin/helm" "$repo/build/tools/bin/helm"; do
  [ -n "$helm" ] || [ ! -x "$h" ] || helm=$h
done
if [ -z "$helm" ]; then
  bash tests/deploy/get-kubectl.sh "$repo/build/tools" >&2 || skip "no helm (tests/deploy/get-kubectl.sh could not fetch it)"
  helm=$repo/build/tools/bin/helm
fi

scratch_begin test-pods

cat >"$tmp/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF=$tmp/containers.conf
for img in agent driver; do
  podman image exists "localhost/spinlane-test/$img:latest" ||
    skip "no image localhost/spinlane-test/$img:latest (scripts/test-images.sh builds it)"
done
podman run --rm --network none localhost/spinlane-test/agent:latest --version >"$tmp/probe.log" 2>&1 ||
  skip "podman cannot run a container here: $(tail -3 "$tmp/probe.log")"

t0=$(date +%s)
mkdir "$tmp/work"
/usr/bin/python3 tests/pods/test-pods.py "$tmp/work" "$agent" "$helm"
echo "test-pods: $(($(date +%s) - t0)) s"

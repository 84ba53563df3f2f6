#!/usr/bin/env bash
# The main job: install what is missing, build, and run `spinlane-agent preflight` on
# this machine. Exit 0 when preflight ran (its verdicts say whether the node is ready).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

echo "== spinlane-agent preflight (this machine)"
set +e
./build/agent/spinlane-agent preflight "$@"
rc=$?
set -e
case $rc in
  0) echo "== node is ready for a kernel-bypass media driver" ;;
  1) echo "== node is not ready: the FAIL lines above say what to change" ;;
  *) echo "== preflight could not run (exit $rc)"; exit "$rc" ;;
esac

#!/usr/bin/env bash
# The main job: install what is missing, build (with the pinned Aeron and the bypass
# media driver), run `spinlane-agent preflight` on this machine, then show the bypass:
# two stock aeronmd with libspinlane_aeron.so on DPDK over a veth pair between two network
# namespaces, stock Aeron samples across it (scripts/demo-bypass.py). Exit 0 when preflight
# ran (its verdicts say whether the node is ready) and the demo passed or said why it
# cannot run here.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
. scripts/aeron-source.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${aeron[@]}" | grep -E '^-- Aeron' || true
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

/usr/bin/python3 scripts/demo-bypass.py build

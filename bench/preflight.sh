#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Benchmark of `spinlane-agent preflight`: median wall time and peak RSS on the largest
# standard fixture (eks-x86) and on the generated 2-socket, 192-CPU, 16-NIC node (big).
# Targets: < 5 ms and < 4 MiB. Run on demand, not a test:
#
#     bench/preflight.sh [BUILD_DIR] [RUNS]     (default: build-rel, 200 runs)
#
# BUILD_DIR should be an optimised build without sanitizers, e.g.
#     cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DSPINLANE_TESTS=OFF
#     cmake --build build-rel -j2 --target spinlane-agent
# Runs go through bench/preflight-run.c (fork+exec from a tiny parent, wait4 rusage),
# compiled here with cc; fixture trees are generated into a temp dir and removed.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-rel}
runs=${2:-200}
bin=$build/agent/spinlane-agent
[ -x "$bin" ] || { echo "no $bin: build it first (see the top of this script)" >&2; exit 2; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3
work=$(mktemp -d /tmp/sl-inv-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
cc -O2 -o "$work/preflight-run" "$src/bench/preflight-run.c"
"$py" "$src/tests/fixtures/make-node.py" "$work" eks-x86 big

echo "spinlane-agent preflight; $(uname -sr); $(nproc) CPUs here (shared: expect noise); warm-up 20 runs"
for node in eks-x86 big; do
  for mode in "" --json; do
    printf '%-8s %-7s ' "$node" "${mode:-human}"
    "$work/preflight-run" "$runs" 20 "$bin" preflight --root "$work/$node" $mode
  done
done
printf '%-16s ' "baseline --help"
"$work/preflight-run" "$runs" 20 "$bin" --help

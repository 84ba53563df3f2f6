#!/usr/bin/env bash
# Every test: install what is missing, build with ASan+UBSan (gcc) and run the whole
# ctest suite, then build the fuzz targets with libFuzzer (clang) and run them briefly.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

jobs=$(nproc)
# The Aeron adapter (driver/aeron) and its tests need an Aeron tree the user built: the
# source and build trees given by SPINLANE_AERON_DIR / SPINLANE_AERON_BUILD_DIR, else
# /opt/aeron/src and /opt/aeron/build when they are there; without, they are skipped.
aeron_src=${SPINLANE_AERON_DIR:-/opt/aeron/src}
aeron_build=${SPINLANE_AERON_BUILD_DIR:-/opt/aeron/build}
aeron=()
if [ -f "$aeron_src/version.txt" ] && [ -e "$aeron_build/lib/libaeron_driver.so" ]; then
  aeron=(-DSPINLANE_AERON_DIR="$aeron_src" -DSPINLANE_AERON_BUILD_DIR="$aeron_build")
fi
# the plain optimised build must be warning-free too (-Werror)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${aeron[@]}" >/dev/null
cmake --build build -j"$jobs"
# valgrind memcheck over the daemon paths, in the build without sanitizers
(cd build && ctest --output-on-failure -L memcheck --no-tests=ignore)
cmake -S . -B build-asan -DSPINLANE_SANITIZE=ON "${aeron[@]}" >/dev/null
cmake --build build-asan -j"$jobs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd build-asan && ctest --output-on-failure --timeout 600)

if command -v clang >/dev/null 2>&1; then
  CC=clang cmake -S . -B build-fuzz -DSPINLANE_SANITIZE=ON -DSPINLANE_FUZZ=ON "${aeron[@]}" >/dev/null
  cmake --build build-fuzz -j"$jobs"
  (cd build-fuzz && SPINLANE_FUZZ_SECONDS=${SPINLANE_FUZZ_SECONDS:-10} ctest --output-on-failure -L fuzz)
fi

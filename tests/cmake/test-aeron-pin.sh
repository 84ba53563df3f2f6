#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Aeron pin (cmake/aeron.cmake) refuses a source that is not the pinned release, with
# an error naming what was found and the pin: a git-archive tarball of another commit, a
# tarball with no commit id, a tree whose version.txt is another version, a path that does
# not exist. Each is a real configure of this project (SPINLANE_TESTS=OFF) with its own
# empty Aeron cache, which must stay without a build.
# Usage: test-aeron-pin.sh SOURCE_DIR CMAKE
set -u
src=${1:?source dir}
cmake=${2:-cmake}
pin=5b62f21d917af027cdf5a3241aa5f355149b04fa
command -v git >/dev/null || { echo "SKIP: no git (Debian package git)"; exit 77; }
tmp=$(mktemp -d /tmp/sl-aeron-pin.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0

# a small git repository: its archive is a real `git archive` tarball of another commit
repo=$tmp/repo
mkdir -p "$repo" && echo 1.52.2 > "$repo/version.txt"
git -C "$repo" init -q && git -C "$repo" -c user.email=t@t -c user.name=t add . &&
  git -C "$repo" -c user.email=t@t -c user.name=t commit -qm x
other=$(git -C "$repo" rev-parse HEAD)
git -C "$repo" archive --format=tar.gz --prefix=aeron-1.52.2/ HEAD > "$tmp/other.tar.gz"
tar -C "$repo" -czf "$tmp/plain.tar.gz" version.txt
mkdir -p "$tmp/tree-1.47.3" && echo 1.47.3 > "$tmp/tree-1.47.3/version.txt"
mkdir -p "$tmp/not-aeron"

# expect NAME SOURCE TEXT...: configure fails and its output holds every TEXT
expect() {
  local name=$1 source=$2; shift 2
  n=$((n + 1))
  local out rc
  out=$("$cmake" -S "$src" -B "$tmp/b-$name" -DSPINLANE_TESTS=OFF -DSPINLANE_AERON_SOURCE="$source" \
        -DSPINLANE_AERON_CACHE_DIR="$tmp/cache-$name" 2>&1)
  rc=$?
  out=$(tr -s ' \n' '  ' <<<"$out") # CMake folds long messages
  local ok=1
  [ $rc -ne 0 ] || ok=0
  for t in "$@"; do
    grep -qF -- "$t" <<<"$out" || ok=0
  done
  if ls "$tmp/cache-$name"/*/build >/dev/null 2>&1; then ok=0; fi
  if [ $ok = 1 ]; then
    echo "ok   $name: refused: $(grep -m1 -o 'Aeron: .*' <<<"$out" | cut -c1-200)"
  else
    echo "FAIL $name: configure exited $rc, wanted a refusal naming: $*"
    echo "$out" | tail -20
    fail=$((fail + 1))
  fi
}
expect other-commit "$tmp/other.tar.gz" "is a tarball of commit $other, not $pin"
expect no-commit "$tmp/plain.tar.gz" "carries no commit id" "$pin"
expect old-tree "$tmp/tree-1.47.3" "is Aeron 1.47.3 (its version.txt), not 1.52.2" "$pin"
expect not-a-tree "$tmp/not-aeron" "is not an Aeron source tree (no version.txt)"
expect missing "$tmp/nothing-here.tar.gz" "does not exist"
echo "$n checks, $fail failed"
[ $fail = 0 ]

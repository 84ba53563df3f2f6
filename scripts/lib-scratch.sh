# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced (not run) by scripts/test-images.sh, scripts/test-pods.sh and
# scripts/build-arm64.sh: the one copy of what they share.
#   scratch_begin NAME   NAME ("test-images") prefixes their messages; makes $tmp (a
#                        scratch folder), starts the clock ($t_start) and the traps: at exit,
#                        also on failure or a signal, the bind mounts in binds[] are
#                        unmounted (last first), the buildah containers in containers[]
#                        removed, $tmp deleted; the exit status is kept.
#   skip WHY             exit 77 (SKIP) with WHY; with CI=true a failure instead: CI has
#                        every tool these scripts need, so a skip there hides a defect.
#   fail WHY             exit 1 with WHY.
#   step WHAT            a heading with the seconds since scratch_begin.
# A script may set scratch_on_exit to a command run first at exit (e.g. removing pods).

scratch_name=${scratch_name:-spinlane}
containers=()
binds=()
tmp=
scratch_on_exit=
t_start=$(date +%s)

skip() {
  if [ "${CI:-}" = true ]; then
    echo "$scratch_name: FAIL: $* (CI=true: $scratch_name never skips)" >&2
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
fail() { echo "$scratch_name: FAIL: $*" >&2; exit 1; }
step() { printf '\n== %s (%ds)\n' "$*" "$(($(date +%s) - t_start))"; }

scratch_cleanup() {
  local rc=$? i c
  set +e
  [ -z "$scratch_on_exit" ] || eval "$scratch_on_exit"
  for ((i = ${#binds[@]} - 1; i >= 0; i--)); do
    umount -R "${binds[$i]}" 2>/dev/null || umount -Rl "${binds[$i]}" 2>/dev/null
  done
  for c in "${containers[@]}"; do
    buildah umount "$c" >/dev/null 2>&1
    buildah rm "$c" >/dev/null 2>&1
  done
  [ -z "$tmp" ] || rm -rf "$tmp"
  exit $rc
}

scratch_begin() {
  scratch_name=$1
  t_start=$(date +%s)
  tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/$scratch_name.XXXXXX")
  trap scratch_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP
}

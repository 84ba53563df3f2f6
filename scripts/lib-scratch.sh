# shellcheck shell=bash disable=SC2154,SC2034
# (SC2154, SC2034: $arch and $cache are the caller's; base_image is the caller's to read)
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

# base SUITE -> base_image (after scratch_begin; $arch and $cache set by the caller, for
# a foreign $arch mmdebstrap runs the maintainer scripts under QEMU): the local image name of a Debian SUITE base made by mmdebstrap:
# minbase with a merged /usr (mmdebstrap's merged-usr hook: usr-is-merged, not usrmerge
# and its perl), the official slim image's dpkg filters and its apt clean-up (docker-clean:
# no .deb and no package cache kept after an install), so the Dockerfiles see what they
# see on debian:N-slim.
base() {
  local suite=$1
  local opts=(--variant=minbase --mode=root --format=tar --architectures="$arch"
    --aptopt='Acquire::Languages "none"'
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*'
    --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/groff/*'
    --dpkgopt='path-exclude=/usr/share/lintian/*' --dpkgopt='path-exclude=/usr/share/linda/*'
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
    "--customize-hook=printf '%s\n' 'DPkg::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true\"; };' 'APT::Update::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true\"; };' 'Dir::Cache::pkgcache \"\";' 'Dir::Cache::srcpkgcache \"\";' > \"\$1/etc/apt/apt.conf.d/docker-clean\" && rm -f \"\$1\"/var/cache/apt/*.bin")
  local key
  key=$(printf '%s\n' "$suite" "$(mmdebstrap --version)" "${opts[@]}" | sha256sum | cut -c1-12)
  local tar="$cache/debian-$suite-$arch-$key.tar" image="localhost/spinlane-base:$suite-$arch-$key"
  if [ ! -s "$tar" ]; then
    rm -f "$cache/debian-$suite-$arch-"*.tar "$cache/debian-$suite-$arch-"*.tar.part # other keys: superseded
    echo "$scratch_name: mmdebstrap $suite ($arch) -> $tar" >&2
    mmdebstrap "${opts[@]}" "$suite" "$tar.part" http://deb.debian.org/debian >&2 || fail "mmdebstrap $suite"
    mv "$tar.part" "$tar"
  fi
  if ! buildah inspect --type image "$image" >/dev/null 2>&1; then
    local c
    c=$(buildah from --arch "$arch" --name "spinlane-base-$$-$suite-$arch" scratch)
    containers+=("$c")
    buildah add --quiet "$c" "$tar" / >&2
    buildah config --arch "$arch" --cmd /bin/bash "$c" >&2
    buildah commit --quiet --rm "$c" "$image" >/dev/null
    unset 'containers[${#containers[@]}-1]'
    # the bases of other keys are superseded (the images built on them keep their layers)
    # (grep finds none on a machine with one base: not an error under pipefail)
    { buildah images --format '{{.Name}}:{{.Tag}}' | grep "^localhost/spinlane-base:$suite-$arch-" |
      grep -v ":$suite-$arch-$key\$" || true; } | while read -r old; do buildah rmi "$old" >/dev/null 2>&1 || true; done
  fi
  base_image=$image
}

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On demand, not in CI: builds the arm64 (Graviton, Cobalt) agent and driver images on an
# amd64 machine under QEMU user emulation (Debian's qemu-user-static through binfmt_misc),
# the way scripts/test-images.sh builds the native ones, and checks what can be checked
# under emulation:
#   - mmdebstrap makes arm64 Debian 12 and 13 bases, buildah imports them;
#   - `buildah bud --platform linux/arm64 --isolation chroot` builds deploy/agent.Dockerfile
#     and deploy/driver.Dockerfile unchanged (every RUN step runs arm64 binaries under QEMU);
#   - on the images' file systems: the binaries are aarch64 ELF files, ldd (the image's own,
#     emulated) resolves every library of them, `spinlane-agent --version`,
#     `spinlane-launch --version` and `aeronmd -v` run, and `spinlane-agent preflight` prints
#     its verdicts on the `graviton` fixture node (tests/fixtures/make-node.py).
# Not done under QEMU: the bypass over a veth (test-images.sh's image_bypass.py) - a timing
# and packet test is meaningless in an emulator.
#   sudo scripts/build-arm64.sh   (root: buildah chroot, binfmt_misc;
#   Debian packages qemu-user-static and arch-test, which mmdebstrap needs for a foreign
#   architecture)
# Each step prints its elapsed time; docs/install-eks.md ("Graviton: the arm64 images") has
# a measured run. Everything it makes but the images and the cached base tarballs is
# removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
. scripts/aeron-source.sh

arch=arm64
. scripts/lib-scratch.sh
scratch_name=build-arm64
[ "$(id -u)" -eq 0 ] || fail "needs root (buildah --isolation chroot, binfmt_misc)"
[ "$(dpkg --print-architecture)" != arm64 ] || echo "build-arm64: an arm64 machine: no emulation needed (scripts/test-images.sh builds natively)"
for t in mmdebstrap arch-test buildah chroot git python3 sha256sum file; do
  command -v "$t" >/dev/null 2>&1 || fail "no $t (scripts/install-deps.sh; arch-test, file: apt-get install arch-test file)"
done
[ -x /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] || [ -x /usr/bin/qemu-aarch64-static ] ||
  fail "no qemu-user-static (apt-get install qemu-user-static)"

# binfmt_misc: mounted and aarch64 registered (Debian's entry has the F flag: the
# interpreter is opened at registration, so it works inside the build's chroot).
[ -e /proc/sys/fs/binfmt_misc/status ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
  fail "cannot mount binfmt_misc"
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  conf=/usr/lib/binfmt.d/qemu-aarch64.conf
  [ -f "$conf" ] || fail "no $conf (qemu-user-static registers aarch64 there)"
  cat "$conf" >/proc/sys/fs/binfmt_misc/register || fail "registering $conf with binfmt_misc"
fi
grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 || fail "binfmt_misc's qemu-aarch64 entry is disabled"

cache=${SPINLANE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spinlane/images}
mkdir -p "$cache"
scratch_begin build-arm64
scratch_on_exit='echo "build-arm64: exit $rc after $(($(date +%s) - t_start)) s"'

# base SUITE -> base_image: as scripts/test-images.sh's base(), for arm64 (mmdebstrap runs
# the arm64 maintainer scripts under QEMU).
base() {
  local suite=$1
  local opts=(--variant=minbase --mode=root --format=tar --architectures="$arch"
    --aptopt='Acquire::Languages "none"'
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*'
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr)
  local key
  key=$(printf '%s\n' "$suite" "$(mmdebstrap --version)" "${opts[@]}" | sha256sum | cut -c1-12)
  local tar="$cache/debian-$suite-$arch-$key.tar" image="localhost/spinlane-base:$suite-$arch-$key"
  if [ ! -s "$tar" ]; then
    mmdebstrap "${opts[@]}" "$suite" "$tar.part" http://deb.debian.org/debian >&2 || fail "mmdebstrap $suite ($arch)"
    mv "$tar.part" "$tar"
  fi
  if ! buildah inspect --type image "$image" >/dev/null 2>&1; then
    local c
    c=$(buildah from --arch "$arch" --name "spinlane-arm64-base-$$-$suite" scratch)
    containers+=("$c")
    buildah add --quiet "$c" "$tar" / >&2
    buildah config --arch "$arch" --cmd /bin/bash "$c" >&2
    buildah commit --quiet --rm "$c" "$image" >/dev/null
    unset 'containers[${#containers[@]}-1]'
  fi
  base_image=$image
}

step "build context"
ctx=$tmp/context
mkdir -p "$ctx"
git -C "$repo" ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar -C "$repo" --null -T - -cf - | tar -C "$ctx" -xf -
aeron_arg=()
if [ -n "${SPINLANE_AERON_SOURCE:-}" ]; then
  mkdir -p "$ctx/.aeron"
  cp "$SPINLANE_AERON_SOURCE" "$ctx/.aeron/"
  aeron_arg=(--build-arg "SPINLANE_AERON_SOURCE=/src/.aeron/$(basename "$SPINLANE_AERON_SOURCE")")
fi

step "arm64 base images (mmdebstrap under QEMU)"
base bookworm
base12=$base_image
base trixie
base13=$base_image

bud() { # bud NAME BASE ARGS...
  local name=$1 b=$2
  shift 2
  buildah bud --isolation chroot --layers --pull=never --platform "linux/$arch" \
    --ignorefile "$ctx/deploy/$name.Dockerfile.dockerignore" \
    --build-arg "BASE=$b" "$@" -f "$ctx/deploy/$name.Dockerfile" "$ctx"
}
step "agent image, arm64 (buildah bud under QEMU)"
bud agent "$base12" -t localhost/spinlane-arm64/agent:latest >"$tmp/agent.log" 2>&1 ||
  { tail -40 "$tmp/agent.log"; fail "building deploy/agent.Dockerfile for arm64"; }
step "driver image, arm64 (buildah bud under QEMU)"
bud driver "$base13" "${aeron_arg[@]}" -t localhost/spinlane-arm64/driver:latest >"$tmp/driver.log" 2>&1 ||
  { tail -40 "$tmp/driver.log"; fail "building deploy/driver.Dockerfile for arm64"; }

mount_image() { # IMAGE NAME -> mi_root
  local c
  c=$(buildah from --pull=never --arch "$arch" --name "spinlane-arm64-$$-$2" "$1")
  containers+=("$c")
  mi_root=$(buildah mount "$c")
}
mount_image localhost/spinlane-arm64/agent:latest agent
agent_root=$mi_root
mount_image localhost/spinlane-arm64/driver:latest driver
driver_root=$mi_root
for r in "$agent_root" "$driver_root"; do
  for d in proc sys dev; do
    mkdir -p "$r/$d"
    mount --rbind "/$d" "$r/$d"
    mount --make-rslave "$r/$d"
    binds+=("$r/$d")
  done
done

step "the binaries are arm64 and their libraries resolve"
for f in "$agent_root/usr/local/bin/spinlane-agent" "$agent_root/usr/local/bin/spinlane-agent-run" \
  "$driver_root/usr/local/bin/spinlane-launch" "$driver_root/usr/local/bin/aeronmd" \
  "$driver_root/usr/local/lib/libspinlane_aeron.so"; do
  file -b "$f" | grep -q 'ARM aarch64' || fail "${f##*/} is not an aarch64 ELF file: $(file -b "$f")"
  echo "${f##*/}: $(file -b "$f" | cut -d, -f1-2)"
done
for spec in "$agent_root:/usr/local/bin/spinlane-agent-run" "$driver_root:/usr/local/bin/spinlane-launch" \
  "$driver_root:/usr/local/bin/aeronmd" "$driver_root:/usr/local/lib/libspinlane_aeron.so"; do
  r=${spec%%:*} f=${spec#*:}
  out=$(chroot "$r" /usr/bin/ldd "$f" 2>&1) || fail "ldd $f: $out"
  ! grep -q 'not found' <<<"$out" || fail "$f: $(grep 'not found' <<<"$out")"
done
echo "ldd (emulated) resolves every library of the four"

step "versions (emulated)"
chroot "$agent_root" /usr/local/bin/spinlane-agent --version
chroot "$driver_root" /usr/local/bin/spinlane-launch --version
chroot "$driver_root" /usr/local/bin/aeronmd -v </dev/null 2>&1 | head -n1 | tee "$tmp/aeronmd-version"
grep -q 'major 1 minor 52 patch 2' "$tmp/aeronmd-version" || fail "the arm64 aeronmd is not Aeron 1.52.2"

step "spinlane-agent preflight on the graviton fixture (emulated)"
python3 tests/fixtures/make-node.py "$agent_root/tmp/spinlane-fixtures" graviton >/dev/null
set +e
chroot "$agent_root" /usr/local/bin/spinlane-agent preflight --root /tmp/spinlane-fixtures/graviton >"$tmp/preflight.out" 2>&1
rc=$?
set -e
cat "$tmp/preflight.out"
grep -qE '^summary: [0-9]+ pass' "$tmp/preflight.out" || fail "preflight printed no verdicts (exit $rc)"

step "image sizes"
buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E '^localhost/spinlane-arm64/' || true
step "build-arm64: PASS"

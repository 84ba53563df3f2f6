#!/usr/bin/env bash
# Installs every Debian package spinlane's build and tests need (Debian 12, as root).
# Idempotent: packages already present are left alone.
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config git clang libclang-rt-14-dev
  libgrpc-dev protobuf-c-compiler libprotobuf-c-dev
  dpdk dpdk-dev libdpdk-dev
  libcurl4-openssl-dev libjansson-dev
  python3 python3-grpcio python3-grpc-tools
  iproute2 ethtool kmod procps valgrind
)

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

# syntax=docker/dockerfile:1
# spinlane driver image: spinlane-launch as the entrypoint, exec'ing Aeron's C media driver
# (aeronmd) with spinlane's DPDK bindings (libspinlane_aeron.so) loaded. One image for EKS
# (ENA, net_ena) and AKS (MANA, net_mana), amd64 and arm64.
#
# Build from the repository root (needs nothing but the Debian base image):
#   docker build -f deploy/driver.Dockerfile -t registry.example.com/spinlane/driver:0.1.0 .
# Multi-arch: deploy/docker-bake.hcl (docs/install-eks.md, "Images").
#
# Debian 13 (trixie), not 12: its DPDK 24.11 has net_mana (librte-net-mana25, built with
# its rdma-core 56) beside net_ena; Debian 12's DPDK 22.11 has no net_mana. So one image
# serves both clouds.
#
# Stage 1 builds Aeron from spinlane's own pin (cmake/aeron.cmake, the same CMake path as
# a host build: fetched at the pinned commit, or from SPINLANE_AERON_SOURCE, a `git
# archive` tarball of it inside the build context, for a builder without network), then
# spinlane-launch and libspinlane_aeron.so against it, and installs the `driver`
# component into /usr/local. Stage 2 is the slim Debian 13 with exactly the DPDK runtime
# packages the bindings and the two clouds' NICs need.
#
# Every stage is built for the target platform itself (natively or under QEMU), never
# cross-compiled, so the binaries and the Debian 13 libraries they link always match.

# The base image (both stages): the official Debian 13 image by default; a builder with no
# registry passes a local one (scripts/test-images.sh makes it with mmdebstrap).
ARG BASE=debian:13-slim

FROM ${BASE} AS build
ARG DEBIAN_FRONTEND=noninteractive
# git + gzip: cmake/aeron.cmake reads the tarball's commit id (or fetches with git);
# libbsd-dev, uuid-dev: what Aeron's C driver links; the rest is spinlane's build
# (scripts/install-deps.sh), DPDK 24.11's headers included.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config git gzip ca-certificates \
      libgrpc-dev protobuf-c-compiler libprotobuf-c-dev \
      libdpdk-dev libjansson-dev libcurl4-openssl-dev libmicrohttpd-dev libyaml-dev \
      libbsd-dev uuid-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Unset: CMake fetches Aeron at the pinned commit. Set: the path of Aeron's tarball in
# this stage (e.g. /src/.aeron/aeron-1.52.2.tar.gz when the context holds it there).
ARG SPINLANE_AERON_SOURCE
# Aeron is built once into a cache mount per architecture (its build is the longest
# step), so a rebuild after a source change reuses it; Aeron's samples and tools (cping,
# cpong, AeronStat, ErrorStat) are kept in /opt/aeron-tools of this stage for the image
# test (scripts/test-images.sh), never in the runtime image.
RUN --mount=type=cache,target=/root/.cache/spinlane \
    cache="/root/.cache/spinlane/$(dpkg --print-architecture)" \
 && cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPINLANE_TESTS=OFF \
      -DSPINLANE_AERON_CACHE_DIR="$cache" \
 && cmake --build build -j"$(nproc)" --target spinlane-launch spinlane-datapath spinlane_aeron spinlane-stat \
 && cmake --install build --component driver --prefix /usr/local --strip \
 && mkdir -p /opt/aeron-tools \
 && aeron_lib=$(sed -n 's/^SPINLANE_AERON_DRIVER_LIB:FILEPATH=//p' build/CMakeCache.txt) \
 && aeron_bin="${aeron_lib%/lib/libaeron_driver.so}/binaries" \
 && cp "$aeron_bin/cping" "$aeron_bin/cpong" "$aeron_bin/AeronStat" "$aeron_bin/ErrorStat" /opt/aeron-tools/

FROM ${BASE}
ARG DEBIAN_FRONTEND=noninteractive
# DPDK 24.11, only what runs: the EAL, ethdev, mbuf and mempool libraries the bindings
# link; the ring mempool driver (the EAL's default mbuf pool ops); net_ena (EKS) and
# net_mana (AKS) with rdma-core's libibverbs and its providers (libmana) for MANA. Their
# dependencies (librte-bus-pci25, librte-kvargs25, ...) come with them. The PMDs sit in
# the EAL's driver directory (/usr/lib/<triplet>/dpdk/pmds-25.0), which it loads at
# start-up. libjansson4: spinlane-launch; libbsd0, libuuid1: Aeron's driver;
# libmicrohttpd12t64 (Debian 13's name of libmicrohttpd 1.0): spinlane-stat's /metrics.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      librte-eal25 librte-ethdev25 librte-mbuf25 librte-mempool25 librte-mempool-ring25 \
      librte-net-ena25 librte-net-mana25 libibverbs1 ibverbs-providers \
      libjansson4 libbsd0 libuuid1 libmicrohttpd12t64 \
 && rm -rf /var/lib/apt/lists/*
# bin/spinlane-launch, bin/spinlane-datapath (the datapath check the launcher runs before
# the driver: beside it), bin/aeronmd, lib/libspinlane_aeron.so, lib/libaeron_driver.so,
# lib/libaeron.so (RUNPATH $ORIGIN/../lib: the launcher finds the bindings beside its bin/);
# bin/spinlane-stat: the driver's counters on Prometheus /metrics (a sidecar of the driver
# pod runs this image with `spinlane-stat` as its command)
COPY --from=build /usr/local/bin/spinlane-launch /usr/local/bin/spinlane-datapath /usr/local/bin/aeronmd /usr/local/bin/spinlane-stat /usr/local/bin/
COPY --from=build /usr/local/lib/libspinlane_aeron.so /usr/local/lib/libaeron_driver.so \
     /usr/local/lib/libaeron.so /usr/local/lib/
# spinlane-launch checks the pod, prints its verdicts, then execs the command after
# `--` (default aeronmd, with the bypass). The pod spec may override the command; keep
# spinlane-launch first.
ENTRYPOINT ["/usr/local/bin/spinlane-launch"]
CMD ["--", "/usr/local/bin/aeronmd"]

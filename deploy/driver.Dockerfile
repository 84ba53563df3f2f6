# syntax=docker/dockerfile:1
# spinlane driver image: spinlane-launch as the entrypoint, exec'ing YOUR aeronmd with
# spinlane's DPDK bindings (libspinlane_aeron.so) loaded.
#
# Aeron is NOT built or fetched here (spinlane does not package Aeron). Build Aeron's C
# media driver yourself into an image (Debian 12) that holds its source tree and its
# build tree - by default /opt/aeron/src and /opt/aeron/build - and hand that image
# (or a directory with the same layout) to the build as the named build context `aeron`:
#
#   docker build -f deploy/driver.Dockerfile \
#     --build-context aeron=docker-image://registry.example.com/my/aeron-build:1.52.2 \
#     -t registry.example.com/spinlane/driver:0.1.0 .
#
# The bindings are compiled against that tree's headers and linked against its
# libaeron_driver.so / libaeron.so; aeronmd and those two libraries are copied from the
# same tree, so the image's driver is the Aeron the bindings were built for (they refuse
# any other at load, and spinlane-launch's aeron-bindings check says so first).
# AERON_SRC / AERON_BUILD name the two trees inside the context.
#
# For AKS (MANA) the DPDK must have net_mana (DPDK >= 22.11 built with rdma-core >= 44):
# Debian 12's dpdk package does NOT have it. Replace the `dpdk` package below with your
# own DPDK build (and rdma-core / ibverbs-providers libraries) for MANA nodes.
#
# Multi-arch (linux/amd64 + linux/arm64, x86 and Graviton nodes): deploy/docker-bake.hcl,
#   docker buildx bake -f deploy/docker-bake.hcl driver --push
# Every stage is built for the target platform itself (natively or under QEMU), never
# cross-compiled, so the binaries and the Debian 12 libraries they link always match
# (Debian 12 builds these packages, dpdk included, for arm64 as for amd64).

FROM debian:12 AS build
ARG DEBIAN_FRONTEND=noninteractive
ARG AERON_SRC=/opt/aeron/src
ARG AERON_BUILD=/opt/aeron/build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config \
      libgrpc-dev protobuf-c-compiler libprotobuf-c-dev \
      dpdk-dev libdpdk-dev \
      libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev \
 && rm -rf /var/lib/apt/lists/*
COPY --from=aeron ${AERON_SRC} /opt/aeron/src
COPY --from=aeron ${AERON_BUILD}/lib /opt/aeron/build/lib
COPY --from=aeron ${AERON_BUILD}/binaries/aeronmd /opt/aeron/build/binaries/aeronmd
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPINLANE_TESTS=OFF \
      -DSPINLANE_AERON_DIR=/opt/aeron/src -DSPINLANE_AERON_BUILD_DIR=/opt/aeron/build \
 && cmake --build build -j"$(nproc)" --target spinlane-launch spinlane_aeron

FROM debian:12-slim
ARG DEBIAN_FRONTEND=noninteractive
# dpdk: the DPDK 22.11 runtime libraries and PMDs (net_ena) the bindings load;
# libbsd0 / libuuid1: what Aeron's C media driver links.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libjansson4 dpdk libbsd0 libuuid1 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/driver/launch/spinlane-launch /usr/local/bin/spinlane-launch
# spinlane-launch finds the bindings beside it (bin/../lib) and sets
# AERON_DRIVER_DYNAMIC_LIBRARIES; aeronmd (>= 1.51) needs libaeron.so beside libaeron_driver.so
COPY --from=build /src/build/driver/aeron/libspinlane_aeron.so /usr/local/lib/libspinlane_aeron.so
COPY --from=build /opt/aeron/build/lib/libaeron_driver.so /opt/aeron/build/lib/libaeron.so /usr/local/lib/
COPY --from=build /opt/aeron/build/binaries/aeronmd /usr/local/bin/aeronmd
RUN ldconfig
# spinlane-launch checks the pod, prints its verdicts, then execs the command after
# `--` (default aeronmd, with the bypass). The pod spec may override the command; keep
# spinlane-launch first.
ENTRYPOINT ["/usr/local/bin/spinlane-launch"]
CMD ["--", "/usr/local/bin/aeronmd"]

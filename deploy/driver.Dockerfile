# syntax=docker/dockerfile:1
# spinlane driver image: spinlane-launch as the entrypoint, exec'ing YOUR aeronmd.
#
# Aeron is NOT built or fetched here (spinlane does not package Aeron). Bring your own
# aeronmd (built for Debian 12 against its DPDK 22.11 if it carries DPDK bindings) and
# hand its directory to the build as the named build context `aeron`:
#
#   docker build -f deploy/driver.Dockerfile \
#     --build-context aeron=/path/to/your/aeron/install \
#     --build-arg AERONMD=bin/aeronmd \
#     -t registry.example.com/spinlane/driver:0.1.0 .
#
# AERONMD is the path of the binary inside that context (default bin/aeronmd). If your
# aeronmd links Aeron's shared libraries, copy them too (add a COPY of lib/) and check
# with `ldd` in the image that nothing is missing.
#
# For AKS (MANA) the DPDK must have net_mana (DPDK >= 22.11 built with rdma-core >= 44):
# Debian 12's dpdk package does NOT have it. Replace the `dpdk` package below with your
# own DPDK build (and rdma-core / ibverbs-providers libraries) for MANA nodes.

FROM debian:12 AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config \
      libgrpc-dev protobuf-c-compiler libprotobuf-c-dev \
      dpdk-dev libdpdk-dev \
      libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPINLANE_TESTS=OFF \
 && cmake --build build -j"$(nproc)" --target spinlane-launch

FROM debian:12-slim
ARG DEBIAN_FRONTEND=noninteractive
ARG AERONMD=bin/aeronmd
# dpdk: the DPDK 22.11 runtime libraries and PMDs (net_ena) a DPDK-enabled aeronmd
# loads; libbsd0 / libuuid1: what Aeron's C media driver usually links.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libjansson4 dpdk libbsd0 libuuid1 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/driver/launch/spinlane-launch /usr/local/bin/spinlane-launch
COPY --from=aeron ${AERONMD} /usr/local/bin/aeronmd
# spinlane-launch checks the pod, prints its verdicts, then execs the command after
# `--` (default aeronmd). The pod spec may override the command; keep spinlane-launch first.
ENTRYPOINT ["/usr/local/bin/spinlane-launch"]
CMD ["--", "/usr/local/bin/aeronmd"]

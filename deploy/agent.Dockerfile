# syntax=docker/dockerfile:1
# spinlane-agent: the node agent image (DaemonSet: node preparation + device plugin).
#
# Build from the repository root:
#   docker build -f deploy/agent.Dockerfile -t registry.example.com/spinlane/agent:0.1.0 .
#
# Stage 1 builds spinlane from this source tree with cmake on Debian 12 (the same
# packages scripts/install-deps.sh installs for the build); stage 2 is a slim Debian 12
# with only the shared libraries the agent links (jansson; the daemon spinlane-agent-run
# also protobuf-c, libstdc++, libcurl (the metadata and API clients), libmicrohttpd (/metrics, /healthz,
# /readyz) and, when not linked statically, the gRPC C core).
# `spinlane-agent run` execs spinlane-agent-run from its own directory: both go to
# /usr/local/bin.
#
# Multi-arch (linux/amd64 + linux/arm64, x86 and Graviton nodes): deploy/docker-bake.hcl,
#   docker buildx bake -f deploy/docker-bake.hcl agent --push
# Every stage is built for the target platform itself (natively or under QEMU), never
# cross-compiled, so the binaries and the Debian 12 libraries they link always match
# (Debian 12 builds these packages, dpdk included, for arm64 as for amd64).

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
 && cmake --build build -j"$(nproc)" --target spinlane-agent spinlane-agent-run

FROM debian:12-slim
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libgrpc29 libprotobuf-c1 libjansson4 libatomic1 libcurl4 libmicrohttpd12 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/agent/spinlane-agent /usr/local/bin/spinlane-agent
COPY --from=build /src/build/agent/spinlane-agent-run /usr/local/bin/spinlane-agent-run
# The DaemonSet passes the subcommand: run --root /host --config /etc/spinlane/config.json
ENTRYPOINT ["/usr/local/bin/spinlane-agent"]
CMD ["preflight", "--root", "/host"]

# syntax=docker/dockerfile:1
# spinlane-agent: the node agent image (DaemonSet: node preparation + device plugin).
#
# Build from the repository root (needs nothing but the Debian base image):
#   docker build -f deploy/agent.Dockerfile -t registry.example.com/spinlane/agent:0.1.0 .
# Multi-arch: deploy/docker-bake.hcl (docs/install-eks.md, "Images").
#
# Debian 12, the system spinlane's own CI builds and tests the agent on. Stage 1 builds
# spinlane-agent and the daemon spinlane-agent-run with cmake (no DPDK, no Aeron: the
# agent links neither) and installs the `agent` component into /usr/local; stage 2 is the
# slim Debian 12 with only the shared libraries they link: jansson, protobuf-c, libcurl
# (the metadata and API clients), libyaml (--kubeconfig), libmicrohttpd (/metrics,
# /healthz, /readyz), libatomic (the static gRPC's link line names it; a sanitizer or
# another compiler keeps it), libstdc++ (gRPC's abseil). The gRPC C core, its abseil,
# upb, c-ares and re2 are linked statically (SPINLANE_STATIC_GRPC, Debian's libgrpc-dev
# ships the archives). The agent runs no other program (netlink, ethtool and sysfs are
# its own code): no kmod, no iproute2.
# `spinlane-agent run` execs spinlane-agent-run from its own directory: both go to
# /usr/local/bin.
#
# Every stage is built for the target platform itself (natively or under QEMU), never
# cross-compiled, so the binaries and the Debian 12 libraries they link always match.

# The base image (both stages): the official Debian 12 image by default; a builder with no
# registry passes a local one (scripts/test-images.sh makes it with mmdebstrap).
ARG BASE=debian:12-slim

FROM ${BASE} AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config \
      libgrpc-dev protobuf-c-compiler libprotobuf-c-dev \
      libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev libyaml-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPINLANE_TESTS=OFF -DSPINLANE_AERON=OFF \
 && cmake --build build -j"$(nproc)" --target spinlane-agent spinlane-agent-run \
 && cmake --install build --component agent --prefix /usr/local --strip

FROM ${BASE}
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libprotobuf-c1 libjansson4 libcurl4 libmicrohttpd12 libyaml-0-2 libstdc++6 libatomic1 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/spinlane-agent /usr/local/bin/spinlane-agent-run /usr/local/bin/
# kernel_args.manage: the boot-loader tool (update-grub, grubby) runs chrooted in /host, where
# the chart mounts the host's /usr, /etc, /boot, /proc, /sys and /dev; these links give the
# chroot the merged-/usr top-level directories every supported node image has (AL2023,
# Ubuntu 22.04+, Azure Linux: /bin -> usr/bin, ...), so /bin/sh and the loader resolve.
RUN mkdir /host && ln -s usr/bin /host/bin && ln -s usr/sbin /host/sbin \
 && ln -s usr/lib /host/lib && ln -s usr/lib64 /host/lib64
# The DaemonSet passes the subcommand: run --root /host --config /etc/spinlane/config.json
ENTRYPOINT ["/usr/local/bin/spinlane-agent"]
CMD ["preflight", "--root", "/host"]

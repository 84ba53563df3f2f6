# SPDX-License-Identifier: Apache-2.0
# Multi-arch build of the spinlane images (linux/amd64 and linux/arm64, for x86 and
# Graviton/Cobalt nodes) with BuildKit's bake, from the repository root; needs no image
# but Debian's (docs/install-eks.md, "Images", for the builder set-up):
#
#   docker buildx create --driver docker-container --use
#   docker run --privileged --rm tonistiigi/binfmt --install arm64   # on an amd64 builder
#   REGISTRY=<registry>/spinlane VERSION=0.1.0 docker buildx bake -f deploy/docker-bake.hcl --push
#
# Each platform's image is compiled natively for that platform (on a builder of that
# architecture, or under QEMU emulation): the Dockerfiles do not cross-compile, so the
# binaries and the Debian libraries they link always match. The driver image builds
# Aeron from spinlane's pin (fetched from GitHub at the pinned commit, or AERON_SOURCE:
# the path of Aeron's `git archive` tarball inside the build context, for a builder
# without network). The tags match the chart's defaults: image.repository /
# driverImage.repository, tag = the chart's appVersion (helm/spinlane/Chart.yaml).

variable "REGISTRY" {
  default = "registry.example.com/spinlane"
}

variable "VERSION" {
  default = "0.1.0"
}

# The base images: the official Debian images by default (agent Debian 12, driver Debian 13)
variable "AGENT_BASE" {
  default = "debian:12-slim"
}

variable "DRIVER_BASE" {
  default = "debian:13-slim"
}

# Empty: the driver's build fetches Aeron at the pinned commit
variable "AERON_SOURCE" {
  default = ""
}

group "default" {
  targets = ["agent", "driver"]
}

target "common" {
  context   = "."
  platforms = ["linux/amd64", "linux/arm64"]
  labels = {
    "org.opencontainers.image.version"  = "${VERSION}"
    "org.opencontainers.image.licenses" = "Apache-2.0"
  }
}

target "agent" {
  inherits   = ["common"]
  dockerfile = "deploy/agent.Dockerfile"
  args = {
    BASE = "${AGENT_BASE}"
  }
  tags = ["${REGISTRY}/agent:${VERSION}"]
}

target "driver" {
  inherits   = ["common"]
  dockerfile = "deploy/driver.Dockerfile"
  args = {
    BASE                  = "${DRIVER_BASE}"
    SPINLANE_AERON_SOURCE = "${AERON_SOURCE}"
  }
  tags = ["${REGISTRY}/driver:${VERSION}"]
}

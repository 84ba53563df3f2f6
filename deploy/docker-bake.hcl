# SPDX-License-Identifier: Apache-2.0
# Multi-arch build of the spinlane images (linux/amd64 and linux/arm64, for x86 and
# Graviton nodes) with BuildKit's bake, from the repository root:
#
#   REGISTRY=<registry>/spinlane VERSION=0.1.0 AERON_IMAGE=<registry>/my/aeron-build:1.52.2 \
#     docker buildx bake -f deploy/docker-bake.hcl --push
#
# Each platform's image is compiled natively for that platform (on a builder of that
# architecture, or under QEMU emulation with `docker run --privileged --rm
# tonistiigi/binfmt --install arm64`): the Dockerfiles do not cross-compile, so the
# binaries and the Debian 12 libraries they link always match. The driver's Aeron build
# context must be an image with the same platforms (build your Aeron for both).
# The tags match the chart's defaults: image.repository / driverImage.repository, tag
# = the chart's appVersion (helm/spinlane/Chart.yaml).

variable "REGISTRY" {
  default = "registry.example.com/spinlane"
}

variable "VERSION" {
  default = "0.1.0"
}

variable "AERON_IMAGE" {
  default = "registry.example.com/my/aeron-build:1.52.2"
}

group "default" {
  targets = ["agent", "driver"]
}

target "common" {
  context   = "."
  platforms = ["linux/amd64", "linux/arm64"]
  labels = {
    "org.opencontainers.image.version" = "${VERSION}"
    "org.opencontainers.image.licenses" = "Apache-2.0"
  }
}

target "agent" {
  inherits   = ["common"]
  dockerfile = "deploy/agent.Dockerfile"
  tags       = ["${REGISTRY}/agent:${VERSION}"]
}

target "driver" {
  inherits   = ["common"]
  dockerfile = "deploy/driver.Dockerfile"
  contexts = {
    aeron = "docker-image://${AERON_IMAGE}"
  }
  tags = ["${REGISTRY}/driver:${VERSION}"]
}

# Sourced by main.sh and test.sh: the Aeron arguments for CMake, in the array `aeron`.
# Aeron 1.52.2 is part of the build (cmake/aeron.cmake), built once on this machine into
# a cache shared by every build tree. CMake fetches it at the pinned commit; without
# network (this project's CI) its source is the release tarball in ../shared/vendor when
# that exists, or SPINLANE_AERON_SOURCE (a tarball or a tree). A tree the user built goes
# by SPINLANE_AERON_DIR and SPINLANE_AERON_BUILD_DIR.
vendor="$(pwd)/../shared/vendor/aeron-1.52.2.tar.gz"
if [ -z "${SPINLANE_AERON_SOURCE:-}" ] && [ -z "${SPINLANE_AERON_DIR:-}" ] && [ -f "$vendor" ]; then
  export SPINLANE_AERON_SOURCE="$vendor"
fi
aeron=()
if [ -n "${SPINLANE_AERON_DIR:-}" ]; then
  aeron=(-DSPINLANE_AERON_DIR="$SPINLANE_AERON_DIR"
         -DSPINLANE_AERON_BUILD_DIR="${SPINLANE_AERON_BUILD_DIR:?SPINLANE_AERON_BUILD_DIR goes with SPINLANE_AERON_DIR}")
elif [ -n "${SPINLANE_AERON_SOURCE:-}" ]; then
  aeron=(-DSPINLANE_AERON_SOURCE="$SPINLANE_AERON_SOURCE")
fi

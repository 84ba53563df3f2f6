#!/bin/sh
# transport-bench on real 2 MiB hugepages: reserves them (and mounts a hugetlbfs if none is
# mounted), runs the bench with --huge, and puts the page count and the mount back as they
# were, also on failure or a signal. Root only; arguments after BUILD_DIR go to the bench.
# Usage: bench/transport-huge.sh BUILD_DIR [transport-bench options]
set -eu
build=${1:?usage: $0 BUILD_DIR [transport-bench options]}
shift
pages=${SPINLANE_BENCH_HUGEPAGES:-600} # two processes x -m 512, and some room
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
[ -w "$nr" ] || { echo "transport-huge: $nr not writable (root needed)" >&2; exit 2; }
old=$(cat "$nr")
mnt=
cleanup() {
        echo "$old" > "$nr"
        if [ -n "$mnt" ]; then umount "$mnt" && rmdir "$mnt"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! awk '$3 == "hugetlbfs" && ($4 ~ /pagesize=2M/ || $4 !~ /pagesize=/) { f = 1 } END { exit !f }' /proc/mounts; then
        mnt=$(mktemp -d -t sl-tr-huge.XXXXXX)
        mount -t hugetlbfs -o pagesize=2M none "$mnt"
fi
echo $((old + pages)) > "$nr"
got=$(cat "$nr")
if [ "$got" -lt $((old + pages)) ]; then
        echo "transport-huge: only $((got - old)) of $pages 2 MiB pages could be reserved" >&2
        exit 1
fi
echo "# hugepages: $pages x 2 MiB reserved (nr_hugepages $old -> $got)${mnt:+, hugetlbfs mounted for the run}"
"$build/bench/transport-bench" --huge "$@"

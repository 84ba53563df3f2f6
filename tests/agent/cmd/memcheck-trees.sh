#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The trees the agent's memcheck tests run on (ctest fixture setup, plain build only):
# every make-node.py fixture under OUT/nodes, a config, and under OUT/prep copies for
# prepare and restore, broken with a bind-state record of a NIC back on its driver; the
# two plain nodes (no isolcpus) with config-kargs.json (kernel_args.manage: prepare writes
# the boot loader through the fixture's fake tool, restore takes it back).
# Usage: memcheck-trees.sh SOURCE_DIR OUT (OUT is removed first).
set -eu
src=$1
out=$2
py=/usr/bin/python3
[ -x "$py" ] || py=python3

rm -rf "$out"
mkdir -p "$out"
"$py" "$src/tests/fixtures/make-node.py" "$out/nodes"
"$py" "$src/tests/fixtures/make-node.py" "$out/prep" eks-x86 aks-mana broken aks-ubuntu-plain eks-al2023-plain
# static addresses for the fixtures' vfio-bound NICs (eks-x86, graviton, big), whose MACs
# are on no record: without them nic-address fails those nodes
addrs='{"pci":"0000:00:06.0","ipv4":"10.0.6.10/24","gateway":"10.0.6.1"},{"pci":"0000:00:07.0","ipv4":"10.0.7.10/24"}'
i=16
while [ $i -lt 31 ]; do
	addrs="$addrs,$(printf '{"pci":"0000:%02x:00.0","ipv4":"10.1.%d.10/24"}' $i $i)"
	i=$((i + 1))
done
printf '{"hugepages":{"per_node":{"0":64}},"addresses":{"static":[%s]}}\n' "$addrs" >"$out/config.json"
printf '{"nics":{"kinds":["ena"]},"cores":{"cpus":"2-7,10-15"},"kernel_args":{"manage":true},"hugepages":[%s,%s]}\n' \
	'{"page_size":"2M","per_node":{"0":1024}}' '{"page_size":"1G","per_node":{"0":2}}' >"$out/config-kargs.json"
mkdir -p "$out/prep/broken/var/lib/spinlane"
printf '{"version":1,"count":1,"nics":[{"pci":"0000:00:06.0","original_driver":"ena","driver":"vfio-pci","netdev":"eth1"}]}\n' \
	>"$out/prep/broken/var/lib/spinlane/bind-state.json"
printf '(null)\n' >"$out/prep/broken/sys/bus/pci/devices/0000:00:06.0/driver_override"

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A test that acts and then fails must fail, not skip: runs each given test binary with an
# `ip` that answers `ip netns list` (so the machine has what the test needs) but refuses
# `ip netns add`, and expects exit 1 with no "SKIP" for that part.
# usage: check-fail-not-skip.sh TEST-BINARY...   exit 0 as expected, 1 not, 77 not root.
set -u
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: not root (the tests decide not to make a netns before acting)"
	exit 77
fi
real_ip=$(command -v ip) || { echo "SKIP: no ip(8)"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/ip" <<EOF
#!/bin/sh
[ "\$1 \$2" = "netns add" ] && { echo "ip: refused for the test" >&2; exit 1; }
exec "$real_ip" "\$@"
EOF
chmod +x "$dir/ip"
rc=0
for t in "$@"; do
	out=$(PATH="$dir:$PATH" "$t" 2>&1)
	code=$?
	if [ "$code" = 1 ] && ! printf '%s\n' "$out" | grep -q "^SKIP real"; then
		echo "ok: $(basename "$t") fails (exit 1) when 'ip netns add' fails"
	else
		echo "FAIL: $(basename "$t") exit $code with 'ip netns add' refused:"
		printf '%s\n' "$out" | grep -E "SKIP|CHECK|checks" | head -5
		rc=1
	fi
done
exit $rc

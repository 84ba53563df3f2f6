#!/usr/bin/env bash
# get-cel.sh DIR — installs the CEL evaluator the node-policy test uses (the npm package
# @marcbachmann/cel-js, MIT, no dependencies) into DIR/node_modules with `npm install
# --prefix` (no global install). Idempotent: nothing is fetched when it is there.
# Exit 0: installed. Exit 1: it could not be had (offline, no npm); the reason is printed
# and the test skips.
set -euo pipefail

PKG="@marcbachmann/cel-js@8.0.0"

dir=${1:?usage: get-cel.sh DIR}
mkdir -p "$dir"
if [ -f "$dir/node_modules/@marcbachmann/cel-js/package.json" ] &&
   grep -q '"version": "8.0.0"' "$dir/node_modules/@marcbachmann/cel-js/package.json"; then
	echo "get-cel: $PKG already in $dir"
	exit 0
fi
for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "get-cel: $tool is not installed; cannot fetch $PKG" >&2
		exit 1
	fi
done
if ! npm install --silent --no-audit --no-fund --prefix "$dir" "$PKG" >"$dir/npm.out" 2>"$dir/npm.err"; then
	echo "get-cel: npm install $PKG failed: $(tail -n 3 "$dir/npm.err")" >&2
	exit 1
fi
echo "get-cel: $PKG installed in $dir"

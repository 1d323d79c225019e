#!/usr/bin/env bash
# run-at-commit.sh REV [compare flags...]: run the comparison against the
# chronos of commit REV (default HEAD) instead of the working tree, so that a
# measurement names exactly what it measured and is not disturbed by
# unfinished edits in the checkout. The commit's tree is exported to a
# temporary directory; nothing in the checkout changes.
set -euo pipefail
rev=${1:-HEAD}
shift || true
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
sha=$(git -C "$root" rev-parse --verify "$rev^{commit}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive "$sha" | tar -x -C "$tmp"
# The benchmark program itself is always the checkout's; only the library
# under test comes from REV.
sed "s#^replace github.com/chronos-go/chronos => .*#replace github.com/chronos-go/chronos => $tmp#" \
  "$here/go.mod" >"$tmp/bench.mod"
cp "$here/go.sum" "$tmp/bench.sum"
echo "chronos at commit $sha ($(git -C "$root" log -1 --format='%cd' --date=iso-strict "$sha"))"
cd "$here"
go build -modfile="$tmp/bench.mod" -o "$tmp/compare" ./compare
"$tmp/compare" "$@"

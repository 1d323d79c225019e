#!/usr/bin/env bash
# run-at-commit.sh [-program compare|schedcompare] REV [flags...]: run a
# benchmark program against the chronos of commit REV (default HEAD)
# instead of the working tree, so that a measurement names exactly what it
# measured and is not disturbed by unfinished edits in the checkout. The
# commit's tree is exported to a temporary directory; nothing in the
# checkout changes. The program is compare (the queue, default) or
# schedcompare (the scheduler); the flags go to it.
set -euo pipefail
prog=compare
case "${1:-}" in
  -program | --program)
    prog=${2:-}
    shift 2 || true
    ;;
esac
case "$prog" in
  compare | schedcompare) ;;
  *)
    echo "usage: run-at-commit.sh [-program compare|schedcompare] REV [flags...]" >&2
    exit 2
    ;;
esac
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
echo "$prog: chronos at commit $sha ($(git -C "$root" log -1 --format='%cd' --date=iso-strict "$sha"))"
cd "$here"
if ! go build -modfile="$tmp/bench.mod" -o "$tmp/$prog" "./$prog"; then
  echo "run-at-commit.sh: this checkout's $prog does not build against chronos at $sha (it uses an API that" >&2
  echo "  commit lacks); measure that commit with the program of its own time: git worktree add DIR $sha" >&2
  exit 1
fi
"$tmp/$prog" "$@"

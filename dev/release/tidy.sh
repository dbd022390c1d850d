#!/usr/bin/env bash
# tidy.sh [-check] FOLDER...: go mod tidy for modules of this repository, with
# the local modules each one requires taken from their working trees (as go.work
# has them). With -check, changes nothing and fails if tidy would change go.mod
# or go.sum (make mod-check).
#
# Why not plain `go mod tidy`: tidy ignores go.work, and a published module
# requires the library (and the test kit) at a version with no replace
# directive, so tidy would fetch that version: the placeholder before the first
# release, which no proxy has; after one, the last release, which is not what
# the workspace builds. So tidy runs on a copy of go.mod (-modfile) with a
# replace for each local module; the replaces are dropped again and the copy
# compared with (or written to) go.mod. go.sum is compared without the local
# modules' lines (a replaced module has none: make release writes them from
# the release's zips, make release-check proves them) and written with them
# kept. docs/modules.md, "Development and releases".
set -euo pipefail
check=
if [ "${1:-}" = -check ]; then check=1; shift; fi
cd "$(git rev-parse --show-toplevel)"
root=$PWD

# Every module of the workspace: path and folder.
declare -A folder
while read -r p d; do folder[$p]=$d; done < <(go list -m -f '{{.Path}} {{.Dir}}')
# go.sum lines of a local module: "<path> <version>[/go.mod] h1:…".
local_lines() { awk -v paths="${!folder[*]}" 'BEGIN{n=split(paths,a," "); for(i=1;i<=n;i++) l[a[i]]=1} ($1 in l)' "$@"; }
other_lines() { awk -v paths="${!folder[*]}" 'BEGIN{n=split(paths,a," "); for(i=1;i<=n;i++) l[a[i]]=1} !($1 in l)' "$@"; }

status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in "$@"; do
  rm -rf "${tmp:?}"/*
  cp "$m/go.mod" "$tmp/go.mod"
  if [ -f "$m/go.sum" ]; then other_lines "$m/go.sum" >"$tmp/go.sum"; else : >"$tmp/go.sum"; fi
  self=$(awk '$1=="module"{print $2; exit}' "$m/go.mod")
  # Paths the module replaces itself (the unpublished modules do).
  replaced=$(awk '/^replace \(/{b=1;next} b&&/^\)/{b=0;next} b&&NF{print $1} /^replace [^(]/{print $2}' "$m/go.mod")
  added=()
  for p in "${!folder[@]}"; do
    [ "$p" = "$self" ] && continue
    grep -qxF "$p" <<<"$replaced" && continue
    go mod edit -replace="$p=${folder[$p]}" "$tmp/go.mod"
    added+=("$p")
  done
  if ! (cd "$m" && GOWORK=off go mod tidy -modfile="$tmp/go.mod" 2>"$tmp/err"); then
    echo "$m: go mod tidy failed:"; cat "$tmp/err"; status=1; continue
  fi
  for p in "${added[@]}"; do go mod edit -dropreplace="$p" "$tmp/go.mod"; done
  if [ -n "$check" ]; then
    ok=1
    diff -u "$m/go.mod" "$tmp/go.mod" >"$tmp/diff" || ok=
    diff -u <([ -f "$m/go.sum" ] && other_lines "$m/go.sum") "$tmp/go.sum" >>"$tmp/diff" || ok=
    if [ -z "$ok" ]; then
      echo "$m: go.mod or go.sum is not tidy; go mod tidy (local modules from the workspace) would change:"
      cat "$tmp/diff"
      echo "fix: dev/release/tidy.sh $m"
      status=1
    fi
  else
    cp "$tmp/go.mod" "$m/go.mod"
    { [ -f "$m/go.sum" ] && local_lines "$m/go.sum"; cat "$tmp/go.sum"; } | LC_ALL=C sort -s -k1,1 >"$tmp/go.sum.new"
    if [ -s "$tmp/go.sum.new" ]; then cp "$tmp/go.sum.new" "$m/go.sum"; else rm -f "$m/go.sum"; fi
  fi
done
exit $status

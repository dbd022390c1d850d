#!/usr/bin/env bash
# release.sh vX.Y.Z (make release VERSION=vX.Y.Z): the release commit and its
# tags, in a clone, nothing pushed (docs/modules.md, "Releasing").
#
#  1. CHANGELOG.md: the Unreleased section becomes vX.Y.Z's, dated today (UTC).
#  2. Every module's requirement on a published module of this repository
#     becomes vX.Y.Z, and go.work's replace lines name vX.Y.Z (published
#     modules have no replace directive: go install pkg@version refuses one).
#  3. Each published module, in dependency order, is tidied against the ones
#     it requires as a user would get them: from a module proxy in a folder
#     holding their zips at vX.Y.Z (dev/tools/modproxy, from the commit as it
#     stands), with an empty module cache, GOWORK=off. The unpublished modules
#     (their replace directives point at the working trees) are tidied too.
#  4. One commit ("release vX.Y.Z"), then one annotated tag per published
#     module (dev/release/published): vX.Y.Z, ddbtest/vX.Y.Z, kmsseal/vX.Y.Z,
#     outboxaws/vX.Y.Z, cmd/lambdaidem/vX.Y.Z, cdk/vX.Y.Z.
#
# Then make release-check proves the tags as a user gets them.
set -euo pipefail

die() { echo "release: $*" >&2; exit 1; }

V=${1:-}
[[ $V =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
  die "VERSION=$V: want vX.Y.Z (or vX.Y.Z-pre), e.g. make release VERSION=v0.1.0"
[ "${BASH_REMATCH[1]}" -lt 2 ] || die "$V: a major version 2 or above needs /v${BASH_REMATCH[1]} module paths"

cd "$(git rev-parse --show-toplevel)"
repo=$PWD
[ -d .git ] || die "run in a clone, not a worktree (golang.org/x/mod/zip reads a .git folder): git clone $repo /tmp/lambdaidem-release && cd /tmp/lambdaidem-release && make release VERSION=$V"
[ -z "$(git status --porcelain)" ] || die "the working tree has changes: commit or remove them first"

# Published modules in dependency order (each requires only ones before it);
# the Makefile reads the same file.
PUBLISHED=$(cat dev/release/published)
UNPUBLISHED="examples dev"
root=$(awk '$1=="module"{print $2; exit}' go.mod)
path_of() { if [ "$1" = . ]; then echo "$root"; else echo "$root/$1"; fi; }
tag_of() { if [ "$1" = . ]; then echo "$V"; else echo "$1/$V"; fi; }

for m in $PUBLISHED; do
  t=$(tag_of "$m")
  ! git rev-parse -q --verify "refs/tags/$t" >/dev/null || die "tag $t exists already"
  [ -f "$m/LICENSE" ] || die "$m/LICENSE is missing (every published module carries the licence)"
  if grep -q '^replace' "$m/go.mod"; then die "$m/go.mod has a replace directive (go install pkg@version refuses it)"; fi
done
grep -q '^## \[Unreleased\]$' CHANGELOG.md || die "CHANGELOG.md has no '## [Unreleased]' section"
# A throwaway release (vX.Y.Z-check, made by check.sh in a clone of an
# untagged HEAD, such as the commit right after a release) may have nothing new.
case "$V" in
*-check) ;;
*) [ -n "$(awk '/^## \[Unreleased\]$/{u=1;next} u&&/^## \[/{exit} u&&NF' CHANGELOG.md)" ] ||
  die "CHANGELOG.md's Unreleased section is empty: nothing to release" ;;
esac

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "release: building dev/tools/modproxy"
(cd dev && go build -o "$tmp/modproxy" ./tools/modproxy)

# 1. CHANGELOG.md.
today=$(date -u +%Y-%m-%d)
url="https://github.com/${root#github.com/}"
prev=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null || true)
awk -v v="$V" -v d="$today" -v url="$url" -v prev="$prev" '
  /^## \[Unreleased\]$/ { print; print ""; print "## [" v "] - " d; next }
  /^\[Unreleased\]: / {
    print "[Unreleased]: " url "/compare/" v "...HEAD"
    if (prev != "") print "[" v "]: " url "/compare/" prev "..." v
    else print "[" v "]: " url "/releases/tag/" v
    next
  }
  { print }' CHANGELOG.md >"$tmp/CHANGELOG.md"
cp "$tmp/CHANGELOG.md" CHANGELOG.md

# 2. Requirements on the published modules, and go.work's replaces.
edited=" "
for m in $PUBLISHED $UNPUBLISHED; do
  for p in $PUBLISHED; do
    pp=$(path_of "$p")
    [ "$pp" = "$(path_of "$m")" ] && continue
    if awk -v p="$pp" '/^require \(/{b=1;next} b&&/^\)/{b=0;next} (b&&$1==p)||($1=="require"&&$2==p){f=1} END{exit !f}' "$m/go.mod"; then
      go mod edit -require="$pp@$V" "$m/go.mod"
      edited="$edited$m "
    fi
  done
done
awk -v v="$V" '/^replace \(/{b=1;print;next} b&&/^\)/{b=0} b&&NF&&$3=="=>"{$2=v; print "\t" $0; next}
  /^replace [^(]/&&$4=="=>"{$3=v} {print}' go.work >"$tmp/go.work"
cp "$tmp/go.work" go.work
go work edit -fmt

git add -A
git commit -q -m "release $V"

# 3. Tidy, each published module against the zips of the ones before it.
ambient_proxy=$(go env GOPROXY)
shared_cache=$(go env GOMODCACHE)/cache/download
export GOWORK=off GOTOOLCHAIN=local GOMODCACHE="$tmp/modcache" GOFLAGS="${GOFLAGS:-} -modcacherw"
export GOPROXY="file://$tmp/proxy,file://$shared_cache,$ambient_proxy" GONOSUMDB="$root" GOPRIVATE= GONOPROXY=
# A module that requires none of them (the library, the CDK construct) is
# unchanged: make mod-check keeps it tidy.
for m in $PUBLISHED; do
  if [[ $edited == *" $m "* ]]; then
    echo "release: go mod tidy ($m)"
    (cd "$m" && go mod tidy) || die "$m: go mod tidy against the release's proxy failed"
    git add -A "$m"
    git commit -q --amend --no-edit
  fi
  "$tmp/modproxy" -repo . -out "$tmp/proxy" -version "$V" -rev HEAD "$m" >/dev/null
done
for m in $UNPUBLISHED; do
  [[ $edited == *" $m "* ]] || continue
  echo "release: go mod tidy ($m)"
  (cd "$m" && go mod tidy) || die "$m: go mod tidy failed"
done
git add -A
git commit -q --amend -m "release $V" -m "CHANGELOG.md: the Unreleased section becomes $V's.
Every module requires the published modules of this repository at $V; go.work's replaces name $V.
Tags: $(for m in $PUBLISHED; do printf '%s ' "$(tag_of "$m")"; done)"
[ -z "$(git status --porcelain)" ] || die "tidy left changes behind: $(git status --porcelain)"

# 4. Tags.
for m in $PUBLISHED; do
  git tag -a -m "$(path_of "$m") $V" "$(tag_of "$m")"
done
echo "release: $(git log -1 --format='%h %s'), tagged:"
for m in $PUBLISHED; do echo "  $(tag_of "$m")"; done
echo "release: nothing pushed. Prove it: make release-check. Publish: git push origin HEAD $(for m in $PUBLISHED; do printf '%s ' "$(tag_of "$m")"; done)"

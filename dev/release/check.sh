#!/usr/bin/env bash
# check.sh [vX.Y.Z] (make release-check [VERSION=vX.Y.Z]): the released modules
# as a user gets them (docs/modules.md, "Releasing").
#
# From a clone of this repository with the version's tags (VERSION; by default
# the v* tag on HEAD; with none, a throwaway release made by dev/release/release.sh
# in the clone, so that every CI run proves the flow), twice:
#
#   proxy   GOPROXY=file://<folder> holding the tagged modules' zips
#           (dev/tools/modproxy: golang.org/x/mod/zip over git's files at each tag);
#   direct  the modules fetched from the clone with git, as a public module
#           proxy fetches them (GOPRIVATE=<module path>, and git's
#           url.<clone>.insteadOf=https://<module path>): this proves the tags
#           (a nested module's carry its folder as prefix) and the checksums;
#
# each time in new modules with an EMPTY module cache (GOMODCACHE in a temp
# folder), GOWORK=off:
#   1. go get of the test kit alone, in a module that requires nothing yet: it
#      must bring the library at the same version;
#   2. a test using the kit;
#   3. go get of the library, kmsseal and outboxaws, a build of README's
#      two-minute program (the block marked <!-- compiled: … -->, as README
#      shows it) with a file importing kmsseal and outboxaws;
#   4. go get of the CDK construct (no build: its bindings need Node.js);
#   5. go install …/cmd/lambdaidem@vX.Y.Z, and lambdaidem --help.
# Third-party modules come from the machine's module cache used as a read-only
# proxy (file://$(go env GOMODCACHE)/cache/download) before the usual GOPROXY,
# checked against the checksum database as usual; only the lambdaidem modules
# skip it (GONOSUMDB, or GOPRIVATE in the direct pass: they are in no public
# checksum database). The two passes' go.sum lines for the lambdaidem modules
# must be identical.
set -euo pipefail

die() { echo "release-check: $*" >&2; exit 1; }
step() { echo "release-check [$pass]: $*"; }

V=${1:-}
cd "$(git rev-parse --show-toplevel)"
repo=$PWD
root=$(awk '$1=="module"{print $2; exit}' go.mod)
PUBLISHED=$(cat dev/release/published)
tag_of() { if [ "$1" = . ]; then echo "$V"; else echo "$1/$V"; fi; }

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
ambient_proxy=$(go env GOPROXY)
shared_cache=$(go env GOMODCACHE)/cache/download
ambient_flags=$(go env GOFLAGS)

clone=$tmp/clone
git clone -q "$repo" "$clone"
if [ -z "$V" ]; then
  V=$(git -C "$clone" tag --points-at HEAD --list 'v[0-9]*' | sort -V | tail -1)
fi
if [ -z "$V" ]; then
  # No release on HEAD: a throwaway one, in the clone only, one patch above the newest tag.
  last=$(git -C "$clone" describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null || echo v0.0.0)
  IFS=. read -r maj min pat <<<"${last#v}"
  V="v$maj.$min.$((${pat%%-*} + 1))-check"
  echo "release-check: HEAD carries no release tag: a throwaway release $V in a clone"
  if [ -z "$(git -C "$clone" config user.email || true)" ]; then
    export GIT_AUTHOR_NAME=release-check GIT_AUTHOR_EMAIL=release-check@localhost
    export GIT_COMMITTER_NAME=release-check GIT_COMMITTER_EMAIL=release-check@localhost
  fi
  (cd "$clone" && dev/release/release.sh "$V") | sed 's/^/  /'
fi
for m in $PUBLISHED; do
  git -C "$clone" rev-parse -q --verify "refs/tags/$(tag_of "$m")" >/dev/null || die "no tag $(tag_of "$m")"
done
echo "release-check: $V ($(git -C "$clone" rev-parse --short "refs/tags/$V^{commit}"))"

(cd dev && go build -o "$tmp/modproxy" ./tools/modproxy)
"$tmp/modproxy" -repo "$clone" -out "$tmp/goproxy" -version "$V" $PUBLISHED | sed 's/^/  /'

# README's two-minute program, as the tagged README shows it.
marker='<!-- compiled: examples/twominutes/main.go -->'
awk -v m="$marker" '$0==m{f=1;next} f==1&&/^```go$/{f=2;next} f==2&&/^```$/{exit} f==2{print}' \
  "$clone/README.md" >"$tmp/twominutes.go"
[ -s "$tmp/twominutes.go" ] || die "README.md has no Go block after '$marker'"

cat >"$tmp/kit_test.go" <<'EOF'
package orders

import (
	"context"
	"testing"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The test kit as README's testing guide uses it: a duplicate replays the
// first outcome and the handler runs once.
func TestCreateOrderOnce(t *testing.T) {
	kit := ddbtest.NewKit(t)
	guard, err := lambdaidem.New(kit.Store)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	call := lambdaidem.Call[string]{Operation: "CreateOrder", Key: "order-1"}
	for range 2 {
		out, err := lambdaidem.Do(context.Background(), guard, call, func(context.Context) (string, error) {
			runs++
			return "receipt-1", nil
		})
		if err != nil || out != "receipt-1" {
			t.Fatalf("Do = %q, %v", out, err)
		}
	}
	if runs != 1 {
		t.Fatalf("the handler ran %d times, want 1", runs)
	}
}
EOF

user() { # user NAME: a new module in the pass's folder
  mkdir -p "$work/$1" && cd "$work/$1" && go mod init "example.com/$1" >/dev/null 2>&1
}

run_pass() {
  pass=$1
  work=$tmp/$pass
  mkdir -p "$work"
  export GOWORK=off GOTOOLCHAIN=local GOMODCACHE="$work/modcache" GOFLAGS="$ambient_flags -modcacherw -trimpath" GOBIN="$work/bin"
  case $pass in
  proxy)
    export GOPROXY="file://$tmp/goproxy,file://$shared_cache,$ambient_proxy" GONOSUMDB=$root GOPRIVATE= GONOPROXY=
    unset GIT_CONFIG_GLOBAL ;;
  direct)
    export GOPROXY="file://$shared_cache,$ambient_proxy" GOPRIVATE=$root GONOSUMDB= GONOPROXY=
    export GIT_CONFIG_GLOBAL=$work/gitconfig GIT_CONFIG_NOSYSTEM=1
    git config --file "$GIT_CONFIG_GLOBAL" "url.$clone.insteadOf" "https://$root" ;;
  esac
  [ -z "$(ls -A "$GOMODCACHE" 2>/dev/null)" ] || die "the module cache $GOMODCACHE is not empty"

  step "1. go get $root/ddbtest@$V alone, in a module that requires nothing"
  user kituser
  go get "$root/ddbtest@$V"
  got=$(go list -m -f '{{.Version}}' "$root")
  [ "$got" = "$V" ] || die "the test kit brought $root@$got, want $V"

  step "2. a test using the kit"
  cp "$tmp/kit_test.go" .
  go mod tidy
  go test -count=1 ./...

  step "3. go get the library, kmsseal and outboxaws; build README's two-minute program"
  user app
  go get "$root@$V" "$root/kmsseal@$V" "$root/outboxaws@$V"
  cp "$tmp/twominutes.go" main.go
  printf 'package main\n\nimport (\n\t"%s/kmsseal"\n\t"%s/outboxaws"\n)\n\nvar _, _ = kmsseal.New, outboxaws.New\n' "$root" "$root" >more.go
  go mod tidy
  go build -o "$work/twominutes" .
  grep "^$root[ /]" go.sum "$work/kituser/go.sum" | sed "s#^$work/##" | sort >"$work/sums"

  step "4. go get the CDK construct"
  user cdkuser
  go get "$root/cdk/lambdaidemcdk@$V"

  step "5. go install $root/cmd/lambdaidem@$V; lambdaidem --help"
  cd "$work"
  go install "$root/cmd/lambdaidem@$V"
  "$GOBIN/lambdaidem" --help >"$work/help" || die "lambdaidem --help failed"
  grep -q '^usage: lambdaidem' "$work/help" || die "lambdaidem --help printed no usage: $(cat "$work/help")"
  cd "$repo"
}

start=$SECONDS
(run_pass proxy)
(run_pass direct)
diff -u "$tmp/proxy/sums" "$tmp/direct/sums" ||
  die "the go.sum lines for $root differ between the proxy's zips and git's tags"
echo "release-check: $V passes as a user gets it, from a module proxy and from git ($((SECONDS - start)) s)"

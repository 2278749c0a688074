#!/usr/bin/env bash
# test.sh runs the full test suite: formatting, vet, staticcheck and every
# Go test with the race detector, including the real-CLI conformance suite
# against the pinned CLIs (installed first by install-clis.sh).
#
# As root, with unshare available, the tests run inside a private network
# namespace that has only loopback, so nothing a CLI does can leave the
# machine. Under CI=true a missing CLI fails the real-CLI tests instead of
# skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The Discord gateway example is a module of its own, and so is the
# worker pool (it depends on NATS, which the root module must not), and
# the outside backend (a backend written with the public driver kit only,
# as another module would).
GATEWAY=examples/discord-gateway
CLUSTER=cluster
OUTSIDE=examples/outside-backend

# The suite needs room: the CLIs (about 1.8 GB), Go's build cache and the
# race-built test binaries, the real CLIs' temporary directories. Say how
# much there is, so that a "no space left on device" explains itself.
echo "== free space"
df -h . "${TMPDIR:-/tmp}" "$(go env GOCACHE)" 2>/dev/null | awk 'NR == 1 || !seen[$1]++'

bash scripts/install-clis.sh

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go mod tidy"
go mod tidy -diff
(cd "$GATEWAY" && go mod tidy -diff)
(cd "$CLUSTER" && go mod tidy -diff)
(cd "$OUTSIDE" && go mod tidy -diff)

echo "== go vet"
go vet ./...
(cd "$GATEWAY" && go vet ./...)
(cd "$CLUSTER" && go vet ./...)
(cd "$OUTSIDE" && go vet ./...)
# Every package builds and vets on the platforms users build for.
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  GOOS=${target%/*} GOARCH=${target#*/} go vet ./...
  (cd "$GATEWAY" && GOOS=${target%/*} GOARCH=${target#*/} go vet ./...)
  (cd "$CLUSTER" && GOOS=${target%/*} GOARCH=${target#*/} go vet ./...)
  (cd "$OUTSIDE" && GOOS=${target%/*} GOARCH=${target#*/} go vet ./...)
done

echo "== staticcheck"
go run "$STATICCHECK" ./...
(cd "$GATEWAY" && go run "$STATICCHECK" ./...)
(cd "$CLUSTER" && go run "$STATICCHECK" ./...)
(cd "$OUTSIDE" && go run "$STATICCHECK" ./...)

echo "== go test -race"
# Every module the tests need is fetched before the network goes (building
# needs none: the tests build in the private namespace, with GOPROXY=off).
go mod download all
(cd "$GATEWAY" && go mod download all)
(cd "$CLUSTER" && go mod download all)
(cd "$OUTSIDE" && go mod download all)
# The outside backend's tests include one that its `go list -deps` shows no
# agentcli package under internal/ but those the public kit is built on.
TESTS="go test -race -count=1 -timeout 60m ./... && (cd $GATEWAY && go test -race -count=1 -timeout 20m ./...) && (cd $CLUSTER && go test -race -count=1 -timeout 10m ./...) && (cd $OUTSIDE && go test -race -count=1 -timeout 10m ./...)"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -n true 2>/dev/null; then
  echo "(in a private network namespace: loopback only)"
  exec unshare -n sh -c "ip link set lo up && export GOPROXY=off && $TESTS"
else
  exec sh -c "$TESTS"
fi

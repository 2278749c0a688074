#!/usr/bin/env bash
# test.sh runs the full test suite: formatting, vet, staticcheck and every
# Go test with the race detector, including the real-CLI conformance suite
# against the pinned CLIs (installed first by install-clis.sh).
#
# As root, with unshare available, the tests run inside a private network
# namespace that has only loopback, so nothing a CLI does can leave the
# machine. Under CI=true a missing CLI fails the real-CLI tests instead of
# skipping them. `scripts/test.sh --tests` runs only the Go tests.
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

# --tests runs only the Go tests, as the end of the suite does (in the
# private network namespace when there is one).
#
# The conformance package is the longest by far (about 32 minutes alone on
# two cores), and some of its scenarios hold one of go test's parallel
# slots while they wait (gemini's minute before loading a new session, a
# stalled turn, a permission timeout): it runs three scenarios at a time
# (-parallel 3 rather than one per CPU) beside the other packages of the
# root module, which are followed by the three other modules' suites, side
# by side, in its tail. Its test binary is built first, so that the two go
# commands do not both compile the packages they share. Each suite's
# output follows when it is done.
if [ "${1:-}" = --tests ]; then
  logs=$(mktemp -d)
  trap 'rm -rf "$logs"' EXIT
  status=0
  go test -race -c -o "$logs/conformance.test" ./conformance || status=1
  (cd conformance && "$logs/conformance.test" -test.count=1 -test.timeout=60m -test.parallel=3) >"$logs/conformance" 2>&1 &
  conformance=$!
  go test -race -count=1 -timeout 40m $(go list ./... | grep -v '/conformance$') || status=1
  # The outside backend's tests include one that its `go list -deps`
  # shows no agentcli package under internal/ but those the public kit
  # is built on.
  modules=("$GATEWAY" "$CLUSTER" "$OUTSIDE")
  pids=()
  for i in "${!modules[@]}"; do
    (cd "${modules[$i]}" && go test -race -count=1 -timeout 20m ./...) >"$logs/module$i" 2>&1 &
    pids+=($!)
  done
  for i in "${!modules[@]}"; do
    wait "${pids[$i]}" || status=1
    echo "== go test -race in ${modules[$i]}"
    cat "$logs/module$i"
  done
  crc=0
  wait "$conformance" || crc=$?
  echo "== go test -race ./conformance"
  cat "$logs/conformance"
  echo "conformance: exit $crc after ${SECONDS}s of tests"
  [ "$crc" = 0 ] || status=1
  exit "$status"
fi

# The suite needs room: the CLIs (about 1.8 GB), Go's build cache and the
# race-built test binaries, the real CLIs' temporary directories. Say how
# much there is, so that a "no space left on device" explains itself.
echo "== free space"
df -h . "${TMPDIR:-/tmp}" "$(go env GOCACHE)" 2>/dev/null | awk 'NR == 1 || !seen[$1]++'

# Installing the CLIs and fetching the modules wait on the network, the
# static checks on the CPU: they run side by side, and the fetch's output
# follows the checks'.
fetch_log=$(mktemp)
(
  bash scripts/install-clis.sh
  # Every module the tests need is fetched before the network goes
  # (building needs none: the tests build in the private namespace,
  # with GOPROXY=off).
  go mod download all
  (cd "$GATEWAY" && go mod download all)
  (cd "$CLUSTER" && go mod download all)
  (cd "$OUTSIDE" && go mod download all)
) >"$fetch_log" 2>&1 &
fetch_pid=$!
trap 'kill "$fetch_pid" 2>/dev/null || true; rm -f "$fetch_log"' EXIT

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
# Every package builds and vets on the platforms users build for: each
# operating system's files, and both sides of the one architecture split
# in the tree (driver/jsonscan's amd64 assembly and its portable twin),
# which linux/amd64 and linux/arm64 cover. Each further target costs
# about 80 CPU-seconds on a cold cache (the standard library, the MCP
# SDK and NATS compiled again for it) and would vet no other file.
for target in linux/amd64 linux/arm64 darwin/arm64 windows/amd64; do
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

echo "== install the pinned CLIs, fetch the modules"
fetch_rc=0
wait "$fetch_pid" || fetch_rc=$?
cat "$fetch_log"; rm -f "$fetch_log"
if [ "$fetch_rc" != 0 ]; then
  echo "installing the CLIs or fetching the modules failed (exit $fetch_rc)"; exit 1
fi

echo "== go test -race"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -n true 2>/dev/null; then
  echo "(in a private network namespace: loopback only)"
  exec unshare -n sh -c 'ip link set lo up && GOPROXY=off exec bash scripts/test.sh --tests'
fi
exec bash scripts/test.sh --tests

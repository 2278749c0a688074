#!/usr/bin/env bash
# bench.sh measures agentcli against the official TypeScript SDKs
# (@anthropic-ai/claude-agent-sdk, @openai/codex-sdk) on the same fake-CLI
# streams, interleaved, and prints a markdown table of medians with the
# agentcli ÷ TS ratios (see internal/bench). Not part of the test
# suite: it takes from seconds (default) to a long while (2000MB).
#
#   scripts/bench.sh                                  # quick: 2 MB streams, 3 rounds
#   scripts/bench.sh -sizes 2MB,200MB,2000MB -slow -huge -o bench.md
#   scripts/bench.sh -h                               # every flag
#
# The SDKs are installed from npm, pinned by
# internal/bench/node/package-lock.json, into
# internal/bench/node/node_modules (git-ignored). Their optional
# platform packages (the real CLIs' binaries) are left out: the benchmark
# points the SDKs at the fake CLI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/internal/bench/node"
stamp="$dir/node_modules/.agentcli-lock.sha256"
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bench: installing the pinned TypeScript SDKs into $dir/node_modules" >&2
  (cd "$dir" && npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  echo "$want" > "$stamp"
fi
cd "$root"
exec go run ./internal/bench -node "$dir" "$@"

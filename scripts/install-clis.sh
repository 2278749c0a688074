#!/usr/bin/env bash
# install-clis.sh installs the exact CLI versions agentcli is tested against
# (tools/clis/package-lock.json) into tools/clis/node_modules, a project-local,
# git-ignored folder. The binaries end up in tools/clis/node_modules/.bin.
# Idempotent: when the installed versions already match the lockfile it does nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/tools/clis"
stamp="$dir/node_modules/.agentcli-lock.sha256"
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$dir/node_modules/.bin/claude" ]; then
  exit 0
fi
echo "install-clis: installing pinned CLIs into $dir/node_modules" >&2
# Only two install scripts run (package.json allowScripts): claude's and opencode's postinstall, which hard-link
# the platform binary (itself an npm dependency) into place. Nothing is downloaded
# by them. `npm install` (not `npm ci`) because npm 11 reports opencode's
# optional platform packages as out of sync with the lockfile under `npm ci`.
(cd "$dir" && npm install --no-audit --no-save --no-fund --loglevel=error >&2)
for c in claude codex gemini opencode copilot; do
  "$dir/node_modules/.bin/$c" --version >/dev/null 2>&1 || { echo "install-clis: $c does not run" >&2; exit 1; }
done
echo "$want" > "$stamp"

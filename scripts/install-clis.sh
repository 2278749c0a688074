#!/usr/bin/env bash
# install-clis.sh installs the exact CLI versions agentcli is tested against
# (tools/clis/package-lock.json) into tools/clis/node_modules, a project-local,
# git-ignored folder. The binaries end up in tools/clis/node_modules/.bin.
#
#   bash scripts/install-clis.sh                # every pinned CLI (what CI and the conformance suite need)
#   bash scripts/install-clis.sh qwen droid     # only these (CLIs installed before are kept)
#   AGENTCLI_CLIS="claude qwen" bash scripts/install-clis.sh   # the same, from the environment
#
# Names are the backends' (claude codex gemini opencode qwen droid ...; see tools/clis/clis.go). Idempotent:
# when the CLIs asked for are installed from the same lockfile it does nothing. A CLI whose pinned package has
# no build for this platform (droid's is published for linux/x64 only) is reported and left out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/tools/clis"
nm="$dir/node_modules"
stamp="$nm/.agentcli-lock.sha256"
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)

# The pins: one line per CLI, "name package version kind binpath", kind being dependencies or
# optionalDependencies (platform packages), binpath the executable under node_modules for a package that
# declares no bin (droid's platform package). The name of each package is tools/clis/clis.go's.
pins=$(node -e '
const pj = require(process.argv[1]);
const names = {"@anthropic-ai/claude-code": "claude", "@openai/codex": "codex", "@google/gemini-cli": "gemini",
  "opencode-ai": "opencode", "@qwen-code/qwen-code": "qwen", "@factory/cli-linux-x64": "droid"};
const bins = {"droid": "@factory/cli-linux-x64/bin/droid"};
for (const kind of ["dependencies", "optionalDependencies"])
  for (const [pkg, v] of Object.entries(pj[kind] || {})) {
    const n = names[pkg] || pkg.replace(/^@[^/]*\//, "");
    console.log([n, pkg, v, kind, bins[n] || "-"].join(" "));
  }' "$dir/package.json")
all=$(echo "$pins" | cut -d' ' -f1 | tr '\n' ' ')

requested=("$@")
if [ ${#requested[@]} -eq 0 ] && [ -n "${AGENTCLI_CLIS:-}" ]; then
  read -r -a requested <<<"${AGENTCLI_CLIS//,/ }"
fi
if [ ${#requested[@]} -eq 0 ]; then
  read -r -a requested <<<"$all"
fi
for n in "${requested[@]}"; do
  case " $all " in *" $n "*) ;; *) echo "install-clis: no pinned CLI named $n (pinned: $all)" >&2; exit 2 ;; esac
done

# supported NAME: the CLI has a build for this platform (platform packages are os/cpu specific).
supported() {
  local kind
  kind=$(echo "$pins" | awk -v n="$1" '$1 == n {print $4}')
  [ "$kind" = dependencies ] || [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ]
}

# What a stamp records: the lockfile's hash, then the CLIs installed from it.
installed=()
if [ -f "$stamp" ]; then
  read -r got rest <"$stamp" || true
  if [ "${got:-}" = "$want" ]; then
    read -r -a installed <<<"${rest:-}"
  fi
fi
missing=()
for n in "${requested[@]}"; do
  case " ${installed[*]:-} " in *" $n "*) [ -x "$nm/.bin/$n" ] || missing+=("$n") ;; *) missing+=("$n") ;; esac
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

# The set to install: what was asked for, plus what is installed already (npm removes what its package.json
# does not list), minus what this platform has no build of.
declare -A keep=()
for n in "${installed[@]:+${installed[@]}}" "${requested[@]}"; do
  if supported "$n"; then keep[$n]=1; else echo "install-clis: $n has no pinned build for $(uname -s)/$(uname -m); skipped" >&2; fi
done
names=$(echo "$pins" | awk '{print $1}' | while read -r n; do [ -n "${keep[$n]:-}" ] && echo "$n"; done | tr '\n' ' ')
echo "install-clis: installing pinned CLIs ($names) into $nm" >&2
start=$(date +%s)

# Only two install scripts run (package.json allowScripts): claude's and opencode's postinstall, which hard-link
# the platform binary (itself an npm dependency) into place. Nothing is downloaded
# by them. `npm install` (not `npm ci`) because npm 11 reports opencode's
# optional platform packages as out of sync with the lockfile under `npm ci`.
if [ "$names" = "$all" ]; then
  (cd "$dir" && npm install --no-audit --no-save --no-fund --loglevel=error >&2)
else
  # A subset: npm runs in a staging folder whose package.json lists only these CLIs, with the whole lockfile
  # (so that every version is the pinned one) and the node_modules moved in and back.
  stage="$dir/.stage"
  rm -rf "$stage" && mkdir -p "$stage"
  trap 'if [ -d "$stage/node_modules" ]; then rm -rf "$nm"; mv "$stage/node_modules" "$nm"; fi; rm -rf "$stage"' EXIT
  node -e '
const [file, out, ...names] = process.argv.slice(1);
const pj = require(file);
const keep = new Set(names);
const n = {"@anthropic-ai/claude-code": "claude", "@openai/codex": "codex", "@google/gemini-cli": "gemini",
  "opencode-ai": "opencode", "@qwen-code/qwen-code": "qwen", "@factory/cli-linux-x64": "droid"};
for (const kind of ["dependencies", "optionalDependencies"])
  for (const pkg of Object.keys(pj[kind] || {}))
    if (!keep.has(n[pkg] || pkg.replace(/^@[^/]*\//, ""))) delete pj[kind][pkg];
require("fs").writeFileSync(out, JSON.stringify(pj, null, 2) + "\n");' "$dir/package.json" "$stage/package.json" $names
  cp "$dir/package-lock.json" "$stage/package-lock.json"
  if [ -d "$nm" ]; then mv "$nm" "$stage/node_modules"; fi
  (cd "$stage" && npm install --no-audit --no-save --no-fund --loglevel=error >&2)
  mv "$stage/node_modules" "$nm"
  rm -rf "$stage"
  trap - EXIT
fi
rm -f "$stamp"

# Packages that declare no bin get a link in .bin.
echo "$pins" | while read -r n _ _ _ bin; do
  if [ "$bin" != - ] && [ -n "${keep[$n]:-}" ] && [ -x "$nm/$bin" ]; then
    ln -sfn "../$bin" "$nm/.bin/$n"
  fi
done
for n in $names; do
  "$nm/.bin/$n" --version >/dev/null 2>&1 || { echo "install-clis: $n does not run" >&2; exit 1; }
done
echo "$want $names" >"$stamp"
echo "install-clis: done in $(($(date +%s) - start)) s; $(du -sh "$nm" | cut -f1) in $nm" >&2

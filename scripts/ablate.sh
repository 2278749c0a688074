#!/usr/bin/env bash
# ablate.sh measures what each of the reader's and decoder's techniques
# buys: it builds the benchmark's agentcli runner (internal/bench/gorunner)
# from this checkout once as it is ("base") and once per technique with
# that technique turned off, then runs scripts/bench.sh with every build
# as a contender, side by side in one interleaved run. A technique stays
# only while its row shows a gain (≥ 5 % MB/s on one stream, or a memory
# bound on the 50 MB line); see README, "Performance".
#
#   scripts/ablate.sh                                   # 200 MB + one 50 MB line, claude and codex, 3 rounds
#   scripts/ablate.sh -sizes 2MB -rounds 1              # any bench.sh flags after the defaults
#   ABLATE=nodec,nommap scripts/ablate.sh               # only these techniques
#
# Techniques (what the variant turns off):
#   nodec      decoder goroutines (driver/reader.go decoders → 0)
#   nommap     mapped long-line chunks (internal/proc: heap chunks, never returned early)
#   noinplace  in-place decoding of long strings (driver/jsonscan: always copied)
#   noblock    64-byte string blocks (driver/jsonscan: 8 bytes at a time)
#   nopipe     the 1 MiB stdout pipe (internal/proc: the system's 64 KiB)
#   noroom     the heap room of runs that keep Raw (driver/reader.go: never taken)
# Each variant is a one-line source edit applied to a scratch worktree; a
# script that no longer finds the line it edits stops with an error
# instead of measuring the unchanged code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add -q --detach "$work/src" HEAD
src=$work/src

# edit FILE PERL-SUBSTITUTION: apply it to the scratch worktree, or fail.
edit() {
  local f=$src/$1
  cp "$f" "$work/before"
  perl -0pi -e "$2" "$f"
  if cmp -s "$f" "$work/before"; then
    echo "ablate: $1 no longer has what the edit expects: $2" >&2
    exit 1
  fi
}

variant() {
  case $1 in
  nodec) edit driver/reader.go 's/(func decoders\(\) int \{)/$1\n\treturn 0/' ;;
  nommap) edit internal/proc/exit_linux.go 's/(\tc, err := syscall\.Mmap\()/\treturn make([]byte, size), false\n$1/' ;;
  noinplace) edit driver/jsonscan/inplace.go 's/const inPlaceMin = 64 << 10/const inPlaceMin = 1 << 62/' ;;
  noblock) edit driver/jsonscan/jsonscan.go 's/if r\+blockNeed <= len\(buf\) \{\n(\t+)var end bool/if false && r+blockNeed <= len(buf) {\n$1var end bool/' ;;
  nopipe) edit internal/proc/exit_linux.go 's/(func growPipe\(f \*os\.File\) \{)/$1\n\treturn/' ;;
  noroom) edit driver/reader.go 's/if !m\.room \{/if false && !m.room {/' ;;
  *) echo "ablate: unknown technique $1" >&2; exit 2 ;;
  esac
}

names=${ABLATE:-nodec,nommap,noinplace,noblock,nopipe,noroom}
(cd "$src" && go build -o "$work/gorunner-base" ./internal/bench/gorunner)
variants="base=$work/gorunner-base"
for n in ${names//,/ }; do
  git -C "$src" checkout -q -- .
  variant "$n"
  (cd "$src" && go build -o "$work/gorunner-$n" ./internal/bench/gorunner)
  variants="$variants,$n=$work/gorunner-$n"
done
git -C "$src" checkout -q -- .
"$root/scripts/bench.sh" -clis claude,codex -sizes 200MB -huge -rounds 3 -variants "$variants" "$@"

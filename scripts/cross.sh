#!/usr/bin/env bash
# scripts/cross.sh TARGET ARGS...: runs `lockstep-client ARGS` as built for
# TARGET (aarch64, i686, windows or wasm32; scripts/cross-build.sh builds
# them) under that target's runner. Stdout is the program's, unchanged;
# the exit code is passed through. On wasm32 the program is `lockstep-balls`,
# which has the `sim` and `replay FILE --verify --headless` commands only
# (no sockets there). With PROGRAM=lockstep-topple in the environment the
# program is Topple's `lockstep-topple` on every target, which has the same
# two commands and `probe` (scripts/cross-build.sh builds it everywhere;
# `make cross` needs it on wasm32 only, where the client is not built).
set -euo pipefail
source "$(dirname "$0")/cross-env.sh"

target=${1:-}
if ! bin=$(binary_of "$target" "${PROGRAM:-lockstep-client}"); then
  echo "usage: [PROGRAM={$(IFS='|'; echo "${cross_programs[*]}")}] scripts/cross.sh {$(IFS='|'; echo "${cross_targets[*]}")} ARGS..." >&2
  exit 2
fi
shift
if [ ! -e "$bin" ]; then
  echo "cross: $bin is missing: run scripts/cross-build.sh (or make cross) first" >&2
  exit 2
fi
case "$target" in
  aarch64) exec qemu-aarch64 -L /usr/aarch64-linux-gnu "$bin" "$@" ;;
  i686) exec /usr/i686-linux-gnu/lib/ld-linux.so.2 --library-path /usr/i686-linux-gnu/lib "$bin" "$@" ;;
  windows)
    # A prefix of our own, made once: wine prints its setup on stderr only.
    export WINEPREFIX=${WINEPREFIX:-$cross_dir/wine} WINEDEBUG=-all
    exec wine "$bin" "$@"
    ;;
  wasm32) exec node --no-warnings "$cross_root/scripts/cross/wasi-run.mjs" "$bin" "$@" ;;
esac

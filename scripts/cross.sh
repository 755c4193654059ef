#!/usr/bin/env bash
# scripts/cross.sh [--manifest-path CARGO_TOML] TARGET ARGS...: runs
# `lockstep-client ARGS` as built for TARGET (aarch64, i686, windows or
# wasm32; scripts/cross-build.sh builds them) under that target's runner.
# Stdout is the program's, unchanged; the exit code is passed through. On
# wasm32 the program is `lockstep-balls`, which has the `sim` and `replay
# FILE --verify --headless` commands only (no sockets there). With
# PROGRAM=lockstep-topple in the environment the program is Topple's
# `lockstep-topple` on every target, which has the same two commands and
# `probe` (scripts/cross-build.sh builds it everywhere; `make cross` needs
# it on wasm32 only, where the client is not built). With --manifest-path
# it is the client of that game outside the workspace, and on wasm32 its
# offline program (scripts/game-manifest.sh), as `scripts/cross-build.sh
# --manifest-path CARGO_TOML` builds them.
set -euo pipefail
usage() {
  echo "usage: [PROGRAM={$(IFS='|'; echo "${cross_programs[*]}")}] scripts/cross.sh {$(IFS='|'; echo "${cross_targets[*]}")} ARGS..." >&2
  echo "       scripts/cross.sh --manifest-path CARGO_TOML {$(IFS='|'; echo "${cross_targets[*]}")} ARGS..." >&2
  exit 2
}
source "$(dirname "$0")/cross-env.sh"

manifest=""
case "${1:-}" in
  --manifest-path) [ $# -ge 2 ] || usage; manifest=$(manifest_path cross "$2"); shift 2 ;;
  --manifest-path=*) manifest=$(manifest_path cross "${1#*=}"); shift ;;
esac
target=${1:-}
triple_of "$target" >/dev/null || usage
if [ -n "$manifest" ]; then
  outside_game cross "$manifest"
  bin=$(outside_binary_of "$target")
  built="scripts/cross-build.sh --manifest-path $manifest"
else
  bin=$(binary_of "$target" "${PROGRAM:-lockstep-client}") || usage
  built="scripts/cross-build.sh (or make cross)"
fi
shift
if [ ! -e "$bin" ]; then
  echo "cross: $bin is missing: run $built first" >&2
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

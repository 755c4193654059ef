#!/usr/bin/env bash
# scripts/cross-build.sh [PROGRAM | --manifest-path CARGO_TOML]...: builds
# what scripts/cross.sh runs, each with Debian's compiler building std for
# the target (see scripts/cross-env.sh), and the small DLL wine 8.0 needs
# to run Rust programs. Prints each build's time. PROGRAM is
#   lockstep-client: the headless client for aarch64, i686 and Windows, and
#     for wasm32 (no sockets) the offline programs of both games,
#     `lockstep-balls` and `lockstep-topple`: what `make cross` runs;
#   lockstep-topple: Topple's offline program, optimised, for all four
#     targets: what `make probe` runs.
# --manifest-path names a game outside the workspace (scripts/game-manifest.sh
# says what it provides): its headless client (--no-default-features) for
# aarch64, i686 and Windows and its offline program for wasm32, built from
# its own manifest into the same target directory, so that it shares the
# dependencies built there. Without arguments, lockstep-client and
# examples/flock/Cargo.toml: what `make cross` runs.
set -euo pipefail
usage() {
  echo "usage: scripts/cross-build.sh [$(IFS='|'; echo "${cross_programs[*]}")|--manifest-path CARGO_TOML]..." >&2
  exit 2
}
source "$(dirname "$0")/cross-env.sh"
programs=()
manifest_options=()
while [ $# -gt 0 ]; do
  case "$1" in
    --manifest-path) [ $# -ge 2 ] || usage; manifest_options+=("$1" "$2"); shift 2 ;;
    --manifest-path=*) manifest_options+=("$1"); shift ;;
    lockstep-client | lockstep-topple) programs+=("$1"); shift ;;
    *) usage ;;
  esac
done
manifests=()
if [ ${#programs[@]} -eq 0 ] || [ ${#manifest_options[@]} -gt 0 ]; then
  manifest_args cross "${manifest_options[@]}"
  [ ${#programs[@]} -gt 0 ] || [ ${#manifest_options[@]} -gt 0 ] || programs=(lockstep-client)
fi
cd "$cross_root"

# build "TARGET..." CARGO-ARGS...: one cargo build for all of TARGETS, so
# that their crates keep both cores busy through each other's longest
# (rapier2d, lockstep-topple, the client), where one target alone would
# leave a core idle. Measured warm: the three clients in 97 s
# (BENCHMARKS.md, "CI in minutes").
build() {
  local names=$1 name start std=(-Zbuild-std=core,alloc,std) targets=()
  shift
  for name in $names; do targets+=(--target "$(triple_of "$name")"); done
  # wasm32 aborts on panic and has no backtrace support to build.
  [ "$names" = wasm32 ] && std=(-Zbuild-std=core,alloc,std,panic_abort -Zbuild-std-features=)
  start=$(date +%s)
  echo "cross: building ${names// /, }${label:+ $label}" >&2
  scripts/stage.sh - "build ${names// /, }${label:+ $label}" \
    /usr/bin/cargo build -q "${std[@]}" "${targets[@]}" --target-dir "$cross_dir" "$@"
  echo "cross: built ${names// /, }${label:+ $label} in $(($(date +%s) - start)) s" >&2
}

# Rust's Windows std imports ProcessPrng from bcryptprimitives.dll, which
# wine 8.0 lacks; a forwarder to RtlGenRandom next to the binary fills in.
windows_dll() { # WINDOWS-BINARY
  x86_64-w64-mingw32-gcc -O2 -shared -o "$(dirname "$1")/bcryptprimitives.dll" \
    scripts/cross/bcryptprimitives.c scripts/cross/bcryptprimitives.def -ladvapi32
}

scripts/deps-cache.sh restore "$cross_dir"
for program in "${programs[@]}"; do
  case "$program" in
    lockstep-client)
      label=""
      build "aarch64 i686 windows" -p lockstep-cli --no-default-features --features games --bin lockstep-client
      build wasm32 --release -p lockstep-balls --bin lockstep-balls \
        -p lockstep-topple --bin lockstep-topple
      ;;
    lockstep-topple)
      label=$program
      build "aarch64 i686 windows" --release -p lockstep-topple --bin lockstep-topple
      build wasm32 --release -p lockstep-topple --bin lockstep-topple
      ;;
  esac
  windows_dll "$(binary_of windows "$program")"
done
for manifest in "${manifests[@]}"; do
  outside_game cross "$manifest"
  label=$game_package
  build "aarch64 i686 windows" --manifest-path "$manifest" --no-default-features --bin "$game_client"
  build wasm32 --release --manifest-path "$manifest" --bin "$game_offline"
  windows_dll "$(outside_binary_of windows)"
done
scripts/deps-cache.sh save "$cross_dir"

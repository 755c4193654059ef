#!/usr/bin/env bash
# scripts/cross-build.sh [PROGRAM...]: builds what scripts/cross.sh runs,
# each with Debian's compiler building std for the target (see
# scripts/cross-env.sh), and the small DLL wine 8.0 needs to run Rust
# programs. Prints each build's time. PROGRAM is
#   lockstep-client: the headless client for aarch64, i686 and Windows, and
#     for wasm32 (no sockets) the offline programs of both games,
#     `lockstep-balls` and `lockstep-topple`: what `make cross` runs;
#   lockstep-topple: Topple's offline program, optimised, for all four
#     targets: what `make probe` runs.
# Without arguments, lockstep-client.
set -euo pipefail
source "$(dirname "$0")/cross-env.sh"
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

scripts/deps-cache.sh restore "$cross_dir"
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(lockstep-client)
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
    *)
      echo "usage: scripts/cross-build.sh [$(IFS='|'; echo "${cross_programs[*]}")]..." >&2
      exit 2
      ;;
  esac

  # Rust's Windows std imports ProcessPrng from bcryptprimitives.dll, which
  # wine 8.0 lacks; a forwarder to RtlGenRandom next to the binary fills in.
  x86_64-w64-mingw32-gcc -O2 -shared -o "$(dirname "$(binary_of windows "$program")")/bcryptprimitives.dll" \
    scripts/cross/bcryptprimitives.c scripts/cross/bcryptprimitives.def -ladvapi32
done
scripts/deps-cache.sh save "$cross_dir"

#!/usr/bin/env bash
# scripts/cross-build.sh [PROGRAM...]: builds what scripts/cross.sh runs,
# each with Debian's compiler building std for the target (see
# scripts/cross-env.sh), and the small DLL wine 8.0 needs to run Rust
# programs. Prints each build's time. PROGRAM is
#   lockstep-client: the headless client for aarch64, i686 and Windows, and
#     for wasm32 (no sockets) the offline programs of both games,
#     `lockstep-sim` and `lockstep-physics`: what `make cross` runs;
#   lockstep-physics: Topple's offline program, optimised, for all four
#     targets: what `make probe` runs.
# Without arguments, lockstep-client.
set -euo pipefail
source "$(dirname "$0")/cross-env.sh"
cd "$cross_root"

build() {
  local name=$1 start std=(-Zbuild-std=core,alloc,std)
  shift
  # wasm32 aborts on panic and has no backtrace support to build.
  [ "$name" = wasm32 ] && std=(-Zbuild-std=core,alloc,std,panic_abort -Zbuild-std-features=)
  start=$(date +%s)
  echo "cross: building $name${label:+ $label}" >&2
  /usr/bin/cargo build -q "${std[@]}" --target "$(triple_of "$name")" --target-dir "$cross_dir" "$@"
  echo "cross: built $name${label:+ $label} in $(($(date +%s) - start)) s" >&2
}

programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(lockstep-client)
for program in "${programs[@]}"; do
  case "$program" in
    lockstep-client)
      label=""
      client=(-p lockstep-cli --no-default-features --bin lockstep-client)
      build aarch64 "${client[@]}"
      build i686 "${client[@]}"
      build windows "${client[@]}"
      build wasm32 --release -p lockstep-sim --features engine --bin lockstep-sim
      build wasm32 --release -p lockstep-physics --bin lockstep-physics
      ;;
    lockstep-physics)
      label=$program
      for target in "${cross_targets[@]}"; do
        build "$target" --release -p lockstep-physics --bin lockstep-physics
      done
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

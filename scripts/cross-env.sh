# Sourced by the cross scripts: where the cross builds live and how each
# target is built. Debian's compiler (rustc-web, 1.96) builds std for each
# target from rust-web-src; rustup's pinned 1.95 builds only the native
# client. That a second compiler computes the same bits is part of what
# the matrix proves.
cross_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cross_dir=${LOCKSTEP_CROSS_DIR:-$cross_root/target/cross}
# Games outside the workspace, given their Cargo.toml (outside_game).
source "$cross_root/scripts/game-manifest.sh"

# The targets, by the short names scripts/cross.sh takes.
cross_targets=(aarch64 i686 windows wasm32)

triple_of() {
  case "$1" in
    aarch64) echo aarch64-unknown-linux-gnu ;;
    i686) echo i686-unknown-linux-gnu ;;
    windows) echo x86_64-pc-windows-gnu ;;
    wasm32) echo wasm32-wasip1 ;;
    *) return 1 ;;
  esac
}

# The programs scripts/cross-build.sh builds for every target, by the names
# binary_of and scripts/cross.sh (PROGRAM=...) take.
cross_programs=(lockstep-client lockstep-topple)

# binary_of TARGET [PROGRAM]: the binary scripts/cross-build.sh builds for
# a target. PROGRAM lockstep-client (the default) is the headless client,
# or on wasm32 (no sockets) the ball game's game-and-engine-only
# `lockstep-balls`; lockstep-topple is Topple's offline program (`sim`,
# `replay --verify` and the rapier probe), built optimised for every
# target. The client plays every game, so `make cross` asks for
# lockstep-topple on wasm32 only; `make probe` asks for it everywhere.
binary_of() {
  local triple
  triple=$(triple_of "$1") || return 1
  case "${2:-lockstep-client}" in
    lockstep-client)
      case "$1" in
        aarch64 | i686) echo "$cross_dir/$triple/debug/lockstep-client" ;;
        windows) echo "$cross_dir/$triple/debug/lockstep-client.exe" ;;
        wasm32) echo "$cross_dir/$triple/release/lockstep-balls.wasm" ;;
      esac
      ;;
    lockstep-topple)
      case "$1" in
        aarch64 | i686) echo "$cross_dir/$triple/release/lockstep-topple" ;;
        windows) echo "$cross_dir/$triple/release/lockstep-topple.exe" ;;
        wasm32) echo "$cross_dir/$triple/release/lockstep-topple.wasm" ;;
      esac
      ;;
    *) return 1 ;;
  esac
}

# outside_binary_of TARGET: what scripts/cross-build.sh builds for TARGET
# of the game outside_game read last, from its own manifest into the same
# target directory: its headless client, unoptimised like
# lockstep-client, or on wasm32 its offline program, optimised like
# lockstep-balls.
outside_binary_of() {
  local triple
  triple=$(triple_of "$1") || return 1
  case "$1" in
    aarch64 | i686) echo "$cross_dir/$triple/debug/$game_client" ;;
    windows) echo "$cross_dir/$triple/debug/$game_client.exe" ;;
    wasm32) echo "$cross_dir/$triple/release/$game_offline.wasm" ;;
  esac
}

export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
# No debug information in the optimised cross programs: nothing profiles
# them, and it only costs build time (the native release keeps it).
export CARGO_PROFILE_RELEASE_DEBUG=0
# The cross clients carry line tables only, as the workspace's dev profile
# says, whichever manifest they are built from: a game outside the
# workspace (full debug information by default) then shares std, and the
# dependencies its graph resolves with the same features, with the
# workspace's builds here instead of compiling them again.
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_i686_unknown_linux_gnu=i686-linux-gnu-gcc
export CARGO_TARGET_I686_UNKNOWN_LINUX_GNU_LINKER=i686-linux-gnu-gcc
export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc-posix
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc-posix
# Debian's wasi-libc instead of a self-contained one, and its entry point.
export CARGO_TARGET_WASM32_WASIP1_LINKER=wasm-ld-22
export CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="-C link-self-contained=no -L native=/usr/lib/wasm32-wasi -C link-arg=/usr/lib/wasm32-wasi/crt1-command.o"

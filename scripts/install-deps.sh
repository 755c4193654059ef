#!/usr/bin/env bash
# Installs the system packages lockstep needs, when they are missing.
# Debian/Ubuntu: through apt-get (with sudo when not root). Elsewhere: says
# what to install and stops.
set -euo pipefail

# jq: scripts/run-tests.sh reads the list of test binaries cargo prints.
packages=(libsdl2-dev libsdl2-gfx-dev xvfb xauth xdotool jq)
# The browser peer (make web, which make demo and make test run): Debian's
# Rust compiler with the std sources builds it for wasm32, and make test
# plays it in Debian's Chromium, Firefox ESR and WebKitGTK (its
# MiniBrowser, on Xvfb), driven by node (scripts/browser/drive.mjs; xwd
# and netpbm take WebKit's screenshots).
web_packages=(rustc-web cargo-web rust-web-src lld-22 chromium nodejs
  firefox-esr libwebkit2gtk-4.1-0 x11-apps netpbm)
packages+=("${web_packages[@]}")
# `install-deps.sh cross` (make cross): Debian's Rust compiler with the std
# sources (it builds std for each target), the cross linkers and C
# libraries, and the runners: qemu for aarch64, node for wasm, wine for
# Windows (i686 runs natively through its own loader).
if [ "${1:-}" = cross ]; then
  packages=(rustc-web cargo-web rust-web-src wasi-libc lld-22
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross
    gcc-i686-linux-gnu libc6-dev-i386-cross
    gcc-mingw-w64-x86-64-posix
    qemu-user nodejs wine64)
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "lockstep needs a Rust toolchain (cargo): see https://rustup.rs" >&2
  exit 1
fi

if [ "${1:-}" = cross ] && { ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; }; then
  echo "make cross builds with Debian's packages (rustc-web, rust-web-src, the cross" >&2
  echo "linkers, qemu-user, wine, node): run it on Debian 12 or later." >&2
  exit 1
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  if command -v chromium >/dev/null 2>&1 && command -v node >/dev/null 2>&1 &&
    command -v firefox-esr >/dev/null 2>&1 &&
    pkg-config --exists sdl2 SDL2_gfx 2>/dev/null && command -v Xvfb >/dev/null 2>&1 &&
    command -v xdotool >/dev/null 2>&1 && command -v jq >/dev/null 2>&1; then
    exit 0
  fi
  cat >&2 <<MSG
This is not a Debian/Ubuntu system, so lockstep cannot install its system
packages for you. Install these with your package manager, then run make again:
  - SDL2 development files        (e.g. SDL2-devel, sdl2)
  - SDL2_gfx development files    (e.g. SDL2_gfx-devel, sdl2_gfx)
  - Xvfb                          (only for 'make test')
  - xdotool                       (only for 'make test': it presses keys in
                                   the server browser's window)
  - jq                            (only for 'make test': it lists the test
                                   binaries)
  - for the browser page (make web): a Rust compiler that builds for
    wasm32-unknown-unknown (see scripts/build-web.sh; wasm-bindgen-cli is
    installed by the project itself)
  - Chromium, Firefox, WebKitGTK 4.1 and node 20 or later (only for
    'make test': the browser tests; scripts/browser/drive.mjs says how each
    is started)
MSG
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing missing system packages: ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "Please install as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  sudo=(sudo)
fi
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"

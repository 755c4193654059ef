#!/usr/bin/env bash
# Installs the wasm-bindgen command line the browser peer is built with,
# into target/tools/bin, unless it is already there. Its version must be
# exactly the version of the wasm-bindgen crate (see the root Cargo.toml):
# a module made by another version is refused. Not packaged by Debian;
# building it takes about four minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.2.130
root=target/tools
bin=$root/bin/wasm-bindgen

if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "wasm-bindgen $version" ]; then
  exit 0
fi
echo "Installing wasm-bindgen-cli $version into $root (a few minutes, once)"
# Not --locked: its lock file names versions some registry mirrors lack.
cargo install --quiet --root "$root" wasm-bindgen-cli --version "=$version"

#!/usr/bin/env bash
# Installs the wasm-bindgen command line the browser peer is built with
# into this machine's cache (scripts/cache-env.sh), unless it is there:
# every clone on the machine then finds it. Not packaged by Debian, so
# it is built, once per machine and version. Unoptimised (`--debug`): on
# a 2-core machine that builds in 128 s where the optimised build took
# 274 s, and the page's binding then takes 3 s instead of under one
# (BENCHMARKS.md, "CI in minutes").
#
# Environment:
#   WASM_BINDGEN  a wasm-bindgen of your own, exactly the pinned version:
#                 then nothing is installed, only its version checked
set -euo pipefail
source "$(dirname "$0")/cache-env.sh"

if [ -n "${WASM_BINDGEN:-}" ]; then
  have=$("$WASM_BINDGEN" --version 2>/dev/null || true)
  if [ "$have" != "wasm-bindgen $wasm_bindgen_version" ]; then
    echo "WASM_BINDGEN=$WASM_BINDGEN is '${have:-not a program that runs}'; the crate needs exactly wasm-bindgen $wasm_bindgen_version" >&2
    echo "  (unset WASM_BINDGEN and make web installs it into $wasm_bindgen_root)" >&2
    exit 1
  fi
  exit 0
fi

bin=$wasm_bindgen_root/bin/wasm-bindgen
if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "wasm-bindgen $wasm_bindgen_version" ]; then
  exit 0
fi
echo "Installing wasm-bindgen-cli $wasm_bindgen_version into $wasm_bindgen_root (a few minutes, once per machine)"
# Into a fresh directory first, so that an interrupted install leaves
# nothing that looks installed. Not --locked: its lock file names
# versions some registry mirrors lack.
partial=$wasm_bindgen_root.partial
rm -rf "$partial"
mkdir -p "$(dirname "$wasm_bindgen_root")"
cargo install --quiet --debug --root "$partial" wasm-bindgen-cli --version "=$wasm_bindgen_version"
rm -rf "$wasm_bindgen_root"
mv "$partial" "$wasm_bindgen_root"

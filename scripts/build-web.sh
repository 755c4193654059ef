#!/usr/bin/env bash
# Builds the browser peer: the crate lockstep-web for wasm32 with Debian's
# compiler building std for the target (as scripts/cross-build.sh does),
# its JavaScript binding with wasm-bindgen, and the page, into one flat
# directory the server serves (`lockstep-server --web-dir`):
#
#   index.html main.js style.css lockstep_web.js lockstep_web_bg.wasm
#
# Environment:
#   LOCKSTEP_WASM_DIR  cargo's target directory for the wasm build (target/wasm)
#   LOCKSTEP_WEB_OUT   where the page goes (target/web)
#   WASM_BINDGEN       the wasm-bindgen CLI, exactly the pinned version
#                      (scripts/install-wasm-bindgen.sh puts it in the
#                      machine's cache, scripts/cache-env.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/cache-env.sh

wasm_dir=${LOCKSTEP_WASM_DIR:-target/wasm}
out=${LOCKSTEP_WEB_OUT:-target/web}
bindgen=${WASM_BINDGEN:-$wasm_bindgen_root/bin/wasm-bindgen}
want=$wasm_bindgen_version

if [ ! -x "$bindgen" ]; then
  echo "build-web: no wasm-bindgen at $bindgen; make web installs it" >&2
  echo "(scripts/install-wasm-bindgen.sh), or point WASM_BINDGEN at one" >&2
  exit 1
fi
have=$("$bindgen" --version | awk '{print $2}')
if [ "$have" != "$want" ]; then
  echo "build-web: $bindgen is wasm-bindgen $have; the crate needs exactly $want" >&2
  echo "  (scripts/install-wasm-bindgen.sh installs it into $wasm_bindgen_root)" >&2
  exit 1
fi

# Small and fast for the page, without touching the native release
# profile: these apply to this build only.
export CARGO_PROFILE_RELEASE_OPT_LEVEL=s
export CARGO_PROFILE_RELEASE_LTO=true
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
export CARGO_PROFILE_RELEASE_PANIC=abort
export CARGO_PROFILE_RELEASE_DEBUG=0

start=$(date +%s)
RUSTC=/usr/bin/rustc scripts/deps-cache.sh restore "$wasm_dir"
RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 /usr/bin/cargo build --release \
  -Zbuild-std=std,panic_abort -Zbuild-std-features= \
  --target wasm32-unknown-unknown -p lockstep-web --lib --target-dir "$wasm_dir"
echo "build-web: compiled in $(($(date +%s) - start)) s" >&2
RUSTC=/usr/bin/rustc scripts/deps-cache.sh save "$wasm_dir"

mkdir -p "$out"
"$bindgen" --target web --no-typescript --remove-name-section --remove-producers-section --out-dir "$out" \
  "$wasm_dir/wasm32-unknown-unknown/release/lockstep_web.wasm"
cp web/static/index.html web/static/main.js web/static/style.css "$out/"
for file in "$out"/lockstep_web_bg.wasm "$out"/lockstep_web.js; do
  echo "build-web: $file $(stat -c %s "$file") bytes, $(gzip -9c "$file" | wc -c) gzipped" >&2
done

#!/usr/bin/env bash
# scripts/build-web.sh [--manifest-path PATH/Cargo.toml]
#
# Builds the browser peer: the crate lockstep-web for wasm32 with Debian's
# compiler building std for the target (as scripts/cross-build.sh does),
# its JavaScript binding with wasm-bindgen, and the page, into one flat
# directory the server serves (`lockstep-server --web-dir`):
#
#   index.html main.js style.css lockstep_web.js lockstep_web_bg.wasm
#   lockstep_web_light.js lockstep_web_light_bg.wasm modules.json
#
# lockstep_web is the module with every game; lockstep_web_light (the
# crate web/light) has the games without a physics engine (the ball game
# and Tally), about a fifth of the download. modules.json names the games of the light module, as
# the module itself says them (its `games()`, asked with node), and the
# page loads it when the game it needs is among them: the server's hosted
# game (which its web door serves as hosted-game.txt) or the game of an
# offline mode.
#
# With --manifest-path, the page of a game outside this workspace
# (docs/guide/your-game.md, "In the browser"): the same page, whose wasm
# module is that crate's library, built as a cdylib for wasm32 with
# lockstep-web as a dependency and offering the crate's own games
# (examples/flock/src/page.rs). Its files have the same names, so the
# same page loads it.
#
# Environment:
#   LOCKSTEP_WASM_DIR  cargo's target directory for the wasm build
#                      (target/wasm; with --manifest-path, the manifest's
#                      folder's target/wasm)
#   LOCKSTEP_WEB_OUT   where the page goes (target/web; with
#                      --manifest-path, the manifest's folder's target/web)
#   WASM_BINDGEN       the wasm-bindgen CLI, exactly the pinned version
#                      (scripts/install-wasm-bindgen.sh puts it in the
#                      machine's cache, scripts/cache-env.sh)
# Relative paths are taken from the checkout's root, or with
# --manifest-path from the directory the script is run in.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  echo "usage: scripts/build-web.sh [--manifest-path PATH/Cargo.toml]" >&2
  exit 2
}
manifest=
while [ $# -gt 0 ]; do
  case "$1" in
    --manifest-path) [ $# -ge 2 ] || usage; manifest=$2; shift 2 ;;
    --manifest-path=*) manifest=${1#--manifest-path=}; shift ;;
    *) usage ;;
  esac
done

absolute() { # PATH: PATH from the current directory, made absolute
  case "$1" in
    /*) echo "$1" ;;
    *) echo "$PWD/$1" ;;
  esac
}
if [ -n "$manifest" ]; then
  [ -f "$manifest" ] || {
    echo "build-web: no manifest at $manifest" >&2
    exit 1
  }
  manifest=$(cd "$(dirname "$manifest")" && pwd)/$(basename "$manifest")
  folder=$(dirname "$manifest")
  wasm_dir=$(absolute "${LOCKSTEP_WASM_DIR:-$folder/target/wasm}")
  out=$(absolute "${LOCKSTEP_WEB_OUT:-$folder/target/web}")
fi
cd "$root"
source scripts/cache-env.sh

if [ -z "$manifest" ]; then
  wasm_dir=${LOCKSTEP_WASM_DIR:-target/wasm}
  out=${LOCKSTEP_WEB_OUT:-target/web}
fi
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

# Fast for the page, without touching the native release profile: these
# apply to this build only. Opt-level 3 runs the games in every engine
# 1.5 to 3 times as fast as s for a module a fifth heavier (BENCHMARKS.md,
# "The page's opt-level"); LOCKSTEP_WEB_OPT_LEVEL measures another, into
# directories of its own (LOCKSTEP_WASM_DIR, LOCKSTEP_WEB_OUT).
export CARGO_PROFILE_RELEASE_OPT_LEVEL=${LOCKSTEP_WEB_OPT_LEVEL:-3}
export CARGO_PROFILE_RELEASE_LTO=true
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
export CARGO_PROFILE_RELEASE_PANIC=abort
export CARGO_PROFILE_RELEASE_DEBUG=0

build() { # COMMAND CARGO-ARGS...: the wasm32 build of a library, as the page needs it
  local command=$1
  shift
  RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 /usr/bin/cargo "$command" --release \
    -Zbuild-std=std,panic_abort -Zbuild-std-features= \
    --target wasm32-unknown-unknown --lib --target-dir "$wasm_dir" "$@"
}

bind() { # MODULE NAME: the JavaScript binding of a wasm module, as NAME.js and NAME_bg.wasm in $out
  "$bindgen" --target web --no-typescript --remove-name-section --remove-producers-section \
    --out-name "$2" --out-dir "$out" "$1"
}

mkdir -p "$out"
start=$(date +%s)
if [ -z "$manifest" ]; then
  RUSTC=/usr/bin/rustc scripts/deps-cache.sh restore "$wasm_dir"
  module=$wasm_dir/wasm32-unknown-unknown/release/lockstep_web.wasm
  build rustc -p lockstep-web --crate-type cdylib
  # The light module (web/light), a cdylib for wasm32 only.
  build rustc -p lockstep-web-light --crate-type cdylib
  bind "$wasm_dir/wasm32-unknown-unknown/release/lockstep_web_light.wasm" lockstep_web_light
  echo "build-web: compiled in $(($(date +%s) - start)) s" >&2
  RUSTC=/usr/bin/rustc scripts/deps-cache.sh save "$wasm_dir"
  node --input-type=module -e '
    import { readFileSync, writeFileSync } from "node:fs";
    import { resolve } from "node:path";
    import { pathToFileURL } from "node:url";
    const dir = resolve(process.argv[1]);
    const light = await import(pathToFileURL(`${dir}/lockstep_web_light.js`).href);
    light.initSync({ module: readFileSync(`${dir}/lockstep_web_light_bg.wasm`) });
    const games = light.games().split(" ").filter((name) => name);
    if (games.length === 0) throw new Error("the light module offers no game");
    writeFileSync(`${dir}/modules.json`, JSON.stringify([{ module: "lockstep_web_light", games }]) + "\n");
  ' "$out" || {
    echo "build-web: node could not ask the light module its games" >&2
    exit 1
  }
  echo "build-web: $out/modules.json: $(cat "$out/modules.json")" >&2
else
  # Not through the machine's cache, kept for lockstep's own target
  # directories: a crate of its own compiles in its target directory, or
  # shares target/wasm, restored and saved by lockstep's page, as make
  # test has it.
  messages=$(mktemp)
  trap 'rm -f "$messages"' EXIT
  # Built as a cdylib here only: the crate's own Cargo.toml needs no
  # crate-type, which would make every target link one (wasm32-wasip1's
  # cannot, for want of a main).
  build rustc --crate-type cdylib --manifest-path "$manifest" \
    --message-format=json-render-diagnostics >"$messages"
  echo "build-web: compiled in $(($(date +%s) - start)) s" >&2
  # The crate's own cdylib, not that of a dependency (lockstep-web has one).
  module=$(grep -F "\"manifest_path\":\"$manifest\"" "$messages" | grep -F '"reason":"compiler-artifact"' |
    grep -o '"[^"]*\.wasm"' | tr -d '"' | tail -n 1 || true)
  [ -n "$module" ] || {
    echo "build-web: $manifest built no wasm module: does it have a library" >&2
    echo '  (src/lib.rs) that offers its games? (docs/guide/your-game.md, "In the browser")' >&2
    exit 1
  }
fi

# The page loads lockstep_web.js, whichever crate the module is, unless
# modules.json names a lighter module with the game it needs (lockstep's
# own page only: a crate outside the workspace has its one module).
bind "$module" lockstep_web
[ -z "$manifest" ] || rm -f "$out"/modules.json "$out"/lockstep_web_light.js "$out"/lockstep_web_light_bg.wasm
cp web/static/index.html web/static/main.js web/static/style.css "$out/"
for file in "$out"/lockstep_web*_bg.wasm "$out"/lockstep_web*.js; do
  echo "build-web: $file $(stat -c %s "$file") bytes, $(gzip -9c "$file" | wc -c) gzipped" >&2
done
[ -z "$manifest" ] || echo "build-web: the page of $manifest is in $out (lockstep-server --web-dir $out)"

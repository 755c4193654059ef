#!/usr/bin/env bash
# The browser peer's figures for BENCHMARKS.md, on this machine, in one run:
#
# 1. simulation speed: the ball game offline in headless Chromium (the
#    page's `?sim=` benchmark) against the native release build, same game
#    and ticks, runs interleaved;
# 2. a live game on loopback, two native bots and a browser bot: the input
#    delay each settles at and its stalled ticks;
# 3. the page's weight (each file and gzipped) and the time from opening
#    its address to the lobby.
#
# Needs `cargo build --release --bins` and `make web` first.
#   scripts/bench-browser.sh [RUNS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-5}
bin=target/release
for file in "$bin/lockstep-server" "$bin/lockstep-client" target/web/index.html; do
  [ -e "$file" ] || { echo "bench-browser: $file is missing: cargo build --release --bins && make web" >&2; exit 2; }
done
drive() { node --experimental-websocket --no-warnings scripts/browser/drive.mjs "$@"; }
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A server for the page (and the games), printing its address.
serve() { # PLAYERS EXTRA...: starts a server, sets $addr
  local players=$1
  shift
  "$bin/lockstep-server" --listen 127.0.0.1:0 --players "$players" --no-record --no-advertise \
    --identity-dir "$work/identity" "$@" >"$work/server.out" 2>"$work/server.log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^browser url=' "$work/server.out" && break; sleep 0.1; done
  addr=$(grep '^browser url=' "$work/server.out" | head -n 1)
  addr=${addr#browser url=http://}
  addr=${addr%/}
  fingerprint=$(head -n 1 "$work/server.out")
  fingerprint=${fingerprint##*fingerprint=}
}
stop() { kill "${pids[-1]}" 2>/dev/null || true; wait "${pids[-1]}" 2>/dev/null || true; }

echo "== 1. simulation speed: 4 players, 24 balls, 360000 ticks"
serve 2
for run in $(seq "$runs"); do
  start=$(date +%s%N)
  native=$("$bin/lockstep-client" sim --players 4 --seed 1 --balls 24 --ticks 360000 | tail -n 1)
  native_ms=$((($(date +%s%N) - start) / 1000000))
  page=$(drive --exit-on "final tick=" "http://$addr/?sim=360000&game=balls&set=balls=24&players=4&seed=1")
  page_line=$(grep '^sim ' <<<"$page")
  page_ms=${page_line##*ms=}
  page_ms=${page_ms%% *}
  same=no
  [ "$(grep '^final' <<<"$page")" = "$native" ] && same=yes
  echo "run $run: native ${native_ms} ms, chromium ${page_ms} ms, same final line: $same ($native)"
done
stop

echo "== 2. a live game on loopback, 3600 ticks: 2 native bots and a browser bot"
for run in $(seq "$runs"); do
  serve 3
  for seed in 1 2; do
    "$bin/lockstep-client" --connect "$addr" --fingerprint "$fingerprint" --headless --bot "$seed" \
      --ticks 3600 --name "n$seed" >"$work/n$seed.out" 2>/dev/null &
    pids+=($!)
  done
  drive --timeout 300 "http://$addr/?name=web&bot=3&ticks=3600&ready=1" >"$work/web.out"
  wait "${pids[-1]}" "${pids[-2]}" 2>/dev/null || true
  for who in n1 n2 web; do
    stats=$(grep '^stats ' "$work/$who.out" || echo "(no stats)")
    final=$(grep '^final ' "$work/$who.out" | tail -n 1 || true)
    echo "run $run $who: $stats $final"
  done
  pids=("${pids[@]:0:${#pids[@]}-2}")
  stop
done

echo "== 3. page weight and time to the lobby"
for file in index.html main.js style.css lockstep_web.js lockstep_web_bg.wasm; do
  echo "$file $(stat -c %s "target/web/$file") bytes, $(gzip -9c "target/web/$file" | wc -c) gzipped"
done
serve 2
for run in $(seq "$runs"); do
  out=$(drive --exit-on "lockstep-web: lobby:" "http://$addr/?name=look$run")
  echo "run $run: $(grep '^driver lobby_ms=' <<<"$out")"
done
stop

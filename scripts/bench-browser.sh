#!/usr/bin/env bash
# The browser peer's figures for BENCHMARKS.md, on this machine, in one run,
# in each browser engine (Chromium, Firefox, WebKitGTK; ENGINES="chromium"
# for fewer):
#
# 1. simulation speed: the ball game and Topple offline in the page (its
#    `?sim=` benchmark) in each engine against the native release build,
#    same game and ticks, runs interleaved;
# 2. a live game on loopback, two native bots and a browser bot in each
#    engine: the input delay each settles at and its stalled ticks;
# 3. the page's weight (each file and gzipped, and what is downloaded
#    before the lobby shows for each game) and the time from opening its
#    address to the lobby in each engine, for a server hosting the ball
#    game (the light module) and one hosting Topple (the full one).
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
read -r -a engines <<<"${ENGINES:-chromium firefox webkit}"
drive() { # ENGINE OPTIONS... URL
  local engine=$1
  shift
  node --experimental-websocket --no-warnings scripts/browser/drive.mjs --engine "$engine" "$@"
}
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

# The games of part 1: the ball game (4 players, 24 balls) and Topple (4
# players, 160 bodies), each long enough to take about a second natively.
sims=(
  "balls balls=24 360000"
  "physics bodies=160 7200"
)
echo "== 1. simulation speed, 4 players, seed 1: ${sims[*]}"
serve 2
for sim in "${sims[@]}"; do
  read -r game setting ticks <<<"$sim"
  for run in $(seq "$runs"); do
    start=$(date +%s%N)
    native=$("$bin/lockstep-client" sim --game "$game" --set "$setting" --players 4 --seed 1 --ticks "$ticks" | tail -n 1)
    line="run $run $game $ticks ticks: native $((($(date +%s%N) - start) / 1000000)) ms"
    for engine in "${engines[@]}"; do
      page=$(drive "$engine" --exit-on "final tick=" --timeout 600 \
        "http://$addr/?sim=$ticks&game=$game&set=$setting&players=4&seed=1")
      page_line=$(grep '^sim ' <<<"$page" || true)
      page_ms=${page_line##*ms=}
      page_ms=${page_ms%% *}
      same=differs
      [ "$(grep '^final' <<<"$page")" = "$native" ] && same=same
      line+=", $engine ${page_ms:-?} ms ($same)"
    done
    echo "$line; $native"
  done
done
stop

echo "== 2. a live game on loopback, 3600 ticks: 2 native bots and a browser bot"
for engine in "${engines[@]}"; do
  for run in $(seq "$runs"); do
    serve 3
    for seed in 1 2; do
      "$bin/lockstep-client" --connect "$addr" --fingerprint "$fingerprint" --headless --bot "$seed" \
        --ticks 3600 --name "n$seed" >"$work/n$seed.out" 2>/dev/null &
      pids+=($!)
    done
    drive "$engine" --timeout 300 "http://$addr/?name=web&bot=3&ticks=3600&ready=1" >"$work/web.out" || true
    wait "${pids[-1]}" "${pids[-2]}" 2>/dev/null || true
    for who in n1 n2 web; do
      stats=$(grep '^stats ' "$work/$who.out" || echo "(no stats)")
      final=$(grep '^final ' "$work/$who.out" | tail -n 1 || true)
      echo "$engine run $run $who: $stats $final"
    done
    pids=("${pids[@]:0:${#pids[@]}-2}")
    stop
  done
done

echo "== 3. page weight and time to the lobby"
gzipped() { # FILE...: their gzipped bytes, summed
  local sum=0 file
  for file in "$@"; do sum=$((sum + $(gzip -9c "target/web/$file" | wc -c))); done
  echo "$sum"
}
page=(index.html main.js style.css modules.json)
for file in "${page[@]}" lockstep_web_light.js lockstep_web_light_bg.wasm lockstep_web.js lockstep_web_bg.wasm; do
  echo "$file $(stat -c %s "target/web/$file") bytes, $(gzip -9c "target/web/$file" | wc -c) gzipped"
done
# What a browser downloads before the lobby shows: the page, and the
# module with the hosted game (the light one for the ball game and Tally).
echo "before the lobby, the ball game or Tally: $(gzipped "${page[@]}" lockstep_web_light.js lockstep_web_light_bg.wasm) bytes gzipped"
echo "before the lobby, Topple: $(gzipped "${page[@]}" lockstep_web.js lockstep_web_bg.wasm) bytes gzipped"
for game in balls physics; do
  serve 2 --game "$game"
  for engine in "${engines[@]}"; do
    for run in $(seq "$runs"); do
      out=$(drive "$engine" --exit-on "lockstep-web: lobby:" "http://$addr/?name=look$run")
      echo "$game $engine run $run: $(grep '^driver lobby_ms=' <<<"$out") $(grep -o 'module [a-z_]*' <<<"$out" | head -n 1)"
    done
  done
  stop
done

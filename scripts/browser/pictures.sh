#!/usr/bin/env bash
# scripts/browser/pictures.sh ENGINE [DIR]: the pictures of the page in a
# browser engine (chromium, firefox or webkit) that docs/ keeps as
# docs/ENGINE-lobby.png and docs/ENGINE-game.png: the lobby, with a
# native bot ready and the page not, and a game of the ball game, the
# page's bot beside two native bots, four seconds in. Writes them to DIR
# (default docs). Needs the binaries (cargo build --bins), the page
# (make web) and what scripts/browser/drive.mjs needs for the engine.
set -euo pipefail
engine=${1:?usage: scripts/browser/pictures.sh chromium|firefox|webkit [DIR]}
out=${2:-docs}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
server_pid=
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  kill $(jobs -p) 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

serve() { # PLAYERS: a server on a free port of loopback
  : >"$work/server.out"
  target/debug/lockstep-server --listen 127.0.0.1:0 --players "$1" --seed 5 --no-record \
    --no-advertise --identity-dir "$work/identity" >"$work/server.out" 2>"$work/server.log" &
  server_pid=$!
  for _ in $(seq 300); do [ -s "$work/server.out" ] && break; sleep 0.1; done
  local first
  first=$(head -n 1 "$work/server.out")
  addr=${first#listening on }
  addr=${addr%% *}
  fingerprint=${first##*fingerprint=}
}
bot() { # NAME SEED
  target/debug/lockstep-client --connect "$addr" --fingerprint "$fingerprint" --name "$1" \
    --headless --bot "$2" --ticks 600 >"$work/$1.out" 2>&1 &
}
drive() { node --experimental-websocket --no-warnings scripts/browser/drive.mjs --engine "$engine" --timeout 200 "$@"; }

serve 2
bot ada 1
# The page joins once the bot is in, so the lobby shows both.
for _ in $(seq 300); do grep -q '^joined ' "$work/server.out" && break; sleep 0.1; done
drive --screenshot-on "lobby:=$out/$engine-lobby.png" --screenshot-delay 1500 --exit-on "lobby:" \
  "http://$addr/?name=grace"
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true

serve 3
bot ada 1
bot bob 2
drive --screenshot-on "start:=$out/$engine-game.png" --screenshot-delay 4000 \
  "http://$addr/?name=grace&bot=3&ticks=600&ready=1"

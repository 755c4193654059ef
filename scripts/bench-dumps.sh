#!/usr/bin/env bash
# What a desync costs the game: scripts/bench-dumps.sh BEFORE AFTER [ROUNDS]
# plays ROUNDS (default 5) games with each of two builds' binary folders
# (holding lockstep-server and lockstep-client), alternating: a server
# and three headless bots of Topple on 127.0.0.1, 1,500 ticks, the third
# bot nudged one ulp from tick 600 (--inject-desync-at), so that every
# client takes and writes its desync dumps (megabytes of JSON for a
# physics world) while the game goes on. Prints, per game, the inputs the
# server stood in for and the ticks the clients stalled, summed over the
# three clients' last stats lines, then the medians. BENCHMARKS.md ("Desync
# dumps") records a run.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BIN_DIR AFTER_BIN_DIR [ROUNDS]" >&2; exit 2; }
before=$1
after=$2
rounds=${3:-5}
for bin in "$before" "$after"; do
  for program in lockstep-server lockstep-client; do
    [ -x "$bin/$program" ] || { echo "$bin/$program: no such program" >&2; exit 2; }
  done
done

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# One game with the binaries of $1; prints "REPLACED STALLED".
game() {
  local bin=$1 dir
  dir=$(mktemp -d -p "$work")
  "$bin/lockstep-server" --listen 127.0.0.1:0 --players 3 --game physics --seed 7 --no-record \
    --no-web --identity-dir "$dir/id" >"$dir/server.out" 2>"$dir/server.err" &
  local server=$! address="" fingerprint=""
  for _ in $(seq 300); do
    read -r address fingerprint < <(sed -n 's/^listening on \([^ ]*\) fingerprint=\([0-9a-f]*\).*/\1 \2/p' \
      "$dir/server.out") || true
    [ -n "$fingerprint" ] && break
    sleep 0.1
  done
  [ -n "$fingerprint" ] || { echo "the server did not start: $(cat "$dir/server.err")" >&2; exit 1; }
  local bots=()
  for i in 0 1 2; do
    local fault=()
    [ "$i" = 2 ] && fault=(--inject-desync-at 600)
    LOCKSTEP_KNOWN_SERVERS="$dir/known" "$bin/lockstep-client" --connect "$address" \
      --fingerprint "$fingerprint" --name "bot$i" --headless --bot "$i" --ticks 1500 \
      --dump-dir "$dir/dumps" "${fault[@]}" >"$dir/bot$i.out" 2>"$dir/bot$i.err" &
    bots+=($!)
  done
  wait "${bots[@]}"
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  local replaced=0 stalled=0 line
  for i in 0 1 2; do
    line=$(grep '^stats ' "$dir/bot$i.out" | tail -1)
    replaced=$((replaced + $(sed -n 's/.* replaced=\([0-9]*\).*/\1/p' <<<"$line")))
    stalled=$((stalled + $(sed -n 's/.*stalled_ticks=\([0-9]*\).*/\1/p' <<<"$line")))
  done
  ls "$dir"/dumps/desync-t600-bot*.json >/dev/null || { echo "no dumps written" >&2; exit 1; }
  echo "$replaced $stalled"
}

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)] " (" v[1] "-" v[NR] ")"}'; }

for round in $(seq "$rounds"); do
  for which in before after; do
    bin=$before
    [ "$which" = after ] && bin=$after
    read -r replaced stalled < <(game "$bin")
    echo "round=$round build=$which replaced=$replaced stalled_ticks=$stalled"
    echo "$which $replaced $stalled" >>"$work/results"
  done
done
for which in before after; do
  echo "$which: replaced $(awk -v w="$which" '$1 == w {print $2}' "$work/results" | median)," \
    "stalled ticks $(awk -v w="$which" '$1 == w {print $3}' "$work/results" | median)"
done

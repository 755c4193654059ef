#!/usr/bin/env bash
# Soak: headless bots play one long game against a server on loopback; the
# server's resident memory, and the first bot's, are sampled every 10 s.
#
#   scripts/soak.sh [--game NAME] [--players N] [--set KEY=VALUE]... BIN_DIR MINUTES OUT_DIR
#
# Without options: 8 bots play the ball game with 96 balls (--game balls
# --players 8 --set balls=96). With --game and no --set, the game's
# default settings (`--game physics`: 160 bodies). BIN_DIR holds
# lockstep-server and lockstep-client (target/release, or a copy of an
# older build to compare against). At the end it prints:
#   soak ticks=T players=P game=G settings=K=V,... minutes=M
#   soak hashes_agree=yes|no desyncs=D
#   soak stalls_per_min=S (mean over the bots of stalled_ticks / minutes)
#   soak rss_kib first_min=A at_5min=B end=C max=D
#   soak client_rss_kib first_min=A at_5min=B end=C max=D (the first bot)
# and OUT_DIR keeps every log and rss.tsv (seconds, server KiB, first
# bot's KiB).
#
# Only the processes this script started are stopped, by their PIDs.
set -euo pipefail

GAME=balls
PLAYERS=8
SETTINGS=()
while [ $# -gt 0 ]; do
    case "$1" in
    --game) GAME=${2:?--game NAME} && shift 2 ;;
    --players) PLAYERS=${2:?--players N} && shift 2 ;;
    --set) SETTINGS+=("${2:?--set KEY=VALUE}") && shift 2 ;;
    --) shift && break ;;
    -*) echo "soak: unknown option $1" >&2 && exit 2 ;;
    *) break ;;
    esac
done
BIN_DIR=${1:?BIN_DIR}
MINUTES=${2:?MINUTES}
OUT=${3:?OUT_DIR}
# The ball game's soak as it always was: 96 balls unless told otherwise.
[ "$GAME" = balls ] && [ ${#SETTINGS[@]} = 0 ] && SETTINGS=(balls=96)
set_args=()
for setting in "${SETTINGS[@]}"; do
    set_args+=(--set "$setting")
done
TICKS=$((MINUTES * 60 * 60))
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export LOCKSTEP_KNOWN_SERVERS="$OUT/known_servers"

pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT

mkdir -p "$OUT/identity" "$OUT/replays"
"$BIN_DIR/lockstep-server" --listen 127.0.0.1:0 --players "$PLAYERS" \
    --game "$GAME" ${set_args[@]+"${set_args[@]}"} \
    --no-advertise --identity-dir "$OUT/identity" --replay-dir "$OUT/replays" \
    >"$OUT/server.out" 2>"$OUT/server.err" &
server=$!
pids+=("$server")
for _ in $(seq 100); do
    grep -q '^listening on ' "$OUT/server.out" 2>/dev/null && break
    sleep 0.1
done
line=$(grep -m1 '^listening on ' "$OUT/server.out")
addr=$(echo "$line" | sed -E 's/^listening on ([^ ]+) .*/\1/')
fingerprint=$(echo "$line" | sed -E 's/.*fingerprint=([0-9a-f]+).*/\1/')

clients=()
for i in $(seq 1 "$PLAYERS"); do
    "$BIN_DIR/lockstep-client" --connect "$addr" --fingerprint "$fingerprint" \
        --name "bot$i" --headless --bot "$i" --ticks "$TICKS" \
        >"$OUT/bot$i.out" 2>"$OUT/bot$i.err" &
    clients+=($!)
    pids+=($!)
done

: >"$OUT/rss.tsv"
start=$(date +%s)
while true; do
    alive=0
    for pid in "${clients[@]}"; do
        kill -0 "$pid" 2>/dev/null && alive=1
    done
    [ "$alive" = 1 ] || break
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$server/status" 2>/dev/null || echo 0)
    client_rss=$(awk '/^VmRSS:/ {print $2}' "/proc/${clients[0]}/status" 2>/dev/null || echo 0)
    # A failed write (a full disk) loses a sample, not the soak.
    echo "$(($(date +%s) - start))	$rss	$client_rss" >>"$OUT/rss.tsv" || true
    sleep 10
done
for pid in "${clients[@]}"; do
    wait "$pid" || echo "soak client pid=$pid exited with $?"
done

hashes=$(grep -h '^final ' "$OUT"/bot*.out | sort -u | wc -l)
finals=$(grep -h '^final ' "$OUT"/bot*.out | wc -l)
agree=no
[ "$hashes" = 1 ] && [ "$finals" = "$PLAYERS" ] && agree=yes
desyncs=$(grep -c 'diverged=' "$OUT/server.err" || true)
stalled=$(grep -h '^stats ' "$OUT"/bot*.out | sed -E 's/.*stalled_ticks=([0-9]+).*/\1/' |
    awk -v m="$MINUTES" -v n="$PLAYERS" '{s += $1} END {printf "%.1f", s / n / m}')
settings=$(IFS=, && echo "${SETTINGS[*]-}")
echo "soak ticks=$TICKS players=$PLAYERS game=$GAME settings=${settings:-default} minutes=$MINUTES"
echo "soak hashes_agree=$agree finals=$finals desyncs=$desyncs"
echo "soak stalls_per_min=$stalled"
summary() {
    awk -v c="$1" -v label="$2" '$1 >= 60 && !a {a = $c} $1 >= 300 && !b {b = $c} $c > m {m = $c} {e = $c}
         END {printf "soak %s first_min=%s at_5min=%s end=%s max=%s\n", label, a, b, e, m}' "$OUT/rss.tsv"
}
summary 2 rss_kib
summary 3 client_rss_kib

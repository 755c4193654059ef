#!/usr/bin/env bash
# make demo: one server and three client windows on this machine. You play
# the big window (WASD/arrows, Space to boost, or a game controller); the
# two small windows are bots. The server also serves the browser peer:
# open the address it prints in a browser to join before you say ready.
# It listens on this machine only, unless LOCKSTEP_DEMO_LAN=1: then on
# every network, with a QR code for phones. Close any window or press Esc
# to end.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "make demo opens windows, but there is no display (DISPLAY is not set)." >&2
  echo "Run it from a desktop session." >&2
  exit 1
fi

port=${LOCKSTEP_DEMO_PORT:-7777}
log=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

if [ "${LOCKSTEP_DEMO_LAN:-}" = 1 ]; then
  listen=(--listen "0.0.0.0:$port" --qr-code)
  echo "Serving the LAN (LOCKSTEP_DEMO_LAN=1): phones and other computers can join from the page."
else
  listen=(--listen "127.0.0.1:$port")
  echo "Serving this machine only; LOCKSTEP_DEMO_LAN=1 make demo lets phones on the LAN join too."
fi
"$bin/lockstep-server" "${listen[@]}" --players 3 >"$log/server.out" 2>"$log/server.log" &
pids+=($!)
for _ in $(seq 50); do
  [ -s "$log/server.out" ] && break
  sleep 0.1
done
first=$(head -n 1 "$log/server.out")
case "$first" in
  "listening on "*) echo "$first" ;;
  *) echo "the server did not start; its log:" >&2; cat "$log/server.log" >&2; exit 1 ;;
esac
fingerprint=${first##*fingerprint=}
# The browser lines follow the verification code.
for _ in $(seq 50); do
  grep -q '^browser' "$log/server.out" && break
  sleep 0.1
done
# Every browser line, and the QR code printed after them (LAN only).
sed -n '/^browser/,/^[a-z]/p' "$log/server.out" | grep -v '^[a-z]' | grep . >"$log/qr" || true
grep '^browser' "$log/server.out" || true
cat "$log/qr"
common=(--connect "127.0.0.1:$port" --fingerprint "$fingerprint")

"$bin/lockstep-client" "${common[@]}" --name bot-ada --bot 1 --window-size 640x360 --window-pos 980,40 >"$log/bot1.out" 2>&1 &
pids+=($!)
"$bin/lockstep-client" "${common[@]}" --name bot-bob --bot 2 --window-size 640x360 --window-pos 980,440 >"$log/bot2.out" 2>&1 &
pids+=($!)
echo "You are 'you' in the big window: press R in the lobby when you are ready (the bots are),"
echo "then WASD or arrows to steer, Space to boost, Esc to leave."
echo "To play from a browser too, open the browser url above and press Ready there before you press R."
"$bin/lockstep-client" "${common[@]}" --name you --window-size 960x540 --window-pos 0,40 || true
sleep 1
echo "--- server"
cat "$log/server.out"

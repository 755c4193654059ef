#!/usr/bin/env bash
# The cross-architecture check (make cross, after scripts/cross-build.sh):
#
# 1. every golden row (sim/golden-hashes.txt) and one long crowded game
#    on each target and natively, printed as a matrix (target x scenario);
# 2. a replay recorded by the native server verified on every target;
# 3. a live game on loopback: a native server and headless bots built for
#    x86_64 (native), aarch64 (qemu), i686 and Windows (wine), and the
#    browser peer (wasm32) as a bot in headless Chromium, which must all
#    end on the same final line with no desync.
#
# Exits 1 on any difference. DETERMINISM.md records a run.
set -euo pipefail
source "$(dirname "$0")/cross-env.sh"
cd "$cross_root"

native=target/debug/lockstep-client
server=target/debug/lockstep-server
for bin in "$native" "$server"; do
  [ -x "$bin" ] || { echo "cross: $bin is missing: run cargo build --bins first" >&2; exit 2; }
done
run() { # TARGET ARGS...: stdout of lockstep-client ARGS on TARGET
  local target=$1
  shift
  if [ "$target" = native ]; then "$native" "$@"; else scripts/cross.sh "$target" "$@"; fi
}
# The browser peer as a bot in the game at ADDR: the page's console lines
# on stdout, like a headless client's.
browser_bot() { # ADDR NAME SEED TICKS
  node --experimental-websocket --no-warnings scripts/browser/drive.mjs --timeout 900 \
    "http://$1/?name=$2&bot=$3&ticks=$4&ready=1"
}
final_of() { grep '^final tick=' | tail -n 1; }

failures=()
columns=(native "${cross_targets[@]}")

# --- 1. the matrix ----------------------------------------------------------
mapfile -t rows < <(grep -vE '^\s*(#|$)' sim/golden-hashes.txt)
rows+=("4 12345 96 30000 -")
printf '%-34s' "scenario (players seed balls ticks)"
printf ' %-16s' golden "${columns[@]}"
printf '\n'
for row in "${rows[@]}"; do
  read -r players seed balls ticks golden <<<"$row"
  printf '%-34s %-16s' "$players $seed $balls $ticks" "$golden"
  first=""
  for target in "${columns[@]}"; do
    line=$(run "$target" sim --players "$players" --seed "$seed" --balls "$balls" --ticks "$ticks" | final_of || true)
    hash=${line##*hash=}
    printf ' %-16s' "${hash:-(none)}"
    [ -n "$first" ] || first=$hash
    if [ -z "$hash" ] || { [ "$golden" != - ] && [ "$hash" != "$golden" ]; } || [ "$hash" != "$first" ]; then
      failures+=("$target: $players $seed $balls $ticks gave ${hash:-nothing}")
    fi
  done
  printf '\n'
done

# --- 2 and 3. a live game, and its replay on every target -----------------
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
live_players=(native aarch64 i686 windows browser)
# The emulated clients (qemu, wine) fall silent for seconds when the
# machine is busy; this game checks that every machine computes the same
# bits, not how soon a silent player is dropped, so it gives them 20 s
# instead of the default 2.
"$server" --listen 127.0.0.1:0 --players ${#live_players[@]} --identity-dir "$work/identity" \
  --replay-dir "$work/replays" --drop-timeout-ms 20000 >"$work/server.out" 2>"$work/server.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/server.out" ] && break; sleep 0.1; done
first_line=$(head -n 1 "$work/server.out")
addr=${first_line#listening on }
addr=${addr%% *}
fingerprint=${first_line##*fingerprint=}
live_ticks=${LOCKSTEP_CROSS_TICKS:-3600}
bot=0
for target in "${live_players[@]}"; do
  bot=$((bot + 1))
  if [ "$target" = browser ]; then
    browser_bot "$addr" "$target" "$bot" "$live_ticks" >"$work/$target.out" 2>"$work/$target.err" &
  else
    run "$target" --connect "$addr" --fingerprint "$fingerprint" --name "$target" --headless \
      --bot "$bot" --ticks "$live_ticks" >"$work/$target.out" 2>"$work/$target.err" &
  fi
  pids+=($!)
done
live=()
for i in "${!live_players[@]}"; do
  target=${live_players[$i]}
  wait "${pids[$((i + 1))]}" || failures+=("live game: the $target client failed: $(tail -n 3 "$work/$target.err")")
  live+=("$(final_of <"$work/$target.out" || true)")
done
echo
echo "live game, $live_ticks ticks at 60 Hz, bots on ${live_players[*]}:"
for i in "${!live_players[@]}"; do
  printf '  %-8s %s\n' "${live_players[$i]}" "${live[$i]:-(no final line)}"
  [ "${live[$i]}" = "${live[0]}" ] && [ -n "${live[$i]}" ] || failures+=("live game: ${live_players[$i]} ended on '${live[$i]}', ${live_players[0]} on '${live[0]}'")
done
if grep -q '^desync' "$work/server.out"; then
  failures+=("live game: the server saw a desync: $(grep '^desync' "$work/server.out" | head -n 1)")
fi
# The server's verdict names every machine of the game.
for _ in $(seq 100); do grep -q '^verdict' "$work/server.out" && break; sleep 0.1; done
verdict=$(grep '^verdict' "$work/server.out" | head -n 1 || true)
echo "  server   ${verdict:-(no verdict)}"
[[ $verdict == "verdict agreed "* ]] || failures+=("live game: the server's verdict is '${verdict:-missing}'")
for target in "${live_players[@]}"; do
  case "$target" in
    native) triple=x86_64-unknown-linux-gnu ;;
    browser) triple=wasm32-unknown-unknown/chromium ;;
    *) triple=$(triple_of "$target") ;;
  esac
  [[ $verdict == *"$triple"* ]] || failures+=("live game: the verdict does not name $triple")
done
kill "${pids[0]}" 2>/dev/null || true
wait "${pids[0]}" 2>/dev/null || true
replay_file=$(ls "$work"/replays/* 2>/dev/null | head -n 1)
echo
echo "the server's replay of that game, verified:"
if [ -z "$replay_file" ]; then
  failures+=("replay: the server recorded nothing")
else
  expected=""
  for target in "${columns[@]}"; do
    line=$(run "$target" replay "$replay_file" --verify --headless 2>/dev/null | final_of || true)
    printf '  %-8s %s\n' "$target" "${line:-(failed)}"
    [ -n "$expected" ] || expected=$line
    [ -n "$line" ] && [ "$line" = "$expected" ] || failures+=("replay: $target gave '${line:-nothing}', native '$expected'")
  done
fi

echo
if [ ${#failures[@]} -gt 0 ]; then
  for f in "${failures[@]}"; do echo "cross: MISMATCH $f"; done
  exit 1
fi
echo "cross: identical on ${columns[*]}: ${#rows[@]} scenarios, a live game of ${live_players[*]}, and its replay"

#!/usr/bin/env bash
# scripts/cross-check.sh [--manifest-path CARGO_TOML]...: the
# cross-architecture check (make cross, after scripts/cross-build.sh):
#
# 1. every golden row of both real games (games/balls/golden-hashes.txt,
#    games/topple/golden-hashes.txt) and one long crowded ball game on
#    each target and natively, and every golden row of each game outside
#    the workspace given by its Cargo.toml (without any,
#    examples/flock/Cargo.toml; scripts/game-manifest.sh says what such a
#    game provides): its client natively (target/debug, built from its
#    manifest with --target-dir target) and on aarch64, i686 and Windows,
#    its offline program on wasm32; all printed as one matrix (scenario x
#    target); for the first row a target computes otherwise than native,
#    the tick where they first part and the first value the target
#    computes differently, with its file and line (name_the_line);
# 2. a live game of each on loopback: a native server and headless bots
#    built for x86_64 (native), aarch64 (qemu), i686 and Windows (wine),
#    and the browser peer (wasm32) as a bot in each browser engine
#    (headless Chromium and Firefox, WebKitGTK's MiniBrowser on Xvfb;
#    scripts/browser/drive.mjs), which must all end on the same final line
#    with no desync, in a verdict that names each;
# 3. the replay the native server recorded of each verified on every
#    target.
#
# Exits 1 on any difference, 2 on bad arguments or a missing build.
# DETERMINISM.md records a run.
set -euo pipefail
usage() {
  echo "usage: scripts/cross-check.sh [--manifest-path CARGO_TOML]..." >&2
  exit 2
}
source "$(dirname "$0")/cross-env.sh"
manifest_args cross "$@"
cd "$cross_root"

native=target/debug/lockstep-client
server=target/debug/lockstep-server
for bin in "$native" "$server"; do
  [ -x "$bin" ] || { echo "cross: $bin is missing: run cargo build --bins first" >&2; exit 2; }
done
# Each game's sized setting, and for a game outside the workspace (by its
# package's name) its manifest and its client.
declare -A setting_of=([balls]=balls [physics]=bodies) manifest_of client_of
outside_games=()
for manifest in "${manifests[@]}"; do
  outside_game cross "$manifest"
  if [ -n "${setting_of[$game_package]:-}" ]; then
    echo "cross: two games are called $game_package ($manifest)" >&2
    exit 2
  fi
  outside_games+=("$game_package")
  setting_of[$game_package]=$game_setting
  manifest_of[$game_package]=$manifest
  client_of[$game_package]=target/debug/$game_client
  [ -x "${client_of[$game_package]}" ] || {
    echo "cross: ${client_of[$game_package]} is missing: run cargo build --manifest-path $manifest --target-dir target --bins first" >&2
    exit 2
  }
done
run() { # TARGET ARGS...: stdout of lockstep-client ARGS on TARGET
  local target=$1
  shift
  if [ "$target" = native ]; then "$native" "$@"; else scripts/cross.sh "$target" "$@"; fi
}
# On wasm32 each game has its own offline program: lockstep-balls (the
# ball game, scripts/cross.sh's default) and lockstep-topple.
run_game() { # GAME TARGET ARGS...: run, with the game's wasm32 program
  local game=$1
  shift
  if [ "$game" = physics ] && [ "$1" = wasm32 ]; then
    PROGRAM=lockstep-topple run "$@"
  else
    run "$@"
  fi
}
# `sim` of GAME with its sized setting: on wasm32 the game's own program
# takes it as --balls, --bodies or --boids, the client as --game and --set.
# A game outside the workspace is its client's default game.
sim_of() { # GAME TARGET PLAYERS SEED SIZE TICKS [ARGS...]
  local game=$1 target=$2 setting=${setting_of[$1]}
  if [ -n "${manifest_of[$game]:-}" ]; then
    if [ "$target" = native ]; then
      "${client_of[$game]}" sim --players "$3" --seed "$4" --set "$setting=$5" --ticks "$6" "${@:7}"
    elif [ "$target" = wasm32 ]; then
      scripts/cross.sh --manifest-path "${manifest_of[$game]}" "$target" sim --players "$3" --seed "$4" \
        "--$setting" "$5" --ticks "$6" "${@:7}"
    else
      scripts/cross.sh --manifest-path "${manifest_of[$game]}" "$target" sim --players "$3" --seed "$4" \
        --set "$setting=$5" --ticks "$6" "${@:7}"
    fi
  elif [ "$target" = wasm32 ]; then
    run_game "$game" "$target" sim --players "$3" --seed "$4" "--$setting" "$5" --ticks "$6" "${@:7}"
  else
    run "$target" sim --game "$game" --players "$3" --seed "$4" --set "$setting=$5" --ticks "$6" "${@:7}"
  fi
}
# name_the_line ROW TARGET: for a row TARGET computes otherwise than
# native, the first tick where they part (bisecting --ticks), then both
# sides' sync traces of that tick (`sim --trace`) compared by `trace-diff`:
# the first value TARGET computes differently, with its file and line.
name_the_line() {
  local game players seed size ticks lo=0 hi mid a b
  read -r game players seed size ticks _ <<<"${rows[$1]}"
  hi=$ticks
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2))
    a=$(sim_of "$game" native "$players" "$seed" "$size" "$mid" | final_of || true)
    b=$(sim_of "$game" "$2" "$players" "$seed" "$size" "$mid" | final_of || true)
    if [ -n "$a" ] && [ "$a" = "$b" ]; then lo=$mid; else hi=$mid; fi
  done
  sim_of "$game" native "$players" "$seed" "$size" "$hi" --trace "$hi" >"$work/trace.native" || true
  sim_of "$game" "$2" "$players" "$seed" "$size" "$hi" --trace "$hi" >"$work/trace.$2" || true
  echo "cross: $2 first parts from native at tick $hi of $game $players $seed $size $ticks:"
  # trace-diff exits 1 when the traces differ, which is what is expected.
  { "$native" trace-diff "$work/trace.native" "$work/trace.$2" 2>&1 || true; } |
    sed -n '/^first differing value\|^trace:\|trace line/,$p' | head -n 8 | sed 's/^/  /'
}
# The browser peer as a bot in the game at ADDR, in the browser engine
# NAME (chromium, firefox or webkit): the page's console lines on stdout,
# like a headless client's.
browser_bot() { # ADDR NAME SEED TICKS
  node --experimental-websocket --no-warnings scripts/browser/drive.mjs --engine "$2" --timeout 900 \
    "http://$1/?name=$2&bot=$3&ticks=$4&ready=1"
}
is_engine() { case "$1" in chromium | firefox | webkit) return 0 ;; *) return 1 ;; esac; }
final_of() { grep '^final tick=' | tail -n 1; }
# The milliseconds each target spent in the matrix and the replays, for
# the stage timings (scripts/stage.sh) and the last lines of this check.
declare -A spent
now_ms() { echo $(($(date +%s%N) / 1000000)); }
spend() { spent[$1]=$((${spent[$1]:-0} + $(now_ms) - $2)); } # TARGET START

failures=()
traced_targets=() parted=()
columns=(native "${cross_targets[@]}")
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}" $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# --- 1. the matrix ----------------------------------------------------------
rows=()
while read -r row; do rows+=("balls $row"); done < <(grep -vE '^\s*(#|$)' games/balls/golden-hashes.txt)
rows+=("balls 4 12345 96 30000 -")
while read -r row; do rows+=("physics $row"); done < <(grep -vE '^\s*(#|$)' games/topple/golden-hashes.txt)
for game in "${outside_games[@]}"; do
  while read -r row; do rows+=("$game $row"); done < <(game_rows "$(dirname "${manifest_of[$game]}")/golden-hashes.txt")
done
# Every cell is one single-threaded run: two at a time keep both cores
# busy. Each writes its hash and milliseconds to a file of its own; the
# table is printed in order once all are in.
cells=$work/cells
mkdir -p "$cells"
cell() { # ROW TARGET
  local start line
  read -r game players seed size ticks _ <<<"${rows[$1]}"
  start=$(now_ms)
  line=$(sim_of "$game" "$2" "$players" "$seed" "$size" "$ticks" | final_of || true)
  echo "${line##*hash=} $(($(now_ms) - start))" >"$cells/$1.$2"
}
for i in "${!rows[@]}"; do
  for target in "${columns[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    cell "$i" "$target" &
  done
done
wait
games=(balls physics "${outside_games[@]}")
header="scenario (game players seed $(for game in "${games[@]}"; do echo "${setting_of[$game]}"; done | paste -sd '|') ticks)"
width=${#header}
for row in "${rows[@]}"; do
  read -r game players seed size ticks _ <<<"$row"
  row="$game $players $seed $size $ticks"
  [ ${#row} -lt "$width" ] || width=$((${#row} + 1))
done
printf "%-${width}s" "$header"
printf ' %-16s' golden "${columns[@]}"
printf '\n'
for i in "${!rows[@]}"; do
  read -r game players seed size ticks golden <<<"${rows[$i]}"
  printf "%-${width}s %-16s" "$game $players $seed $size $ticks" "$golden"
  first=""
  for target in "${columns[@]}"; do
    hash="" ms=0
    [ ! -s "$cells/$i.$target" ] || read -r hash ms <"$cells/$i.$target"
    [ -n "$ms" ] || { ms=$hash; hash=""; }
    spent[$target]=$((${spent[$target]:-0} + ms))
    printf ' %-16s' "${hash:-(none)}"
    [ -n "$first" ] || first=$hash
    if [ -z "$hash" ] || { [ "$golden" != - ] && [ "$hash" != "$golden" ]; } || [ "$hash" != "$first" ]; then
      failures+=("$target: $game $players $seed $size $ticks gave ${hash:-nothing}")
      # Traced once per target: its first row that parts from native.
      if [ -n "$hash" ] && [ -n "$first" ] && [ "$hash" != "$first" ] &&
        [[ " ${traced_targets[*]} " != *" $target "* ]]; then
        traced_targets+=("$target")
        parted+=("$i $target")
      fi
    fi
  done
  printf '\n'
done

for cell in "${parted[@]}"; do
  # Word splitting of "ROW TARGET" is wanted.
  # shellcheck disable=SC2086
  name_the_line $cell
done

# --- 2 and 3. a live game of each, and its replay on every target --------
live_players=(native aarch64 i686 windows chromium firefox webkit)
live_ticks=${LOCKSTEP_CROSS_TICKS:-3600}
# Topple's live game is a third as long: the emulated aarch64 client steps
# 160 bodies slower than 60 Hz, so the server slows the game for it, and
# a minute of Topple took five of the machine (BENCHMARKS.md). Its golden
# rows above already run 3,600-tick games on every target.
physics_ticks=${LOCKSTEP_CROSS_PHYSICS_TICKS:-1200}

live_game() { # GAME TICKS: a game of every machine, its verdict and its replay
  local game=$1 live_ticks=$2 dir=$work/$1 bot=0 target i first_line addr fingerprint verdict triple replay_file expected line start
  local live=() game_pids=()
  mkdir -p "$dir"
  # The emulated clients (qemu, wine) fall silent for seconds when the
  # machine is busy; this game checks that every machine computes the
  # same bits, not how soon a silent player is dropped, so it gives them
  # 20 s instead of the default 2.
  "$server" --listen 127.0.0.1:0 --players ${#live_players[@]} --game "$game" \
    --identity-dir "$work/identity" --replay-dir "$dir/replays" --drop-timeout-ms 20000 \
    >"$dir/server.out" 2>"$dir/server.log" &
  local server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 100); do [ -s "$dir/server.out" ] && break; sleep 0.1; done
  first_line=$(head -n 1 "$dir/server.out")
  addr=${first_line#listening on }
  addr=${addr%% *}
  fingerprint=${first_line##*fingerprint=}
  for target in "${live_players[@]}"; do
    bot=$((bot + 1))
    if is_engine "$target"; then
      browser_bot "$addr" "$target" "$bot" "$live_ticks" >"$dir/$target.out" 2>"$dir/$target.err" &
    else
      run "$target" --connect "$addr" --fingerprint "$fingerprint" --name "$target" --headless \
        --bot "$bot" --ticks "$live_ticks" >"$dir/$target.out" 2>"$dir/$target.err" &
    fi
    game_pids+=($!)
    pids+=($!)
  done
  for i in "${!live_players[@]}"; do
    target=${live_players[$i]}
    wait "${game_pids[$i]}" || failures+=("live $game: the $target client failed: $(tail -n 3 "$dir/$target.err")")
    live+=("$(final_of <"$dir/$target.out" || true)")
  done
  echo
  echo "live game of $game, $live_ticks ticks at 60 Hz, bots on ${live_players[*]}:"
  for i in "${!live_players[@]}"; do
    printf '  %-8s %s\n' "${live_players[$i]}" "${live[$i]:-(no final line)}"
    [ "${live[$i]}" = "${live[0]}" ] && [ -n "${live[$i]}" ] || failures+=("live $game: ${live_players[$i]} ended on '${live[$i]}', ${live_players[0]} on '${live[0]}'")
  done
  if grep -q '^desync' "$dir/server.out"; then
    failures+=("live $game: the server saw a desync: $(grep '^desync' "$dir/server.out" | head -n 1)")
  fi
  # The server's verdict names every machine of the game.
  for _ in $(seq 100); do grep -q '^verdict' "$dir/server.out" && break; sleep 0.1; done
  verdict=$(grep '^verdict' "$dir/server.out" | head -n 1 || true)
  echo "  server   ${verdict:-(no verdict)}"
  [[ $verdict == "verdict agreed "* ]] || failures+=("live $game: the server's verdict is '${verdict:-missing}'")
  for target in "${live_players[@]}"; do
    case "$target" in
      native) triple=x86_64-unknown-linux-gnu ;;
      chromium | firefox) triple=wasm32-unknown-unknown/$target- ;;
      webkit) triple=wasm32-unknown-unknown/webkitgtk- ;;
      *) triple=$(triple_of "$target") ;;
    esac
    [[ $verdict == *"$triple"* ]] || failures+=("live $game: the verdict does not name $triple")
  done
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  replay_file=$(ls "$dir"/replays/* 2>/dev/null | head -n 1)
  echo
  echo "the server's replay of that game, verified:"
  if [ -z "$replay_file" ]; then
    failures+=("replay of $game: the server recorded nothing")
    return
  fi
  expected=""
  for target in "${columns[@]}"; do
    start=$(now_ms)
    line=$(run_game "$game" "$target" replay "$replay_file" --verify --headless 2>/dev/null | final_of || true)
    spend "$target" "$start"
    printf '  %-8s %s\n' "$target" "${line:-(failed)}"
    [ -n "$expected" ] || expected=$line
    [ -n "$line" ] && [ "$line" = "$expected" ] || failures+=("replay of $game: $target gave '${line:-nothing}', native '$expected'")
  done
}

start=$(now_ms)
live_game balls "$live_ticks"
scripts/stage.sh - "live game and replays of balls" --took $((($(now_ms) - start + 500) / 1000))
start=$(now_ms)
live_game physics "$physics_ticks"
scripts/stage.sh - "live game and replays of physics" --took $((($(now_ms) - start + 500) / 1000))

echo
for target in "${columns[@]}"; do
  seconds=$(((${spent[$target]:-0} + 500) / 1000))
  echo "cross: $target took $seconds s in the matrix and the replays"
  scripts/stage.sh - "matrix and replays on $target" --took "$seconds"
done

echo
if [ ${#failures[@]} -gt 0 ]; then
  for f in "${failures[@]}"; do echo "cross: MISMATCH $f"; done
  exit 1
fi
named=$(printf '%s, ' "${games[@]:0:${#games[@]}-1}")
echo "cross: identical on ${columns[*]}: ${#rows[@]} scenarios of ${named%, } and ${games[-1]}, a live game of balls and physics on ${live_players[*]}, and their replays"

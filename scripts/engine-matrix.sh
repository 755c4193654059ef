#!/usr/bin/env bash
# scripts/engine-matrix.sh [ENGINE...]: every golden row of the ball game
# (games/balls/golden-hashes.txt) and Topple (games/topple/golden-hashes.txt)
# played offline in the page (its `?row=` mode: the wasm module the server
# serves, no network) in each browser engine, under each of its wasm
# compiler tiers, against the pinned hash the native build ends on:
#
#   default     the engine's own tiering (a baseline compiler first, the
#               optimising one for hot code)
#   baseline    its baseline compiler only: V8's Liftoff
#               (--liftoff --no-wasm-tier-up), SpiderMonkey's baseline
#               (javascript.options.wasm_optimizingjit false),
#               JavaScriptCore's BBQ (no IPInt interpreter, no OMG)
#   optimising  its optimising compiler: V8's TurboFan (--no-liftoff),
#               SpiderMonkey's Ion (javascript.options.wasm_baselinejit
#               false), JavaScriptCore's OMG as early as it allows (its
#               thresholds at 0: a function goes from BBQ to OMG at once).
#               JavaScriptCore cannot run OMG alone (it refuses options
#               without IPInt, LLInt or BBQ), and with BBQ off the code
#               never reaches OMG: it stays in the IPInt interpreter, 25
#               times slower (DETERMINISM.md)
#
# Whether a setting took effect is shown, not assumed: each configuration's
# speed on the longest row of each game, in ticks per second, and the
# time of the first row (the code it calls compiled on first use) beside
# the default's; a tier setting that changes nothing would show the
# default's figures. Prints one table, rows by configurations; a row that differs
# prints its hash and fails the run (exit 1): a finding to report, never
# to hide. The rows of the games of the page's light module (the ball
# game's) run in both its modules: every row in the one with every game,
# those rows again in the light one, which plays them live.
# ENGINE: chromium, firefox, webkit (default all three);
# LOCKSTEP_TIERS="default" runs only those tiers, and LOCKSTEP_WEB_DIR
# serves another build of the page (BENCHMARKS.md compares opt-levels so).
# Needs the page (make web), the server (cargo build --bins) and what
# scripts/browser/drive.mjs needs for each engine.
set -euo pipefail
cd "$(dirname "$0")/.."
engines=("$@")
[ ${#engines[@]} -gt 0 ] || engines=(chromium firefox webkit)
server=${LOCKSTEP_SERVER:-target/debug/lockstep-server}
page=${LOCKSTEP_WEB_DIR:-target/web}
export LOCKSTEP_WEB_DIR=$page
for file in "$server" "$page/index.html"; do
  [ -e "$file" ] || { echo "engine-matrix: $file is missing: cargo build --bins && make web" >&2; exit 2; }
done

# The options of each engine's tier (drive.mjs --engine-option), split
# at '|'.
declare -A tier_options=(
  [chromium default]=""
  [chromium baseline]="--js-flags=--liftoff --no-wasm-tier-up"
  [chromium optimising]="--js-flags=--no-liftoff"
  [firefox default]=""
  [firefox baseline]="javascript.options.wasm_optimizingjit=false"
  [firefox optimising]="javascript.options.wasm_baselinejit=false"
  [webkit default]=""
  [webkit baseline]="JSC_useWasmIPInt=0|JSC_useWasmLLInt=0|JSC_useBBQJIT=1|JSC_useOMGJIT=0"
  [webkit optimising]="JSC_thresholdForOMGOptimizeAfterWarmUp=0|JSC_thresholdForOMGOptimizeSoon=0"
)
read -r -a tiers <<<"${LOCKSTEP_TIERS:-default baseline optimising}"

# The rows: GAME,PLAYERS,SEED,KEY=VALUE,TICKS and the pinned hash.
rows=()
hashes=()
labels=()
table() { # GAME SETTING FILE PREFIX
  local index=0
  while read -r players seed size ticks hash _; do
    [[ -z ${players:-} || $players == \#* ]] && continue
    index=$((index + 1))
    rows+=("$1,$players,$seed,$2=$size,$ticks")
    hashes+=("$hash")
    labels+=("$4$index")
  done <"$3"
}
table balls balls games/balls/golden-hashes.txt g
table physics bodies games/topple/golden-hashes.txt p
query=$(printf '&row=%s' "${rows[@]}")
query=${query:1}
# The rows of the games the page's light module has (its modules.json):
# played a second time in a page of their own, which loads that module,
# as a live game of them does.
light=()
if [ -f "$page/modules.json" ]; then
  read -r -a light_games <<<"$(jq -r '.[0].games | join(" ")' "$page/modules.json")"
  for i in "${!rows[@]}"; do
    for game in "${light_games[@]}"; do
      [ "${rows[$i]%%,*}" = "$game" ] && light+=("$i")
    done
  done
fi
light_query=
for i in "${light[@]}"; do light_query+="&row=${rows[$i]}"; done
light_query=${light_query:1}
# The longest row of each game: their speeds tell the tiers apart, with
# the first row's time (what it calls compiled on first use: a slow
# optimising compiler shows there).
longest() { # GAME: the index of its costliest row
  local i game players setting ticks cost best=-1 found=
  for i in "${!rows[@]}"; do
    IFS=, read -r game players _ setting ticks <<<"${rows[$i]}"
    [ "$game" = "$1" ] || continue
    cost=$((players * (${setting#*=} + 1) * ticks))
    if [ "$cost" -gt "$best" ]; then best=$cost; found=$i; fi
  done
  echo "$found"
}
timed=("$(longest balls)" "$(longest physics)")

work=$(mktemp -d)
server_pid=
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
"$server" --listen 127.0.0.1:0 --players 2 --no-record --no-advertise \
  --identity-dir "$work/identity" >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 300); do grep -q '^browser url=' "$work/server.out" && break; sleep 0.1; done
url=$(grep '^browser url=' "$work/server.out" | head -n 1)
url=${url#browser url=}
[ -n "$url" ] || { echo "engine-matrix: the server serves no page: $(cat "$work/server.log")" >&2; exit 2; }

failures=()
columns=()
declare -A cell speed first
for engine in "${engines[@]}"; do
  for tier in "${tiers[@]}"; do
    column="$engine/$tier"
    columns+=("$column")
    options=()
    IFS='|' read -r -a listed <<<"${tier_options[$engine $tier]}"
    for option in "${listed[@]}"; do options+=(--engine-option "$option"); done
    out=$work/${engine}-$tier.out
    start=$(date +%s)
    node --experimental-websocket --no-warnings scripts/browser/drive.mjs --engine "$engine" \
      --timeout 1500 --exit-on "rows done" "${options[@]}" "${url}?${query}" >"$out" 2>&1 || true
    echo "engine-matrix: $column took $(($(date +%s) - start)) s" >&2
    for i in "${!rows[@]}"; do
      line=$(grep -A1 "^row $i " "$out" | sed -n 2p)
      hash=${line##*hash=}
      if [ "$hash" = "${hashes[$i]}" ]; then
        cell[$i $column]=same
      else
        cell[$i $column]=${hash:-none}
        failures+=("${labels[$i]} (${rows[$i]}) in $column: ${line:-no final line}, native ${hashes[$i]}")
      fi
    done
    grep -q '^lockstep-web: module lockstep_web ' "$out" ||
      failures+=("$column: the page of every row did not load lockstep_web")
    if [ ${#light[@]} -gt 0 ]; then
      node --experimental-websocket --no-warnings scripts/browser/drive.mjs --engine "$engine" \
        --timeout 1500 --exit-on "rows done" "${options[@]}" "${url}?${light_query}" >"$out.light" 2>&1 || true
      grep -q '^lockstep-web: module lockstep_web_light ' "$out.light" ||
        failures+=("$column: the page of the light module's rows did not load it")
      for j in "${!light[@]}"; do
        i=${light[$j]}
        line=$(grep -A1 "^row $j " "$out.light" | sed -n 2p)
        hash=${line##*hash=}
        if [ "$hash" != "${hashes[$i]}" ]; then
          cell[$i $column]="light:${hash:-none}"
          failures+=("${labels[$i]} (${rows[$i]}) in $column, light module: ${line:-no final line}, native ${hashes[$i]}")
        fi
      done
    fi
    for i in "${timed[@]}"; do
      timing=$(grep "^row $i " "$out" || true)
      speed[$i $column]=${timing##*ticks_per_s=}
      [ -n "$timing" ] || speed[$i $column]=-
    done
    timing=$(grep "^row 0 " "$out" || true)
    timing=${timing##* ms=}
    first[$column]=${timing%% *}
    [ -n "$timing" ] || first[$column]=-
    for file in "$out" "$out.light"; do
      if [ -f "$file" ] && grep -q '^page error:\|^driver .*exited\|^driver timeout' "$file"; then
        failures+=("$column: $(grep -m1 '^page error:\|^driver .*exited\|^driver timeout' "$file")")
      fi
    done
  done
done

printf '%-5s' row
for column in "${columns[@]}"; do printf ' %-20s' "$column"; done
echo
for i in "${!rows[@]}"; do
  printf '%-5s' "${labels[$i]}"
  for column in "${columns[@]}"; do printf ' %-20s' "${cell[$i $column]}"; done
  echo
done
for i in "${timed[@]}"; do
  printf '%-5s' "${labels[$i]}/s"
  for column in "${columns[@]}"; do printf ' %-20s' "${speed[$i $column]}"; done
  echo
done
printf '%-5s' "ms"
for column in "${columns[@]}"; do printf ' %-20s' "${first[$column]}"; done
echo
echo "('same': the pinned native hash; ${labels[${timed[0]}]}/s and ${labels[${timed[1]}]}/s: ticks per second"
echo " on ${rows[${timed[0]}]} and ${rows[${timed[1]}]}; ms: milliseconds of ${labels[0]}, the first"
echo " row, which compiles what it calls; every row in the module with every game, and"
echo " ${#light[@]} rows of $(IFS=' '; echo "${light_games[*]:-no game}") in the light module too)"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'engine-matrix: %s\n' "${failures[@]}"
  exit 1
fi
echo "engine-matrix: ${#rows[@]} golden rows identical to native in ${#columns[@]} engine configurations (${#light[@]} of them in both modules)"

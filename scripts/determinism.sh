#!/usr/bin/env bash
# make determinism: builds lockstep-client under several compiler
# configurations and checks that every build, run with and without AVX2 and
# FMA visible to glibc, ends every golden game of both real games
# (games/balls/golden-hashes.txt, games/topple/golden-hashes.txt) and one long
# crowded game of each on the same hash, and the golden games on their
# pinned hashes. DETERMINISM.md says why each configuration is here and
# records a run.
#
# Each build has its own target directory under target/determinism/<name>,
# so the builds do not invalidate each other (or target/debug and
# target/release). The first run compiles every dependency eight times:
# expect minutes. Exits 1 on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."

# game, the setting its table's third column is, the table.
tables=(
  "balls   balls  games/balls/golden-hashes.txt"
  "physics bodies games/topple/golden-hashes.txt"
)
root=target/determinism
# Not in the tables, so the builds must agree with each other without a
# pinned value to lean on: 30,000 ticks, four bots, a crowded arena; and
# 1,200 ticks of four rams in 600 bodies.
long_games=(
  "long  balls   balls  4 12345 96 30000"
  "plong physics bodies 4 12345 600 1200"
)
# The configurations, the CPU checks and the glibc setting, shared with
# scripts/probe-physics.sh.
matrix_tool=determinism
source scripts/build-matrix.sh

# --- the scenarios ---------------------------------------------------------
scenario_ids=()
declare -A params golden game_of setting_of
for entry in "${tables[@]}"; do
  read -r game setting table <<<"$entry"
  index=0
  prefix=g
  [[ $game == balls ]] || prefix=${game:0:1}
  while read -r players seed size ticks hash _; do
    [[ -z ${players:-} || $players == \#* ]] && continue
    index=$((index + 1))
    id=$prefix$index
    scenario_ids+=("$id")
    params[$id]="$players $seed $size $ticks"
    golden[$id]=$hash
    game_of[$id]=$game
    setting_of[$id]=$setting
  done <"$table"
done
for entry in "${long_games[@]}"; do
  read -r id game setting players seed size ticks <<<"$entry"
  scenario_ids+=("$id")
  params[$id]="$players $seed $size $ticks"
  game_of[$id]=$game
  setting_of[$id]=$setting
done

# --- build and run ---------------------------------------------------------
mkdir -p "$root"
runs=()
declare -A result

run_scenarios() {
  local run=$1 bin=$2 id players seed size ticks output
  shift 2
  runs+=("$run")
  for id in "${scenario_ids[@]}"; do
    read -r players seed size ticks <<<"${params[$id]}"
    if ! output=$(env "$@" "$bin" sim --game "${game_of[$id]}" --players "$players" --seed "$seed" \
      --set "${setting_of[$id]}=$size" --ticks "$ticks") ||
      [[ $output != "final tick=$ticks hash="* ]]; then
      echo "determinism: $run printed no final line for $id: $output" >&2
      exit 1
    fi
    result[$run,$id]=${output##*hash=}
  done
}

builds=0
for config in "${configs[@]}"; do
  read -r name profile build_env <<<"$config"
  matrix_skipped "$name" && continue
  matrix_build "$name" "$profile" "$build_env" "$root/$name" lockstep-client -p lockstep-cli --bin lockstep-client
  builds=$((builds + 1))
  matrix_runnable "$name" || continue
  run_scenarios "$name" "$matrix_bin"
  if [[ -n $hwcaps_tunable ]]; then
    run_scenarios "$name+glibc-no-avx2-fma" "$matrix_bin" GLIBC_TUNABLES="$hwcaps_tunable"
  fi
done

# --- report ----------------------------------------------------------------
echo "machine: $(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//'), $(uname -m), glibc ${glibc:-none}, $(rustc --version)"
[[ -n $hwcaps_tunable ]] && echo "glibc-no-avx2-fma: GLIBC_TUNABLES=$hwcaps_tunable"
echo
echo "scenarios (game: players seed balls|bodies ticks):"
for id in "${scenario_ids[@]}"; do
  printf '  %-5s %-40s %s\n' "$id" "${game_of[$id]}: ${params[$id]}" "${golden[$id]:-(not in the table)}"
done
echo
# The table goes through sed only to drop the last column's padding.
{
  printf '%-31s' configuration
  for id in "${scenario_ids[@]}"; do printf ' %-16s' "$id"; done
  echo
  printf '%-31s' golden
  for id in "${scenario_ids[@]}"; do printf ' %-16s' "${golden[$id]:--}"; done
  echo
  for run in "${runs[@]}"; do
    printf '%-31s' "$run"
    for id in "${scenario_ids[@]}"; do printf ' %-16s' "${result[$run,$id]}"; done
    echo
  done
} | sed 's/ *$//'
echo
for line in "${notes[@]}"; do echo "note: $line"; done

mismatches=()
for id in "${scenario_ids[@]}"; do
  declare -A by_hash=()
  for run in "${runs[@]}"; do
    by_hash[${result[$run,$id]}]+=" $run"
  done
  if ((${#by_hash[@]} > 1)); then
    detail=""
    for hash in "${!by_hash[@]}"; do detail+="; $hash from${by_hash[$hash]}"; done
    mismatches+=("$id (${params[$id]}): the builds disagree${detail}")
  elif [[ -n ${golden[$id]:-} && -z ${by_hash[${golden[$id]}]:-} ]]; then
    mismatches+=("$id (${params[$id]}): every build ends on ${!by_hash[*]}, the golden table pins ${golden[$id]}")
  fi
  unset by_hash
done

if ((${#mismatches[@]} > 0)); then
  for line in "${mismatches[@]}"; do echo "determinism: MISMATCH in $line"; done
  exit 1
fi
golden_count=$((${#scenario_ids[@]} - ${#long_games[@]}))
echo "determinism: identical across ${#runs[@]} configurations ($builds builds${hwcaps_tunable:+, each also with AVX2/FMA hidden from glibc}), ${#scenario_ids[@]} scenarios, matching all $golden_count golden hashes"

#!/usr/bin/env bash
# scripts/determinism.sh [--manifest-path CARGO_TOML]... (make determinism):
# builds lockstep-client under several compiler configurations and checks
# that every build, run with and without AVX2 and FMA visible to glibc,
# ends every golden game of both real games (games/balls/golden-hashes.txt,
# games/topple/golden-hashes.txt) and one long crowded game of each on the
# same hash, and the golden games on their pinned hashes. DETERMINISM.md
# says why each configuration is here and records a run.
#
# A game written outside the workspace is checked in the same matrix and
# the same verdict, given its Cargo.toml: its client (the bin
# PACKAGE-client) is built under every configuration too, and every row
# of its golden table (golden-hashes.txt beside the manifest) run on each
# build. scripts/game-manifest.sh says what such a game provides. Each
# --manifest-path names one; without any, examples/flock/Cargo.toml.
#
# Each configuration has its own target directory under
# target/determinism/<name>, which the workspace's client and the other
# games' clients share, so the builds do not invalidate each other (or
# target/debug and target/release); each build's log is
# <name>.<binary>.log beside it. The first run compiles every dependency
# eight times, and a game outside the workspace's eight more (its own
# profiles and features): expect most of an hour.
# LOCKSTEP_MATRIX_CONFIGS="release debug" builds only those configurations
# (scripts/build-matrix.sh). Exits 1 on any mismatch, 2 on bad arguments.
set -euo pipefail
usage() {
  echo "usage: scripts/determinism.sh [--manifest-path CARGO_TOML]..." >&2
  exit 2
}
source "$(dirname "$0")/game-manifest.sh"
manifest_args determinism "$@"
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
# The games outside the workspace: each row is played by that game's own
# client (source_of, the index in manifests; the workspace's rows have
# none), on its default game, the first of its list.
declare -A source_of
clients=()
for m in "${!manifests[@]}"; do
  outside_game determinism "${manifests[$m]}"
  clients+=("$game_client")
  index=0
  while read -r players seed size ticks hash _; do
    index=$((index + 1))
    id=$game_package$index
    if [[ -n ${params[$id]:-} ]]; then
      echo "determinism: two games are called $game_package (${manifests[$m]})" >&2
      exit 2
    fi
    scenario_ids+=("$id")
    params[$id]="$players $seed $size $ticks"
    golden[$id]=$hash
    game_of[$id]=$game_package
    setting_of[$id]=$game_setting
    source_of[$id]=$m
  done < <(game_rows "$game_table")
done

# --- build and run ---------------------------------------------------------
mkdir -p "$root"
runs=()
declare -A result

# run_scenarios RUN ENV...: every scenario with this configuration's
# builds (bin_of: the workspace's client, then each outside game's by its
# index in manifests).
run_scenarios() {
  local run=$1 id players seed size ticks output game
  shift
  runs+=("$run")
  for id in "${scenario_ids[@]}"; do
    read -r players seed size ticks <<<"${params[$id]}"
    game=(--game "${game_of[$id]}")
    [[ -z ${source_of[$id]:-} ]] || game=()
    if ! output=$(env "$@" "${bin_of[${source_of[$id]:-workspace}]}" sim "${game[@]}" --players "$players" \
      --seed "$seed" --set "${setting_of[$id]}=$size" --ticks "$ticks") ||
      [[ $output != "final tick=$ticks hash="* ]]; then
      echo "determinism: $run printed no final line for $id: $output" >&2
      exit 1
    fi
    result[$run,$id]=${output##*hash=}
  done
}

builds=0
declare -A bin_of
for config in "${configs[@]}"; do
  read -r name profile build_env <<<"$config"
  matrix_skipped "$name" && continue
  matrix_build "$name" "$profile" "$build_env" "$root/$name" lockstep-client -p lockstep-cli --bin lockstep-client
  bin_of[workspace]=$matrix_bin
  for m in "${!manifests[@]}"; do
    matrix_build "$name" "$profile" "$build_env" "$root/$name" "${clients[$m]}" \
      --manifest-path "${manifests[$m]}" --bin "${clients[$m]}"
    bin_of[$m]=$matrix_bin
  done
  builds=$((builds + 1))
  matrix_runnable "$name" || continue
  run_scenarios "$name"
  if [[ -n $hwcaps_tunable ]]; then
    run_scenarios "$name+glibc-no-avx2-fma" GLIBC_TUNABLES="$hwcaps_tunable"
  fi
done

# --- report ----------------------------------------------------------------
echo "machine: $(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//'), $(uname -m), glibc ${glibc:-none}, $(rustc --version)"
[[ -n $hwcaps_tunable ]] && echo "glibc-no-avx2-fma: GLIBC_TUNABLES=$hwcaps_tunable"
echo
settings=() width=5
for id in "${scenario_ids[@]}"; do
  ((${#id} <= width)) || width=${#id}
  [[ " ${settings[*]} " == *" ${setting_of[$id]} "* ]] || settings+=("${setting_of[$id]}")
done
echo "scenarios (game: players seed $(IFS='|'; echo "${settings[*]}") ticks):"
for id in "${scenario_ids[@]}"; do
  printf "  %-${width}s %-40s %s\n" "$id" "${game_of[$id]}: ${params[$id]}" "${golden[$id]:-(not in the table)}"
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
outside=""
for m in "${!manifests[@]}"; do outside+=", ${clients[$m]} from ${manifests[$m]#"$PWD"/}"; done
echo "determinism: identical across ${#runs[@]} configurations ($builds builds${hwcaps_tunable:+, each also with AVX2/FMA hidden from glibc}${outside}), ${#scenario_ids[@]} scenarios, matching all $golden_count golden hashes"

#!/usr/bin/env bash
# make probe: the rapier probe (games/topple/src/probe.rs) across the
# build matrix and the cross targets. Builds lockstep-topple under every
# configuration of scripts/determinism.sh (scripts/build-matrix.sh), runs
# `lockstep-topple probe` with each build natively, with and without AVX2
# and FMA hidden from glibc, then on aarch64, i686, Windows and wasm32
# (scripts/cross-build.sh lockstep-topple, scripts/cross.sh). Prints the
# matrix, run by scenario, each scenario's hashes as letters, and per
# scenario "agreed" or its groups and the first tick they part.
#
# Some scenarios use parts of rapier known to differ between targets: a
# split there is the finding, not a failure. Exits 1 only if a run prints
# no line for a scenario, or the builds disagree on the scenarios that
# must agree everywhere: the game itself (`game`) and the revolute chain
# with limits centred on 0 (`limits-centred`). DETERMINISM.md ("The rapier
# probe") records a run. LOCKSTEP_PROBE_TICKS sets the ticks (3000).
set -euo pipefail
cd "$(dirname "$0")/.."

matrix_tool=probe
source scripts/build-matrix.sh

root=target/determinism
ticks=${LOCKSTEP_PROBE_TICKS:-3000}
must_agree=" game limits-centred "

# --- how a run is made ------------------------------------------------------
runs=()
declare -A run_bin run_env run_target result checkpoints
scenarios=()

# probe_run RUN ARGS...: `lockstep-topple probe ARGS` as RUN runs it.
probe_run() {
  local run=$1
  shift
  if [[ -n ${run_target[$run]:-} ]]; then
    PROGRAM=lockstep-topple scripts/cross.sh "${run_target[$run]}" probe "$@"
  else
    # Word splitting of the environment is wanted: a list of VAR=value.
    # shellcheck disable=SC2086
    env ${run_env[$run]} "${run_bin[$run]}" probe "$@"
  fi
}

# record RUN: runs every scenario, keeps each line's hashes.
record() {
  local run=$1 output line name
  echo "probing $run" >&2
  if ! output=$(probe_run "$run" --ticks "$ticks"); then
    echo "probe: $run failed: $output" >&2
    exit 1
  fi
  runs+=("$run")
  while read -r line; do
    [[ $line == "probe scenario="* ]] || continue
    name=${line#probe scenario=}
    name=${name%% *}
    [[ " ${scenarios[*]} " == *" $name "* ]] || scenarios+=("$name")
    result[$run,$name]=$(sed -n 's/.* hash=\([0-9a-f]*\).*/\1/p' <<<"$line")
    checkpoints[$run,$name]=$(sed -n 's/.* hash[0-9][0-9]*=\([0-9a-f,]*\).*/\1/p' <<<"$line")
  done <<<"$output"
}

# --- the build matrix -------------------------------------------------------
mkdir -p "$root"
builds=0
for config in "${configs[@]}"; do
  read -r name profile build_env <<<"$config"
  matrix_skipped "$name" && continue
  matrix_build "$name" "$profile" "$build_env" "$root/$name" lockstep-topple -p lockstep-topple --bin lockstep-topple
  builds=$((builds + 1))
  matrix_runnable "$name" || continue
  run_bin[$name]=$matrix_bin
  run_env[$name]=""
  record "$name"
  if [[ -n $hwcaps_tunable ]]; then
    run_bin[$name+glibc-no-avx2-fma]=$matrix_bin
    run_env[$name+glibc-no-avx2-fma]="GLIBC_TUNABLES=$hwcaps_tunable"
    record "$name+glibc-no-avx2-fma"
  fi
done

# --- the cross targets ------------------------------------------------------
has_commands() {
  local command
  for command in "$@"; do
    command -v "$command" >/dev/null || return 1
  done
}
if has_commands /usr/bin/rustc /usr/bin/cargo qemu-aarch64 wine node wasm-ld-22 x86_64-w64-mingw32-gcc; then
  scripts/cross-build.sh lockstep-topple
  # shellcheck disable=SC2016
  mapfile -t targets < <(bash -c 'source scripts/cross-env.sh; printf "%s\n" "${cross_targets[@]}"')
  for target in "${targets[@]}"; do
    run_target[$target]=$target
    record "$target"
  done
else
  note "no cross toolchain (scripts/install-deps.sh cross): the aarch64, i686, windows and wasm32 runs are skipped"
fi

# --- report -----------------------------------------------------------------
echo "machine: $(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//'), $(uname -m), glibc ${glibc:-none}, $(rustc --version)"
[[ -n $hwcaps_tunable ]] && echo "glibc-no-avx2-fma: GLIBC_TUNABLES=$hwcaps_tunable"
[[ -n ${run_target[*]:-} ]] && echo "cross targets: $(/usr/bin/rustc --version), scripts/cross.sh"
echo "ticks: $ticks (the bvh scenarios evaluate leaf counts instead)"
echo

# Each scenario's distinct hashes, lettered in order of first appearance.
declare -A letter
letters=ABCDEFGHIJKLMNOPQRSTUVWXYZ
for name in "${scenarios[@]}"; do
  count=0
  for run in "${runs[@]}"; do
    hash=${result[$run,$name]:-}
    [[ -n $hash && -z ${letter[$name,$hash]:-} ]] || continue
    letter[$name,$hash]=${letters:count:1}
    count=$((count + 1))
  done
done

{
  printf '%-31s' run
  for name in "${scenarios[@]}"; do printf ' %-16s' "$name"; done
  echo
  for run in "${runs[@]}"; do
    printf '%-31s' "$run"
    for name in "${scenarios[@]}"; do
      hash=${result[$run,$name]:-}
      printf ' %-16s' "${letter[$name,$hash]:--}"
    done
    echo
  done
} | sed 's/ *$//'
echo

# first_parting NAME RUN1 RUN2: the first tick at which RUN1 and RUN2
# hash NAME differently, from a hash after every tick.
first_parting() {
  local name=$1 a b i
  a=$(probe_run "$2" --ticks "$ticks" --every 1 "$name" | sed -n 's/.* hash1=\([0-9a-f,]*\).*/\1/p' | tr , '\n')
  b=$(probe_run "$3" --ticks "$ticks" --every 1 "$name" | sed -n 's/.* hash1=\([0-9a-f,]*\).*/\1/p' | tr , '\n')
  i=$(cmp <(echo "$a") <(echo "$b") 2>/dev/null | sed -n 's/.* line \([0-9]*\).*/\1/p')
  echo "${i:-?}"
}

# first_value NAME TICK RUN1 RUN2: for a scenario the probe traces (the
# revolute chains), both runs' sync traces of TICK compared by
# `lockstep-topple trace-diff`: the first value the two compute
# differently, with the line of the probe that read it out of rapier.
traced=" limits-centred limits-offcentre "
first_value() {
  local name=$1 tick=$2 a=$root/trace-$1-$3.txt b=$root/trace-$1-$4.txt
  [[ $traced == *" $name "* && $tick =~ ^[0-9]+$ ]] || return 0
  probe_run "$3" --ticks "$tick" --trace "$tick" "$name" >"$a"
  probe_run "$4" --ticks "$tick" --trace "$tick" "$name" >"$b"
  # trace-diff exits 1 when the traces differ, which is what is expected.
  { "${run_bin[${runs[0]}]}" trace-diff "$a" "$b" || true; } |
    sed -n 's/^first differing value: /    first differing value: /p'
}

# quickest RUN...: the run of a group to rerun: an optimised native build
# before i686, Windows and wasm32, before aarch64 (emulated) and debug.
quickest() {
  local run best="" best_cost=9 cost
  for run in "$@"; do
    case "$run" in
      debug*) cost=4 ;;
      aarch64) cost=3 ;;
      i686 | windows | wasm32) cost=2 ;;
      *) cost=1 ;;
    esac
    if ((cost < best_cost)); then
      best=$run
      best_cost=$cost
    fi
  done
  echo "$best"
}

failures=()
for name in "${scenarios[@]}"; do
  declare -A members=()
  order=()
  for run in "${runs[@]}"; do
    hash=${result[$run,$name]:-}
    if [[ -z $hash ]]; then
      failures+=("$run printed no line for $name")
      continue
    fi
    [[ -n ${members[$hash]:-} ]] || order+=("$hash")
    members[$hash]+=" $run"
  done
  if ((${#order[@]} == 1)); then
    echo "$name: agreed (${order[0]})"
  else
    echo "$name: split into ${#order[@]} groups"
    picks=()
    for hash in "${order[@]}"; do
      echo "  ${letter[$name,$hash]} $hash:${members[$hash]}"
      picks+=("$(quickest ${members[$hash]})")
    done
    if [[ -n ${checkpoints[${picks[0]},$name]:-} ]]; then
      for ((g = 1; g < ${#picks[@]}; g++)); do
        tick=$(first_parting "$name" "${picks[0]}" "${picks[$g]}")
        echo "  ${letter[$name,${order[0]}]} and ${letter[$name,${order[$g]}]} (${picks[0]}, ${picks[$g]}) first differ after tick $tick"
        first_value "$name" "$tick" "${picks[0]}" "${picks[$g]}"
      done
    fi
    if [[ $must_agree == *" $name "* ]]; then
      failures+=("$name must agree everywhere and split")
    fi
  fi
  unset members
done
echo
for line in "${notes[@]}"; do echo "note: $line"; done

if ((${#failures[@]} > 0)); then
  for line in "${failures[@]}"; do echo "probe: FAILURE $line"; done
  exit 1
fi
echo "probe: ${#runs[@]} runs ($builds builds${hwcaps_tunable:+, each also with AVX2/FMA hidden from glibc}${run_target[*]:+, ${#run_target[@]} cross targets}), ${#scenarios[@]} scenarios; the game and the centred limits agree everywhere"

#!/usr/bin/env bash
# make determinism: builds lockstep-client under several compiler
# configurations and checks that every build, run with and without AVX2 and
# FMA visible to glibc, ends every golden game of both real games
# (sim/golden-hashes.txt, games/physics/golden-hashes.txt) and one long
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
  "balls   balls  sim/golden-hashes.txt"
  "physics bodies games/physics/golden-hashes.txt"
)
root=target/determinism
# Not in the tables, so the builds must agree with each other without a
# pinned value to lean on: 30,000 ticks, four bots, a crowded arena; and
# 1,200 ticks of four rams in 600 bodies.
long_games=(
  "long  balls   balls  4 12345 96 30000"
  "plong physics bodies 4 12345 600 1200"
)
# The `debug` configuration builds everything unoptimised, rapier too
# (Cargo.toml optimises it in test builds).
unoptimised=()
for package in rapier2d parry2d nalgebra simba glamx lockstep-physics; do
  unoptimised+=(--config "profile.dev.package.$package.opt-level=0")
done

# Only the configuration under test may set compiler flags.
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS CARGO_BUILD_RUSTFLAGS

# name, cargo profile, then the environment cargo builds it with.
configs=(
  "debug        dev"
  "release      release"
  "opt-level-1  release CARGO_PROFILE_RELEASE_OPT_LEVEL=1"
  "opt-level-s  release CARGO_PROFILE_RELEASE_OPT_LEVEL=s"
  "lto-fat-cgu1 release CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1"
  "x86-64       release RUSTFLAGS=-Ctarget-cpu=x86-64"
  "x86-64-v3    release RUSTFLAGS=-Ctarget-cpu=x86-64-v3"
  "native       release RUSTFLAGS=-Ctarget-cpu=native"
)

notes=()
note() {
  notes+=("$1")
  echo "note: $1" >&2
}

cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has_cpu_flags() {
  local flag
  for flag in "$@"; do
    [[ $cpu_flags == *" $flag "* ]] || return 1
  done
}

# --- the glibc setting that hides AVX2 and FMA ------------------------------
# glibc picks its own routines (memcpy, and libm's exp, sin, fma...) by CPU
# feature; the tunable makes it choose as on a CPU without AVX2 and FMA. The
# spelling changed in glibc 2.33: "AVX2_Usable" became "AVX2".
hwcaps_tunable=""
ld_so=/lib64/ld-linux-x86-64.so.2
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}') || glibc=""
if [[ $(uname -m) != x86_64 ]]; then
  note "not an x86-64 machine: the x86 configurations and the AVX2/FMA glibc runs are skipped"
elif [[ -z $glibc ]]; then
  note "not a glibc system: the runs with AVX2/FMA hidden from glibc are skipped"
else
  if [[ $(printf '%s\n' "$glibc" 2.33 | sort -V | head -n1) == 2.33 ]]; then
    hwcaps_tunable="glibc.cpu.hwcaps=-AVX2,-FMA"
  else
    hwcaps_tunable="glibc.cpu.hwcaps=-AVX2_Usable,-FMA_Usable"
  fi
  if ! has_cpu_flags avx2 fma; then
    note "this CPU has no AVX2/FMA, so hiding them from glibc changes nothing; those runs are skipped"
    hwcaps_tunable=""
  elif [[ -x $ld_so ]] && "$ld_so" --list-diagnostics >/dev/null 2>&1; then
    features() { GLIBC_TUNABLES=$1 "$ld_so" --list-diagnostics | grep '^x86.cpu_features.*active'; }
    if [[ $(features "") == "$(features "$hwcaps_tunable")" ]]; then
      note "GLIBC_TUNABLES=$hwcaps_tunable has no effect on glibc $glibc; those runs are skipped"
      hwcaps_tunable=""
    fi
  else
    note "cannot verify GLIBC_TUNABLES=$hwcaps_tunable on glibc $glibc (no ld.so --list-diagnostics)"
  fi
fi

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
x86_only=" x86-64 x86-64-v3 "

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
  if [[ $(uname -m) != x86_64 && $x86_only == *" $name "* ]]; then
    continue
  fi
  echo "building $name ($profile${build_env:+, $build_env})" >&2
  log=$root/$name.log
  # Word splitting of $build_env is wanted: it is a list of VAR=value.
  # shellcheck disable=SC2086
  extra=()
  [[ $profile == dev ]] && extra=("${unoptimised[@]}")
  if ! env $build_env cargo build "${extra[@]}" -p lockstep-cli --bin lockstep-client \
    --profile "$profile" --target-dir "$root/$name" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "determinism: building $name failed (log: $log)" >&2
    exit 1
  fi
  builds=$((builds + 1))
  dir=release
  [[ $profile == dev ]] && dir=debug
  bin=$root/$name/$dir/lockstep-client
  if [[ $name == x86-64-v3 ]] && ! has_cpu_flags avx avx2 bmi1 bmi2 f16c fma abm movbe xsave; then
    note "this CPU lacks x86-64-v3 features (AVX2, FMA, BMI2...): the x86-64-v3 build was built but not run"
    continue
  fi
  run_scenarios "$name" "$bin"
  if [[ -n $hwcaps_tunable ]]; then
    run_scenarios "$name+glibc-no-avx2-fma" "$bin" GLIBC_TUNABLES="$hwcaps_tunable"
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

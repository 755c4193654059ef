# Sourced by scripts/determinism.sh and scripts/probe-physics.sh: the
# compiler configurations both build under, the CPU checks, the glibc
# setting that hides AVX2 and FMA, and how one configuration is built.
# DETERMINISM.md says why each configuration is there. The caller sets
# matrix_tool (its name in messages) first.

# The `debug` configuration builds everything unoptimised, rapier too
# (Cargo.toml optimises it in test builds).
unoptimised=()
for package in rapier2d parry2d nalgebra simba glamx lockstep-topple; do
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
x86_only=" x86-64 x86-64-v3 "

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

# --- one configuration -----------------------------------------------------
# LOCKSTEP_MATRIX_CONFIGS="NAME...": only these configurations, for a
# quick check while working on the scripts; the verdict counts them.
if [[ -n ${LOCKSTEP_MATRIX_CONFIGS:-} ]]; then
  for name in $LOCKSTEP_MATRIX_CONFIGS; do
    if [[ " ${configs[*]%% *} " != *" $name "* ]]; then
      echo "$matrix_tool: LOCKSTEP_MATRIX_CONFIGS names $name, not a configuration (${configs[*]%% *})" >&2
      exit 2
    fi
  done
  note "LOCKSTEP_MATRIX_CONFIGS: only $LOCKSTEP_MATRIX_CONFIGS of the ${#configs[@]} configurations"
fi

# matrix_skipped NAME: true if NAME cannot be built on this machine, or
# LOCKSTEP_MATRIX_CONFIGS leaves it out.
matrix_skipped() {
  [[ $(uname -m) != x86_64 && $x86_only == *" $1 "* ]] ||
    [[ -n ${LOCKSTEP_MATRIX_CONFIGS:-} && " $LOCKSTEP_MATRIX_CONFIGS " != *" $1 "* ]]
}

# matrix_build NAME PROFILE "BUILD_ENV" DIR BIN CARGO_ARGS...: builds with
# `cargo build CARGO_ARGS` into the target directory DIR (the log next to
# it, DIR.BIN.log), everything unoptimised for the dev profile, and sets
# matrix_bin to the path of the binary BIN; on failure prints the log's
# tail and exits 1.
matrix_build() {
  local name=$1 profile=$2 build_env=$3 dir=$4 bin=$5 log=$4.$5.log extra=()
  shift 5
  echo "building $bin, $name ($profile${build_env:+, $build_env})" >&2
  [[ $profile == dev ]] && extra=("${unoptimised[@]}")
  # Word splitting of $build_env is wanted: it is a list of VAR=value.
  # shellcheck disable=SC2086
  if ! env $build_env cargo build "${extra[@]}" "$@" --profile "$profile" --target-dir "$dir" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "$matrix_tool: building $name failed (log: $log)" >&2
    exit 1
  fi
  if [[ $profile == dev ]]; then
    matrix_bin=$dir/debug/$bin
  else
    matrix_bin=$dir/release/$bin
  fi
}

# matrix_runnable NAME: false, with a note, if this CPU cannot run the
# build NAME.
matrix_runnable() {
  if [[ $1 == x86-64-v3 ]] && ! has_cpu_flags avx avx2 bmi1 bmi2 f16c fma abm movbe xsave; then
    note "this CPU lacks x86-64-v3 features (AVX2, FMA, BMI2...): the x86-64-v3 build was built but not run"
    return 1
  fi
}

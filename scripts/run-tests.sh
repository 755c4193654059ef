#!/usr/bin/env bash
# scripts/run-tests.sh: every test of the workspace (what `cargo test
# --workspace` runs: each crate's unit, integration and doc tests), with
# at most LOCKSTEP_TEST_JOBS test binaries running at once (default 2),
# then the slowest binaries with their seconds and loads.
#
# Why not `cargo test`: it runs one binary after another, and much of the
# time of the end-to-end binaries is spent waiting on real processes,
# real sockets and real-time games. Two binaries at once keep the cores
# busy; each still runs its tests as libtest does (two threads on this
# two-core machine), in the package's directory, as cargo would. The
# binaries that took longest in the last run start first, so that none
# of them is left alone at the end: the last run of this checkout, or of
# any on the machine (its times are kept in the machine's cache,
# scripts/cache-env.sh, for a new clone to start from).
#
# A binary's load is the CPU time it and every process it waited for
# used, over its real time: the cores it kept busy on average (the chaos
# run with its browser about 0.85, a window test under Xvfb about 1, a
# server test of three bots about 0.4-0.7). Their sum over the run's time
# says how close to the machine's cores the tests run; BENCHMARKS.md
# ("CI in minutes") says why a third binary at once is not the default.
#
# Each binary's output is printed whole when it ends and kept in
# target/stages/tests/; the times and loads in
# target/stages/tests-by-binary.txt. Exits 1 if any binary failed, after
# naming each one.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/cache-env.sh
cargo=${CARGO:-cargo}
jobs=${LOCKSTEP_TEST_JOBS:-2}
out=target/stages/tests
times=target/stages/tests-by-binary.txt
mkdir -p "$out"
rm -f "$out"/*.log "$out"/*.log.done

# The test binaries as cargo built them (fresh after `make test`'s test
# build): "package<TAB>target<TAB>kind<TAB>package directory<TAB>executable".
list=$(mktemp)
trap 'rm -f "$list" "$list".*' EXIT
if ! "$cargo" test --workspace --no-run --message-format=json-render-diagnostics >"$list.json"; then
  echo "run-tests: the tests did not build" >&2
  exit 1
fi
# A package id is path+file:///DIR#NAME@VERSION, or path+file:///NAME#VERSION
# when the directory is named after the package.
jq -r 'select(.reason == "compiler-artifact" and .profile.test and .executable != null)
  | [(.package_id | if test("#[^@]+@") then capture("#(?<name>[^@]+)@").name
                    else split("#")[0] | split("/")[-1] end),
     .target.name, .target.kind[0], (.manifest_path | rtrimstr("/Cargo.toml")), .executable]
  | @tsv' "$list.json" >"$list" || {
  echo "run-tests: cannot read cargo's list of test binaries" >&2
  exit 1
}
[ -s "$list" ] || {
  echo "run-tests: cargo listed no test binaries" >&2
  exit 1
}

# Longest first, by the last run's times; new binaries after them. A
# line of the times file: "SECONDS s LOAD load  PACKAGE KIND TARGET" (a
# line of an older run, "SECONDS s  PACKAGE KIND TARGET", has no load).
[ -s "$times" ] || cp "$lockstep_cache/tests-by-binary.txt" "$times" 2>/dev/null
while IFS=$'\t' read -r package target kind dir executable; do
  secs=$(awk -v name="$package $kind $target" '
    ($4 == "load" ? $5 " " $6 " " $7 : $3 " " $4 " " $5) == name { print $1; exit }' "$times" 2>/dev/null)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${secs:-0}" "$package" "$target" "$kind" "$dir" "$executable"
done <"$list" | sort -t $'\t' -k1,1 -rn -s | cut -f2- >"$list.order"

# The CPU time, in clock ticks, this shell's children used: a test
# binary and every process it waited for (cutime and cstime of
# /proc/PID/stat). Read with `read`, in this very shell: in a subshell
# of its own it would see that subshell's children, none.
clock_ticks=$(getconf CLK_TCK)
children_ticks() { # VAR: set to the ticks
  local -a stat
  read -r -a stat <"/proc/$BASHPID/stat"
  printf -v "$1" '%d' $((stat[15] + stat[16]))
}

# One binary: its output to a log of its own, then its time and CPU.
run_one() { # PACKAGE TARGET KIND DIR EXECUTABLE
  local log=$out/$1-$3-$2.log start status ms ticks
  start=$(date +%s%N)
  (cd "$4" && CARGO_MANIFEST_DIR=$4 CARGO_PKG_NAME=$1 "$5") >"$log" 2>&1
  status=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  children_ticks ticks
  printf '%s\t%s\t%s\t%s %s %s\n' "$status" "$ms" "$((ticks * 1000 / clock_ticks))" "$1" "$3" "$2" >"$log.done"
}

# The doc tests, run by cargo (rustdoc compiles them), as one more job.
run_doc() {
  local log=$out/doc-tests.log start status ticks
  start=$(date +%s%N)
  "$cargo" test --workspace --doc >"$log" 2>&1
  status=$?
  children_ticks ticks
  printf '%s\t%s\t%s\t%s\n' "$status" "$((($(date +%s%N) - start) / 1000000))" "$((ticks * 1000 / clock_ticks))" "workspace doc tests" >"$log.done"
}

failed=()
report() { # LOG: prints a finished binary's output and notes its result
  local status ms cpu_ms name
  IFS=$'\t' read -r status ms cpu_ms name <"$1.done"
  echo
  echo "==== $name: $(awk -v ms="$ms" 'BEGIN { printf "%.1f", ms / 1000 }') s$([ "$status" -eq 0 ] || echo ", FAILED (exit $status)")"
  cat "$1"
  [ "$status" -eq 0 ] || failed+=("$name")
  awk -v ms="$ms" -v cpu="$cpu_ms" -v name="$name" \
    'BEGIN { printf "%8.1f s %5.2f load  %s\n", ms / 1000, (ms > 0 ? cpu / ms : 0), name }' >>"$times.new"
  rm -f "$1.done"
}

: >"$times.new"
running=0
wait_one() {
  local log
  wait -n
  running=$((running - 1))
  for log in "$out"/*.log; do
    [ -e "$log.done" ] && report "$log"
  done
}
run_doc &
running=1
while IFS=$'\t' read -r package target kind dir executable; do
  while [ "$running" -ge "$jobs" ]; do wait_one; done
  echo "run-tests: started $package $kind $target"
  run_one "$package" "$target" "$kind" "$dir" "$executable" &
  running=$((running + 1))
done <"$list.order"
while [ "$running" -gt 0 ]; do wait_one; done

sort -rn "$times.new" >"$times"
rm -f "$times.new"
mkdir -p "$lockstep_cache" && cp "$times" "$lockstep_cache/tests-by-binary.txt"
total=$(wc -l <"$times")
echo
echo "The slowest of $total test binaries, $(awk '{ s += $1 } END { printf "%d", s }' "$times") s of them in all, $jobs at a time, $(awk '{ c += $1 * $3 } END { printf "%d", c }' "$times") s of CPU (every one, with its load in cores, in $times):"
head -n 12 "$times"
if [ ${#failed[@]} -gt 0 ]; then
  echo
  for name in "${failed[@]}"; do echo "run-tests: FAILED: $name (its output: above, and in $out)"; done
  exit 1
fi
echo "run-tests: every test binary passed"

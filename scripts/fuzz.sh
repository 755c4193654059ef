#!/usr/bin/env bash
# make fuzz: runs every cargo-fuzz target in fuzz/ (or the ones named as
# arguments) for FUZZ_SECONDS each (default 60), then prints per target the
# executions libFuzzer ran, its coverage and corpus, and any crash. Not part
# of `make test`: it needs nightly Rust and takes minutes. FUZZING.md says
# what each target checks and records runs.
#
# Each target starts from its committed seeds (fuzz/seeds/<target>) and
# from what earlier runs on this machine kept (fuzz/corpus/<target>, not
# committed), and adds what it finds to the latter. A crash or a failed
# property is saved under fuzz/artifacts/<target>/; replay it with
#   cargo +nightly fuzz run <target> <file>
# Exits 1 if any target failed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "FUZZ_SECONDS must be a positive number of seconds, not '$seconds'" >&2
  exit 2
fi

# cargo-fuzz itself builds with the pinned stable toolchain; the targets
# need nightly for the sanitizer and coverage flags.
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "Installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "Installing the nightly toolchain for the fuzz targets"
  rustup toolchain install nightly --profile minimal
fi

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

cargo +nightly fuzz build

logs=fuzz/target/logs
mkdir -p "$logs"
summary=()
failed=0
for target in "${targets[@]}"; do
  corpus="$PWD/fuzz/corpus/$target"
  mkdir -p "$corpus"
  log="$logs/$target.log"
  echo "== $target: ${seconds}s (log: $log)"
  status=0
  cargo +nightly fuzz run "$target" "$corpus" "$PWD/fuzz/seeds/$target" -- \
    -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1 || status=$?

  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  # The last status line: "#N DONE cov: C ft: F corp: U/S ...".
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
  if [ "$status" -eq 0 ]; then
    result="no crash"
  else
    failed=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -1)
    result="FAILED (exit $status) ${artifact:-see the log}"
    grep -E "panicked at|^thread '|ERROR: libFuzzer|SUMMARY" "$log" | head -5 | sed 's/^/   /'
  fi
  summary+=("$(printf '%-14s %12s execs %8s/s  cov %5s  ft %6s  corpus %-12s %s' \
    "$target" "${executions:-?}" "${per_second:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result")")
done

echo
echo "fuzzing, ${seconds}s per target:"
printf '  %s\n' "${summary[@]}"
exit "$failed"

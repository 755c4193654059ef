#!/usr/bin/env bash
# scripts/side-by-side.sh NAME COMMAND... -- NAME COMMAND...: runs two
# independent builds at once, the first's output held back until the
# second ends, and fails if either fails, naming it. Each one's time is
# recorded as a part of the stage they run in (scripts/stage.sh).
#
# Why: make test's page (wasm32, fat LTO, one codegen unit) spends a long
# stretch linking on one core, and the native build has crates of its own
# that keep one core waiting (rapier2d at opt-level 2); side by side, each
# fills the other's idle core. They share nothing but cargo's registry:
# other compilers, other target directories.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  echo "usage: scripts/side-by-side.sh NAME COMMAND... -- NAME COMMAND..." >&2
  exit 2
}
first=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  first+=("$1")
  shift
done
[ $# -gt 0 ] || usage
shift
second=("$@")
[ ${#first[@]} -ge 2 ] && [ ${#second[@]} -ge 2 ] || usage

log=$(mktemp)
trap 'rm -f "$log" "$log.secs"' EXIT
start=$(date +%s)
(
  "${first[@]:1}"
  status=$?
  echo $(($(date +%s) - start)) >"$log.secs"
  exit "$status"
) >"$log" 2>&1 &
pid=$!
"${second[@]:1}"
second_status=$?
second_secs=$(($(date +%s) - start))
wait "$pid"
first_status=$?
first_secs=$(cat "$log.secs" 2>/dev/null || echo 0)
echo "---- ${first[0]} (run beside ${second[0]}):"
cat "$log"
"$root/scripts/stage.sh" - "${first[0]}" --took "$first_secs"
"$root/scripts/stage.sh" - "${second[0]}" --took "$second_secs"
for result in "${first[0]}:$first_status" "${second[0]}:$second_status"; do
  [ "${result##*:}" -eq 0 ] || echo "side-by-side: ${result%:*} failed (exit ${result##*:})" >&2
done
[ "$first_status" -eq 0 ] && [ "$second_status" -eq 0 ]

#!/usr/bin/env bash
# scripts/stage.sh RUN begin|end
# scripts/stage.sh RUN NAME COMMAND...
# scripts/stage.sh - NAME COMMAND...
# scripts/stage.sh - NAME --took SECONDS
#
# The stages of a long make target (RUN: test, cross), timed, so that the
# next slow stage shows itself in every run:
#
#   begin            forgets RUN's earlier timings
#   NAME COMMAND...  runs COMMAND and records how long it took
#   end              prints the table of RUN's stages
#
# A stage that fails prints the table so far, itself marked failed, and
# exits with COMMAND's status. Scripts a stage runs may record stages of
# their own (scripts/cross-build.sh records each build) with RUN `-`: the
# run of the stage they are in (this script exports where its timings go
# as LOCKSTEP_STAGES), or, outside any, none: COMMAND just runs.
# `--took SECONDS` records a part timed by the script itself (the cross
# check's time on each target, spread over its scenarios). `end` of cross
# also prints the timings of the last `make test` on this checkout, so
# that the end of `.ci/run` shows both.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

[ $# -ge 2 ] || {
  echo "usage: scripts/stage.sh RUN begin|end, or scripts/stage.sh RUN NAME COMMAND..." >&2
  exit 2
}
run=$1
shift
if [ "$run" = - ]; then
  [ -n "${LOCKSTEP_STAGES:-}" ] || {
    shift
    [ "${1:-}" != --took ] || exit 0
    exec "$@"
  }
  file=$LOCKSTEP_STAGES
  dir=$(dirname "$file")
  run=$(basename "$file" .tsv)
else
  dir=$root/target/stages
  file=$dir/$run.tsv
fi

table() { # FILE TITLE: a line a stage, its parts indented under it
  [ -s "$1" ] || return 0
  awk -F '\t' -v title="$2" '
    function clock(s) { return sprintf("%2d:%02d", s / 60, s % 60) }
    { depth[NR] = $1; names[NR] = $2; secs[NR] = $3; marks[NR] = $4; if ($1 == 0) total += $3 }
    END {
      printf "%s, stage by stage:\n", title
      for (i = 1; i <= NR; i++) {
        indent = sprintf("%*s", 2 + 2 * depth[i], "")
        printf "%s%-*s %5d s  %s%s\n", indent, 36 - 2 * depth[i], names[i], secs[i], clock(secs[i]), marks[i] == "ok" ? "" : "  " marks[i]
      }
      printf "  %-36s %5d s  %s\n", "total", total, clock(total)
    }' "$1"
}

case "$1" in
  begin)
    mkdir -p "$dir"
    : >"$file"
    exit 0
    ;;
  end)
    echo
    [ "$run" != cross ] || [ ! -s "$dir/test.tsv" ] || { table "$dir/test.tsv" "make test"; echo; }
    table "$file" "make $run"
    exit 0
    ;;
esac

name=$1
shift
[ $# -gt 0 ] || {
  echo "stage.sh: the stage '$name' has no command" >&2
  exit 2
}
# A stage inside a stage (a script's parts) is recorded indented under
# it, and counts once in the total: the outer one's line is written when
# it starts and its time filled in when it ends.
depth=${LOCKSTEP_STAGE_DEPTH:-0}
[ "${LOCKSTEP_STAGES:-}" = "$file" ] || depth=0
mkdir -p "$dir"
if [ "$1" = --took ]; then
  printf '%s\t%s\t%s\tok\n' "$depth" "$name" "${2:?--took needs the seconds}" >>"$file"
  exit 0
fi
line=$(($(wc -l <"$file" 2>/dev/null || echo 0) + 1))
printf '%s\t%s\t0\trunning\n' "$depth" "$name" >>"$file"
export LOCKSTEP_STAGES=$file LOCKSTEP_STAGE_DEPTH=$((depth + 1))
start=$(date +%s)
"$@"
status=$?
seconds=$(($(date +%s) - start))
mark=ok
[ "$status" -eq 0 ] || mark="failed (exit $status)"
awk -F '\t' -v OFS='\t' -v line="$line" -v secs="$seconds" -v mark="$mark" \
  'NR == line { $3 = secs; $4 = mark } { print }' "$file" >"$file.new" && mv "$file.new" "$file"
[ "$status" -ne 0 ] || exit 0
if [ "$depth" -eq 0 ]; then
  echo
  table "$file" "make $run (stopped: '$name' failed)"
fi
exit "$status"

#!/usr/bin/env bash
# scripts/bench-step.sh BEFORE AFTER [ROUNDS]: the step cost of each game
# with two builds of lockstep-client (two release binaries, such as one
# built from an older commit with `git worktree` and one from this tree),
# taken in one run on one machine: each round runs `sim` of every game
# with BEFORE then AFTER, so both see the same load, and times its CPU
# (user + system, from /usr/bin/time). Prints, per game, each build's
# median and spread (min-max) in microseconds per tick and the ratio of
# the medians. Both builds must end every game on the same hash. ROUNDS
# defaults to 7. BENCHMARKS.md ("The sync trace, off") records a run.
set -euo pipefail

usage() {
  echo "usage: scripts/bench-step.sh BEFORE-LOCKSTEP-CLIENT AFTER-LOCKSTEP-CLIENT [ROUNDS]" >&2
  exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
before=$1 after=$2 rounds=${3:-7}
for bin in "$before" "$after"; do
  [ -x "$bin" ] || { echo "bench-step: $bin is not a program" >&2; exit 2; }
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || usage

# name ticks sim-arguments: long enough that a run takes two to three
# seconds, where the CPU time's 10 ms resolution is under 0.5%.
games=(
  "balls-96 500000 --game balls --balls 96 --players 4 --seed 1"
  "topple-160 24000 --game physics --players 4 --seed 1"
  "tally 80000000 --game tally --players 4 --seed 1"
)

declare -A times hashes
for ((round = 1; round <= rounds; round++)); do
  for game in "${games[@]}"; do
    read -r name ticks args <<<"$game"
    for build in before after; do
      bin=${!build}
      # shellcheck disable=SC2086 # the arguments are words
      out=$(/usr/bin/time -f 'cpu %U %S' "$bin" sim --ticks "$ticks" $args 2>&1)
      hash=$(sed -n 's/^final tick=[0-9]* hash=//p' <<<"$out")
      cpu=$(sed -n 's/^cpu //p' <<<"$out" | awk '{printf "%.3f", $1 + $2}')
      [ -n "$hash" ] && [ -n "$cpu" ] || { echo "bench-step: $build $name: $out" >&2; exit 1; }
      if [ -n "${hashes[$name]:-}" ] && [ "${hashes[$name]}" != "$hash" ]; then
        echo "bench-step: $build $name ended on $hash, not ${hashes[$name]}" >&2
        exit 1
      fi
      hashes[$name]=$hash
      times[$name,$build]+="$(awk -v s="$cpu" -v t="$ticks" 'BEGIN { printf "%.4f", s * 1e6 / t }') "
    done
  done
  echo "round $round of $rounds done" >&2
done

# stats "V1 V2 ...": median min max.
stats() {
  tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g |
    awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.4f %.4f %.4f", m, v[1], v[NR] }'
}

echo "machine: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; $rounds rounds"
printf '%-12s %-30s %-30s %s\n' game "before: us/tick median (min-max)" "after: us/tick median (min-max)" "after/before"
for game in "${games[@]}"; do
  read -r name _ <<<"$game"
  read -r bm bl bh <<<"$(stats "${times[$name,before]}")"
  read -r am al ah <<<"$(stats "${times[$name,after]}")"
  printf '%-12s %-30s %-30s %s\n' "$name" "$bm ($bl-$bh)" "$am ($al-$ah)" \
    "$(awk -v a="$am" -v b="$bm" 'BEGIN { printf "%.3f", a / b }')"
done
echo "every game ended on one hash with both builds"

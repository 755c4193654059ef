#!/usr/bin/env bash
# A seeded chaos run (the lockstep-chaos crate, chaos/): the real server,
# six headless bots and a spectator in one game on loopback, with bots
# killed, frozen and cut off, spectators coming and going, the server
# killed and resumed and one desync injected, at points of the game drawn
# from the seed; each fault's answer is checked, and so are the end of
# the game and its replay.
#
#   scripts/chaos.sh --seed S [--minutes M] [--bin-dir DIR] [--keep DIR]
#                    [--browser] [--aarch64 CLIENT]
#   scripts/chaos.sh --seed S [--minutes M] --schedule
#
# --browser adds a browser peer: the server's page (make web builds it)
# in a headless Chromium. --aarch64 CLIENT adds an aarch64 bot: that
# build of lockstep-client (scripts/cross-build.sh makes
# target/cross/aarch64-unknown-linux-gnu/debug/lockstep-client) under
# qemu-aarch64. Neither is faulted; both must reconnect after every
# server restart and end on everyone's hash, and the summary ends with
# peers=browser,aarch64.
#
# Without --bin-dir it builds the debug binaries (cargo build --bins, as
# make test does) and runs against them. --keep DIR keeps every process's
# output, the replay and the desync dumps. It prints the history, the
# figures (`figures:` lines: answer time per kind of fault, stalls, the
# game's pace, the server's peak memory) and, last, the summary line:
#   chaos seed=S minutes=M faults=N kinds=kill:a,stop:b,link:c,spectator:d,server:e,desync:f desyncs=D verdict=agreed|split|unfinished lost=L [peers=...]
# and exits 0 only when every check holds (each failed one is printed as
# `check FAILED: ...`). It uses 127.0.0.1 only, and stops only the
# processes it started, by their PIDs.
set -euo pipefail
# Cargo runs from the repository (its rust-toolchain.toml picks the
# compiler); the paths given (--bin-dir, --keep) stay relative to where
# this was run.
root=$(cd "$(dirname "$0")/.." && pwd)

bin_dir=
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --bin-dir) bin_dir=${2:?--bin-dir DIR} && shift 2 ;;
    *) args+=("$1") && shift ;;
    esac
done
target=$(cd "$root" && cargo metadata --format-version 1 --no-deps | sed -E 's/.*"target_directory":"([^"]*)".*/\1/')
if [ -z "$bin_dir" ]; then
    (cd "$root" && cargo build -q --bins)
    bin_dir=$target/debug
else
    (cd "$root" && cargo build -q --bin lockstep-chaos)
fi
exec "$target/debug/lockstep-chaos" --bin-dir "$bin_dir" ${args[@]+"${args[@]}"}

#!/usr/bin/env bash
# The crate layout's promises (ARCHITECTURE.md, "Crates and boundaries"): the games
# (every crate the list lockstep-games takes) and their random numbers
# (lockstep-rng), the lockstep core (lockstep-engine) and
# the browser peer (lockstep-web) depend on no windowing, networking, TLS
# or async runtime, and the browser peer not on the native client; the protocol
# knows no game, and the server names one only in its binary's list; the
# client and the server do not depend on each other (not even for their
# tests) nor the test kit on the client; the client builds headless,
# linking no SDL2; and what cargo cannot check (scripts/layout): no module
# cycles, no feature gates in the client library, no Rust file over 700
# lines, every path the newcomer's documents name exists, and every
# Markdown file reads as CommonMark should (no fence left open, no heading
# in a code block, every relative link and anchor resolves). Run by
# `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

# The game crates are what the list (lockstep-games) depends on besides
# the engine: a game added to the list is checked like the others without
# a line here. As a regex of crate names, and of their Rust names.
game_crates=$(cargo tree -p lockstep-games -e normal --depth 1 --prefix none | awk 'NR > 1 {print $1}' |
  grep -vx 'lockstep-engine' | sort -u)
[ -n "$game_crates" ] || { echo "layout: lockstep-games lists no game" >&2; exit 1; }
game_names=$(tr '\n' '|' <<<"$game_crates" | sed 's/|$//')
game_idents=$(tr '-' '_' <<<"$game_names")

forbidden='sdl2|sdl2-sys|tokio|quinn|rustls|ring'
for crate in $game_crates lockstep-rng lockstep-games lockstep-engine lockstep-web; do
  found=$(cargo tree -p "$crate" -e normal --prefix none | awk '{print $1}' | grep -Ex "$forbidden|lockstep-client" | sort -u | tr '\n' ' ' || true)
  if [ -n "$found" ]; then
    echo "layout: $crate must not depend on: $found" >&2
    exit 1
  fi
done

found=$(cargo tree -p lockstep-protocol -e normal --prefix none | awk '{print $1}' | grep -Ex "$game_names|rapier2d" | sort -u | tr '\n' ' ' || true)
if [ -n "$found" ]; then
  echo "layout: lockstep-protocol must name no game, but depends on: $found" >&2
  exit 1
fi
# The server hosts whatever games its binary hands it (server/src/main.rs,
# the list lockstep-games); the library takes them as values and names none.
if named=$(grep -rnE "($game_idents|lockstep_games)\b" server/src --include='*.rs' | grep -v '^server/src/main.rs:'); then
  echo "layout: server/src names a game outside the binary's list:" >&2
  echo "$named" >&2
  exit 1
fi

# A game is one crate and a line in the list (lockstep-games): the client,
# the window, the page and the command line take the list as a value and
# name no game. Their libraries do not depend on a game crate, and their
# sources name none outside tests (what follows a file's first
# `#[cfg(test)]`, and test files) and outside the one place each takes
# the list: cli/src/main.rs, web/src/games.rs.
for crate in lockstep-client lockstep-window lockstep-cli lockstep-web; do
  found=$(cargo tree -p "$crate" -e normal --depth 1 --prefix none | awk 'NR > 1 {print $1}' |
    grep -Ex "$game_names" | sort -u | tr '\n' ' ' || true)
  if [ -n "$found" ]; then
    echo "layout: $crate must take the games as a value, but depends on: $found" >&2
    exit 1
  fi
done
named=$(for file in $(find client/src window/src web/src cli/src -name '*.rs' ! -name 'tests.rs' ! -name '*_tests.rs' | sort); do
  awk -v file="$file" -v names="($game_idents|lockstep_games)([^a-z_]|\$)" '/^#\[cfg\(test\)\]/ {exit} $0 ~ names {print file ":" FNR ": " $0}' "$file"
done | grep -Ev '^(cli/src/main\.rs|web/src/games\.rs):' || true)
if [ -n "$named" ]; then
  echo "layout: the client, the window, the page and the command line name a game outside the list:" >&2
  echo "$named" >&2
  exit 1
fi

# rapier2d's features are set once, in the workspace's Cargo.toml: a
# crate that named its own (even as a dev-dependency) would have cargo
# merge them into every build, so a test could compute other bits than
# the shipped client.
if own=$(grep -rnE --include=Cargo.toml '^\s*rapier2d\b' --exclude-dir=target --exclude-dir=fuzz . |
  grep -vE '^\./Cargo\.toml:|rapier2d\.workspace = true\s*$'); then
  echo "layout: rapier2d is declared outside [workspace.dependencies]:" >&2
  echo "$own" >&2
  exit 1
fi

# Every edge counts (normal, build and dev): what the benchmarks need of
# both ends is the crate lockstep-bench's.
for pair in lockstep-server:lockstep-client lockstep-client:lockstep-server lockstep-testkit:lockstep-client; do
  crate=${pair%%:*}
  other=${pair#*:}
  found=$(cargo tree -p "$crate" -e normal,build,dev --prefix none | awk '{print $1}' | grep -Fx "$other" || true)
  if [ -n "$found" ]; then
    echo "layout: $crate must not depend on $other, not even as a dev-dependency; it does through:" >&2
    cargo tree -p "$crate" -e normal,build,dev -i "$other" >&2
    exit 1
  fi
done

# The headless client is built in the workspace's own target directory:
# cargo keeps both builds of each crate whose features differ (a few, the
# rest is shared), and a separate directory would compile the whole tree
# again, rapier included, for minutes. It overwrites the windowed
# lockstep-client the tests run, which is put back afterwards (cargo
# only copies the binary it already has).
bin=target/debug/lockstep-client
restore() { cargo build -q --bins; }
trap restore EXIT
cargo build -q -p lockstep-cli --no-default-features --features games --bin lockstep-client
if ldd "$bin" | grep -qi sdl; then
  echo "layout: the headless client links SDL2:" >&2
  ldd "$bin" | grep -i sdl >&2
  exit 1
fi
"$bin" sim --ticks 60 | grep -q '^final tick=60 hash=' || {
  echo "layout: the headless client cannot run the offline game" >&2
  exit 1
}
if "$bin" solo 2>/dev/null; then
  echo "layout: the headless client claims to open a window" >&2
  exit 1
fi
restore
trap - EXIT
cargo run -q -p lockstep-layout

echo "layout: rapier2d's features are the workspace's alone; the games, their list and the engine are free of windowing, networking and TLS; the protocol and the server library name no game; the client, the window, the page and the command line take the games as a value; the client and the server do not depend on each other, nor the test kit on the client; the headless client links no SDL2"

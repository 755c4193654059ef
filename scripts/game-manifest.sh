# Sourced by scripts/determinism.sh and the cross scripts (through
# scripts/cross-env.sh): what they need of a game written outside the
# workspace, given its Cargo.toml. DETERMINISM.md ("Games outside the
# workspace") says the same. Such a game is one package, like
# examples/flock/, with
#
#   - its client, the bin PACKAGE-client: `lockstep_cli::main` with the
#     game first in its list, so that its `sim` plays the game by default.
#     The build matrix builds it with its default features; the cross
#     builds with --no-default-features, which must leave it headless (no
#     SDL2: examples/flock's `window` feature);
#   - its offline program, the bin PACKAGE-offline:
#     `lockstep_engine::offline_tool::main` of the game, for wasm32, where
#     the client (sockets) cannot be built;
#   - its golden table, golden-hashes.txt beside the manifest, in the
#     games' format (lockstep_engine::golden): `players seed SETTING ticks
#     hash` rows, and a "# Columns" section naming the five columns, one
#     `#   NAME  what it is` line each. The third NAME is the game's sized
#     setting: `--set NAME=` to the client, `--NAME` to the offline program.

# The games outside the workspace the scripts check when given none.
default_manifests=(examples/flock/Cargo.toml)

# manifest_args TOOL ARGS...: the `--manifest-path CARGO_TOML` options of
# ARGS (the only options the scripts take but cross.sh's), as absolute
# paths in `manifests`, or default_manifests if there are none; relative
# paths are the caller's, so call it before any cd. Anything else in ARGS
# is TOOL's usage error: prints `usage` (the caller's) and exits 2.
manifest_args() {
  local tool=$1 path
  shift
  manifests=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --manifest-path) [ $# -ge 2 ] || usage; path=$2; shift 2 ;;
      --manifest-path=*) path=${1#*=}; shift ;;
      *) usage ;;
    esac
    manifests+=("$(manifest_path "$tool" "$path")")
  done
  if [ ${#manifests[@]} -eq 0 ]; then
    for path in "${default_manifests[@]}"; do
      manifests+=("$(manifest_path "$tool" "$(dirname "${BASH_SOURCE[0]}")/../$path")")
    done
  fi
}

# manifest_path TOOL PATH: PATH made absolute, or exits 2 saying it is not
# a Cargo.toml.
manifest_path() {
  if [ "$(basename "$2")" != Cargo.toml ] || [ ! -f "$2" ]; then
    echo "$1: $2 is not a game's Cargo.toml" >&2
    exit 2
  fi
  realpath "$2"
}

# outside_game TOOL MANIFEST: reads the game of MANIFEST (absolute) into
# game_package, game_client, game_offline, game_table and game_setting,
# or exits 2 saying what is missing.
outside_game() {
  local tool=$1 manifest=$2 metadata bins columns bin
  if ! metadata=$(cargo metadata --no-deps --format-version 1 --manifest-path "$manifest" 2>&1); then
    echo "$tool: cannot read $manifest: $metadata" >&2
    exit 2
  fi
  game_package=$(jq -r --arg m "$manifest" '.packages[] | select(.manifest_path == $m) | .name' <<<"$metadata")
  if [ -z "$game_package" ]; then
    echo "$tool: $manifest is no package's manifest (a virtual workspace?)" >&2
    exit 2
  fi
  bins=" $(jq -r --arg m "$manifest" '.packages[] | select(.manifest_path == $m) | .targets[]
    | select(.kind | index("bin")) | .name' <<<"$metadata" | tr '\n' ' ')"
  game_client=$game_package-client
  game_offline=$game_package-offline
  for bin in "$game_client" "$game_offline"; do
    if [[ $bins != *" $bin "* ]]; then
      echo "$tool: $manifest has no bin $bin (its bins:${bins% }); see scripts/game-manifest.sh" >&2
      exit 2
    fi
  done
  game_table=$(dirname "$manifest")/golden-hashes.txt
  if [ ! -f "$game_table" ]; then
    echo "$tool: $game_table is missing: the golden table of $game_package sits beside its Cargo.toml" >&2
    exit 2
  fi
  columns=$(awk '/^#[[:space:]]*Columns/ {on = 1; next}
    on && /^#[[:space:]]+[A-Za-z]/ {printf "%s ", $2; if (++n == 5) exit; next}
    on {exit}' "$game_table")
  read -r -a columns <<<"$columns"
  if [ ${#columns[@]} -ne 5 ] || [ "${columns[0]} ${columns[1]}" != "players seed" ] ||
    [ "${columns[3]} ${columns[4]}" != "ticks hash" ]; then
    echo "$tool: $game_table: its '# Columns' section must name the five columns, players seed SETTING ticks hash, one '#   NAME  what it is' line each (found: ${columns[*]:-nothing})" >&2
    exit 2
  fi
  game_setting=${columns[2]}
}

# game_rows TABLE: the rows of a golden table, one `players seed setting
# ticks hash` line each, without its comments and blank lines.
game_rows() {
  grep -vE '^[[:space:]]*(#|$)' "$1" || true
}

#!/usr/bin/env bash
# scripts/deps-cache.sh restore|save DIR: the compiled dependencies of a
# cargo target directory, kept in this machine's cache (scripts/cache-env.sh)
# so that a new clone does not compile them again, the way CI services
# cache cargo's target directory between runs.
#
#   restore  fills DIR from the cache when DIR holds no build yet (a new
#            clone); a DIR already built is left as it is.
#   save     adds to the cache what DIR built that the cache lacks.
#
# The cache holds only third-party crates (crates.io's, and std where
# -Zbuild-std builds it), never this workspace's: a clone always compiles
# its own code, and cargo, which names every build by a hash of its
# inputs (version, features, profile, target, compiler), uses a cached
# build only where it would have made the same one. Deleting the cache is
# always safe. One cache per compiler: `${RUSTC:-rustc} -vV` keys it, and
# a save drops the caches of the same DIR's other compilers.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/cache-env.sh

usage() {
  echo "usage: scripts/deps-cache.sh restore|save DIR (a cargo target directory in the checkout)" >&2
  exit 2
}
[ $# -eq 2 ] || usage
action=$1
dir=${2%/}
case "$dir" in
  /*) rel=${dir#"$root"/} ;;
  *) rel=$dir ;;
esac
# A DIR outside the checkout (LOCKSTEP_CROSS_DIR and the like) is not cached.
[ "${rel:0:1}" != / ] || exit 0
compiler=$("${RUSTC:-rustc}" -vV | sha256sum | cut -c1-12)
store=$lockstep_cache/deps/$rel
cache=$store/$compiler

# The workspace's packages, and the games of examples/ built into the same
# target directories (make test's flock), whose builds never enter the
# cache.
workspace=()
for member in $(sed -n 's/^members = \[\(.*\)\]/\1/p' Cargo.toml | tr -d '",') examples/*/; do
  [ -f "$member/Cargo.toml" ] || continue
  workspace+=("$(sed -n 's/^name = "\(.*\)"/\1/p' "$member/Cargo.toml" | head -n 1)")
done
is_workspace() {
  local name
  for name in "${workspace[@]}"; do [ "$1" = "$name" ] && return 0; done
  return 1
}

# The profile directories cargo made in DIR, relative to it: those holding
# a .fingerprint (DIR itself, ".", for target/debug; release and
# <triple>/<profile> in a target directory of its own, like target/wasm).
profiles() { # DIR
  local fingerprint profile
  [ -d "$1" ] || return 0
  find "$1" -mindepth 1 -maxdepth 3 -type d -name .fingerprint | sort | while read -r fingerprint; do
    profile=${fingerprint%/.fingerprint}
    profile=${profile#"$1"}
    profile=${profile#/}
    echo "${profile:-.}"
  done
}

copy() { # FROM TO LIST: the paths LIST names (relative to FROM), with their times
  mkdir -p "$2"
  tar -C "$1" -cf - -T "$3" | tar -C "$2" -xf -
}

case "$action" in
  restore)
    [ -z "$(profiles "$dir")" ] || exit 0
    [ -d "$cache" ] || exit 0
    start=$(date +%s)
    list=$(mktemp)
    trap 'rm -f "$list"' EXIT
    (cd "$cache" && find . -mindepth 1 -maxdepth 1) >"$list"
    copy "$cache" "$dir" "$list"
    echo "deps-cache: $rel: restored $(du -sh "$dir" | cut -f1) of compiled dependencies from $cache in $(($(date +%s) - start)) s" >&2
    ;;
  save)
    start=$(date +%s)
    list=$(mktemp)
    trap 'rm -f "$list"' EXIT
    units=0
    for profile in $(profiles "$dir"); do
      hashes=()
      for fingerprint in "$dir/$profile"/.fingerprint/*-*; do
        name=${fingerprint##*/}
        is_workspace "${name%-*}" && continue
        [ -d "$cache/$profile/.fingerprint/$name" ] && continue
        hashes+=("${name##*-}")
      done
      [ ${#hashes[@]} -gt 0 ] || continue
      units=$((units + ${#hashes[@]}))
      # What a unit built first, its fingerprint last: a save cut short
      # leaves builds without a fingerprint, which cargo ignores.
      (
        cd "$dir/$profile"
        shopt -s nullglob
        for hash in "${hashes[@]}"; do
          for path in build/*-"$hash" deps/*-"$hash" deps/*-"$hash".*; do echo "$profile/$path"; done
        done
        for hash in "${hashes[@]}"; do
          for path in .fingerprint/*-"$hash"; do echo "$profile/$path"; done
        done
      ) >>"$list"
    done
    [ "$units" -gt 0 ] || exit 0
    # Other compilers' caches of this directory are of no more use.
    find "$store" -mindepth 1 -maxdepth 1 ! -name "$compiler" -exec rm -rf {} + 2>/dev/null || true
    copy "$dir" "$cache" "$list"
    echo "deps-cache: $rel: saved $units new builds of dependencies to $cache ($(du -sh "$cache" | cut -f1)) in $(($(date +%s) - start)) s" >&2
    ;;
  *) usage ;;
esac

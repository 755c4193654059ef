#!/usr/bin/env bash
# Deletes this machine's lockstep caches (scripts/cache-env.sh): the pinned
# tools and the compiled dependencies. Safe at any time but during a build;
# the next build makes again what it needs.
set -euo pipefail
source "$(dirname "$0")/cache-env.sh"
if [ ! -d "$lockstep_cache" ]; then
  echo "clean-cache: no cache at $lockstep_cache"
  exit 0
fi
size=$(du -sh "$lockstep_cache" | cut -f1)
rm -rf "$lockstep_cache"
echo "clean-cache: deleted $lockstep_cache ($size)"

# Sourced by the scripts that build: where this machine's caches live,
# outside any checkout, so that every clone on the machine shares them
# (CONTRIBUTING.md, "Caches"). Deleting the directory is always safe: what is
# missing is built again.
#
#   LOCKSTEP_CACHE  the cache directory
#                   (${XDG_CACHE_HOME:-$HOME/.cache}/lockstep)
lockstep_cache=${LOCKSTEP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lockstep}

# The pinned wasm-bindgen command line, one directory per version. The
# version must be exactly the wasm-bindgen crate's (the root Cargo.toml):
# a module made by another version is refused.
wasm_bindgen_version=0.2.130
wasm_bindgen_root=$lockstep_cache/tools/wasm-bindgen-$wasm_bindgen_version

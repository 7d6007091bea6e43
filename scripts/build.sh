#!/usr/bin/env bash
# Configures (once) and builds a preset: release (default), debug (ASan + UBSan) or tsan
# (ThreadSanitizer).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros}"
# Paths relative to the checkout, so that another clone (CI) reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# Release builds carry -g, and ccache hashes the build directory into every key of a -g compile
# unless told not to: without this, no other clone (CI, a worktree) ever hits.
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
if [ ! -f "build/$preset/build.ninja" ]; then
  cmake --preset "$preset" >/dev/null
fi
jobs="${SREH_BUILD_JOBS:-$(nproc)}"
echo "build: preset $preset, $jobs jobs"
ninja -C "build/$preset" -j "$jobs" "$@"

#!/usr/bin/env bash
# Configures (once) and builds a preset: release (default), debug (ASan + UBSan), fuzz or tsan
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
# SREH_UNITY=1 builds each library as a few unity sources (less compile time from
# scratch: what CI does); SREH_UNITY=0 goes back to one object per file (faster rebuilds of one
# file). Unset: as the build directory was configured (one object per file at first).
unity=()
case "${SREH_UNITY:-}" in
  "") ;;
  1) unity=(-DCMAKE_UNITY_BUILD=ON) ;;
  0) unity=(-DCMAKE_UNITY_BUILD=OFF) ;;
  *) echo "build: SREH_UNITY must be 0 or 1, not '$SREH_UNITY'" >&2; exit 2 ;;
esac
if [ ! -f "build/$preset/build.ninja" ] || [ ${#unity[@]} -gt 0 ]; then
  cmake --preset "$preset" "${unity[@]}" >/dev/null
fi
jobs="${SREH_BUILD_JOBS:-$(nproc)}"
echo "build: preset $preset, $jobs jobs"
ninja -C "build/$preset" -j "$jobs" "$@"

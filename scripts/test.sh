#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: installs what is missing, builds, and runs every
# test (unit, integration, e2e) with CTest. `scripts/test.sh -L unit` runs one label;
# SREH_SANITIZE=1 also builds the debug preset (ASan + UBSan) and runs the unit and integration
# tests under it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release
status=0
ctest --test-dir build/release --output-on-failure -j 2 "$@" || status=$?
if [ "${SREH_SANITIZE:-0}" = "1" ]; then
  scripts/build.sh debug sreh_unit_tests sreh_integration_tests
  ctest --test-dir build/debug --output-on-failure -j 2 -L 'unit|integration' || status=$?
fi
exit $status

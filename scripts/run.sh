#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: installs what is missing, builds, and starts a node
# on the embedded default (SQLite in ./data, in-process event bus, sandbox world, console).
# Extra arguments go to `sreh serve` (e.g. --listen 127.0.0.1:8080).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release sreh
exec build/release/app/sreh serve --config examples/configs/demo.yaml "$@"

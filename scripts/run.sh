#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: installs what is missing, builds, and starts a node
# on the embedded default (SQLite in ./data, in-process event bus, sandbox world, console).
# Extra arguments go to `sreh serve` (e.g. --listen 127.0.0.1:8080).
#
# As root it links /usr/local/bin/sreh to the build (unless a file that is not a link is there),
# so that `sreh ...` works in any shell; otherwise the banner's commands name the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release sreh
bin="$PWD/build/release/app/sreh"
link=/usr/local/bin/sreh
if [ "$(id -u)" -eq 0 ] && { [ -L "$link" ] || [ ! -e "$link" ]; }; then
  if [ "$(readlink "$link" 2>/dev/null)" != "$bin" ]; then
    ln -sfn "$bin" "$link"
    echo "run.sh: linked $link -> $bin (sreh is on PATH)"
  fi
elif [ "$(readlink -f "$(command -v sreh 2>/dev/null || echo /nonexistent)")" != "$bin" ]; then
  echo "run.sh: sreh is not on PATH; it is $bin (the banner's commands use that path)"
fi
exec "$bin" serve --config examples/configs/demo.yaml "$@"

#!/usr/bin/env bash
# Installs the Debian 12 packages sreh needs to build, test and benchmark. Idempotent: it only
# calls apt-get when something is missing. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config python3 curl
  libcaf-dev libboost-dev libboost-system-dev rapidjson-dev libspdlog-dev libfmt-dev
  libsqlite3-dev libyaml-cpp-dev libssl-dev libpqxx-dev libnats-dev postgresql nats-server
  wrk clang clang-format libclang-rt-14-dev
  prometheus prometheus-alertmanager # promtool checks /metrics; the live demo and its tests
  faketime nftables # the fault matrix's clock jumps and partition (scripts/fault-matrix.sh)
  python3-aiosmtpd # the SMTP server the notification tests deliver email to
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

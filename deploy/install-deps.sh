#!/usr/bin/env bash
# Installs every Debian 12 package that building, testing and demoing newsflow needs.
# Idempotent and non-interactive; run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build git ca-certificates python3
  librdkafka-dev libgumbo-dev libpugixml-dev prometheus-cpp-dev libcurl4-openssl-dev
  libyaml-cpp-dev libexpected-dev nlohmann-json3-dev libxxhash-dev libutf8proc-dev
  libuchardet-dev libsystemd-dev zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcivetweb-dev libcli11-dev
  clang libclang-rt-14-dev
  kcat curl clang-format
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Installs every Debian 12 package that building, testing and demoing newsflow needs.
# Idempotent and non-interactive; run as root (or with sudo available).
# `--build-only`: only what compiling the binary needs (the container image's build stage).
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build ccache git ca-certificates python3
  librdkafka-dev libgumbo-dev libpugixml-dev prometheus-cpp-dev libcurl4-openssl-dev
  libyaml-cpp-dev libexpected-dev nlohmann-json3-dev libxxhash-dev libutf8proc-dev
  libuchardet-dev libsystemd-dev zlib1g-dev libcivetweb-dev libcli11-dev libpsl-dev
  libicu-dev libcld2-dev libsimdjson-dev libisal-dev
  # WARC input: br content coding of recorded responses.
  libbrotli-dev
)
if [ "${1:-}" != "--build-only" ]; then
  packages+=(
    libgtest-dev libgmock-dev libbenchmark-dev
    clang libclang-rt-14-dev
    kcat curl clang-format
    # The WARC test records pages served from 127.0.0.1 with `wget --warc-file`.
    wget
    # The robots.txt matcher is checked against Scrapy's Protego; records against their schemas.
    python3-protego python3-jsonschema
    # Checks of the deployment files: systemd-analyze, promtool, kubectl (kustomize), the
    # status page in headless Chromium, YAML in the Kubernetes check.
    systemd prometheus python3-yaml chromium fonts-dejavu-core
    # The broker tests (ctest -L broker) run Apache Kafka 4.x on Java 17+, its jars fetched
    # once from Maven Central by tests/broker/fetch-kafka.sh.
    default-jre-headless maven
  )
  # kubectl: Debian's kubernetes-client unless one is installed already (e.g. from the
  # Kubernetes or Google Cloud apt repositories).
  command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
fi

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

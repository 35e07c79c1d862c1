#!/usr/bin/env bash
# What a backfill runs at, on one stream, in one run: replay on one core and on every core (same
# output checked), then the Kafka paths: the all-in-one daemon's backlog with the cores it used,
# and the roles' backlog with the dedup role's articles/s from a filled newsflow.extracted.
#
#   tests/bench/backfill.sh [STREAM] [BUILD_DIR] [ROUNDS]
#   (defaults: ../shared/data/dedup/dev/stream.jsonl.gz, build, 5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stream=${1:-$here/../../../shared/data/dedup/dev/stream.jsonl.gz}
build=${2:-$here/../../build}
rounds=${3:-5}
echo "== replay, --jobs 1 against --jobs $(nproc)"
"$here/replay_jobs.sh" "$stream" "$build" "$rounds" "$(nproc)"
echo "== the all-in-one daemon's backlog"
"$here/kafka_throughput.sh" all 80 "$stream" "$build"
echo "== the roles' backlog and the dedup role from a filled newsflow.extracted"
"$here/kafka_throughput.sh" roles 80 "$stream" "$build"

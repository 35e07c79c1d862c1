#!/usr/bin/env bash
# Capacity of the roles through Kafka: a stream produced to a dev broker (64 partitions), then one
# extractor until every page is handed over, then one dedup process until every article is
# published; each timed from its start (group join and, for dedup, the restore included).
# Usage: tests/bench/roles_capacity.sh [STREAM.jsonl.gz] [BUILD_DIR]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=${2:-$src/build}/newsflow
work=$(mktemp -d)
fail() { echo "FAIL $*"; exit 1; }
stop_signal=TERM
source $src/tests/integration/lib.sh
stream=${1:-$src/../shared/data/dedup/dev/stream.jsonl.gz}
start_dev_broker --brokers 1 --partitions 64
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_LOG__LEVEL=${NEWSFLOW_LOG__LEVEL:-warn} NEWSFLOW_HTTP__LISTEN=127.0.0.1:0
n=$($bin produce --input $stream)
count() { kcat -b "$broker" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | grep -v '^$' | sort -u | wc -l; }
t0=$(date +%s.%N)
$bin run --role extract > $work/x.log 2>&1 & x=$!
until [ "$(count newsflow.extracted)" -ge "$n" ]; do sleep 0.5; done
t1=$(date +%s.%N)
kill -TERM $x; wait $x || true
$bin run --role dedup > $work/d.log 2>&1 & d=$!
until [ "$(count newsflow.articles)" -ge "$n" ]; do sleep 0.5; done
t2=$(date +%s.%N)
kill -TERM $d; wait $d || true
# The dedup process's own pace: from its first to its last article record (joins excluded).
span=$(kcat -b "$broker" -C -t newsflow.articles -e -q -f '%T\n' 2>/dev/null |
  awk 'NF { if (!lo || $1 < lo) lo = $1; if ($1 > hi) hi = $1 } END { print (hi - lo) / 1000 }')
awk -v n=$n -v a=$t0 -v b=$t1 -v c=$t2 -v s=$span 'BEGIN { printf "inputs %d: one extractor %.1f s (%.0f pages/s incl. group join), then one dedup %.1f s (%.0f articles/s incl. restore and group join; %.0f articles/s from its first to its last article)\n", n, b-a, n/(b-a), c-b, n/(c-b), n/s }'
[ -n "${KEEP:-}" ] && echo "logs: $work" || rm -rf "$work"

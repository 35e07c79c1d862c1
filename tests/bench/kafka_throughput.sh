#!/usr/bin/env bash
# Throughput and latency through Kafka, on the paths users run: a dev broker (64 partitions),
# the dev stream (1,575 pages), and either one `newsflow run` (role all) or two `--role extract`
# and one `--role dedup` (plus a standby with --standby).
#   backlog: every page produced first, then the processes start; pages/s from their start to
#            the last article acknowledged (group joins included).
#   latency: the processes run first, the pages come at RATE per second (`produce --rate`,
#            each with a produced_at header); per article, the time from its page's produce to
#            the article record's timestamp (the daemon produces it and waits for the ack).
# Usage: tests/bench/kafka_throughput.sh all|roles RATE [STREAM] [BUILD_DIR] [--standby]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
mode=$1; rate=$2
stream=${3:-$src/../shared/data/dedup/dev/stream.jsonl.gz}
bin=${4:-$src/build}/newsflow
work=$(mktemp -d)
fail() { echo "FAIL $*" >&2; tail -5 "$work"/*.log >&2; exit 1; }
stop_signal=TERM
source "$src/tests/integration/lib.sh"
export NEWSFLOW_LOG__LEVEL=warn NEWSFLOW_HTTP__LISTEN=127.0.0.1:0
count() { kcat -b "$broker" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | grep -v '^$' | sort -u | wc -l; }
procs=()
start_processes() {
  procs=()
  if [ "$mode" = all ]; then
    "$bin" run > "$work/all.log" 2>&1 & procs+=($!)
  else
    "$bin" run --role dedup > "$work/dedup.log" 2>&1 & procs+=($!)
    if [ "${5:-}" = --standby ]; then "$bin" run --role dedup > "$work/standby.log" 2>&1 & procs+=($!); fi
    "$bin" run --role extract > "$work/x1.log" 2>&1 & procs+=($!)
    "$bin" run --role extract > "$work/x2.log" 2>&1 & procs+=($!)
  fi
}
stop_processes() {
  for p in "${procs[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${procs[@]}"; do wait "$p" 2>/dev/null || true; done
}
wait_articles() {
  for _ in $(seq 1200); do
    [ "$(count newsflow.articles)" -ge "$1" ] && return 0
    sleep 0.5
  done
  fail "only $(count newsflow.articles) of $1 articles"
}

# Backlog.
start_dev_broker --brokers 1 --partitions 64
export NEWSFLOW_KAFKA__BROKERS=$broker
n=$("$bin" produce --input "$stream")
t0=$(date +%s.%N)
start_processes "$@"
wait_articles "$n"
t1=$(date +%s.%N)
stop_processes
kill -TERM "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true; pids=()
rm -f "$work/bootstrap"

# Latency at a steady rate.
start_dev_broker --brokers 1 --partitions 64
export NEWSFLOW_KAFKA__BROKERS=$broker
start_processes "$@"
sleep 8  # group joins, restores
"$bin" produce --input "$stream" --rate "$rate" > /dev/null
wait_articles "$n"
stop_processes
kcat -b "$broker" -C -t newsflow.pages -e -q -f '%h\n' > "$work/pages.txt" 2>/dev/null
kcat -b "$broker" -C -t newsflow.articles -e -q -f '%k\t%T\n' > "$work/articles.txt" 2>/dev/null
python3 - "$work/pages.txt" "$work/articles.txt" "$mode" "$n" "$t0" "$t1" "$rate" <<'EOF'
import sys
pages, articles, mode, n, t0, t1, rate = sys.argv[1:]
sent = {}
for line in open(pages):
    h = dict(kv.split("=", 1) for kv in line.strip().split(",") if "=" in kv)
    if "id" in h and "produced_at" in h:
        sent[h["id"]] = int(h["produced_at"])
first = {}
for line in open(articles):
    k, _, t = line.rstrip("\n").partition("\t")
    if k in sent and k not in first:
        first[k] = int(t)
lat = sorted(first[k] - sent[k] for k in first)
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] / 1000
secs = float(t1) - float(t0)
print(f"{mode}: backlog {n} pages in {secs:.1f} s = {int(n) / secs:.0f} pages/s; "
      f"at {rate} pages/s: {len(lat)} articles, latency p50 {q(0.5):.2f} s, p99 {q(0.99):.2f} s, "
      f"max {lat[-1] / 1000:.2f} s")
EOF
rm -rf "$work"

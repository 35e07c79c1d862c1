#!/usr/bin/env bash
# Issue 49's check, run the way users run newsflow, on a real Apache Kafka (the broker tests'
# pinned 4.x, one KRaft node started here by tests/broker/start-broker.sh):
#   1. kafka.delivery exactly_once. FIRST inputs (default 3,000) produced at RATE a second
#      (`produce --rate`) while one `newsflow run` is SIGKILLed KILLS times (default 4), each
#      time a second after it is ready again, and restarted at once; then it runs to the end.
#      Read with read_committed: no input lost, no article id and no dead letter published
#      twice, every verdict equal to `replay` of the same inputs, each restart ready within
#      READY_LIMIT seconds (default 3).
#   2. The changelog compacted by the broker (its tombstones kept), then MORE inputs (default
#      600) produced at RATE to a restarted daemon: every verdict equal to `replay` of all
#      FIRST + MORE inputs.
#   3. A restart once everything is done is ready and consumes nothing.
#   4. Latency at a steady rate: per article of phase 1 and 2, the time from its page's produce
#      (the produced_at header) to the article record's timestamp (p50, p99, max); in phase 1
#      the kills are in it.
# The inputs: the dedup dev stream's pages with the sample feed and text items copying every
# fifth article (tests/integration/mixed_stream.py), then the stories dev stream's text items,
# in event-time order; pages over the broker's message.max.bytes (1 MiB) are left out. The dedup
# owner snapshots every SNAPSHOT articles (default 500), so the changelog holds tombstones.
# Usage: tests/bench/kafka_broker_kills.sh [BUILD_DIR] [RATE] [FIRST] [MORE] [KILLS]
# Prints one line per phase and "passed" or "FAIL ..." (exit 1).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "${1:-$src/build}" && pwd)/newsflow
rate=${2:-150} first_n=${3:-3000} more_n=${4:-600} kills=${5:-4}
ready_limit=${READY_LIMIT:-3} snapshot=${SNAPSHOT:-500}
data=$src/../shared/data
build=$(mktemp -d)
work=$build/kills
mkdir -p "$work"
fail() { echo "FAIL $*" >&2; tail -n 3 "$work"/*.log >&2 || true; exit 1; }
"$src/tests/broker/start-broker.sh" "$build/kafka-broker" > /dev/null
trap '"$src/tests/broker/stop-broker.sh" "$build/kafka-broker" > /dev/null; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$build"' EXIT
source "$src/tests/broker/lib.sh"
trap 'cleanup; "$src/tests/broker/stop-broker.sh" "$build/kafka-broker" > /dev/null; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$build"' EXIT
export NEWSFLOW_KAFKA__DELIVERY=exactly_once NEWSFLOW_KAFKA__STATE_SNAPSHOT_ARTICLES=$snapshot
port=$(free_port); export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
partitions=4 state_partitions=4

# The inputs, in event-time order, and their references.
"$bin" replay --input "$data/dedup/dev/stream.jsonl.gz" --output "$work/pages.jsonl" --quiet
python3 "$src/tests/integration/mixed_stream.py" "$data/dedup/dev/stream.jsonl.gz" \
  "$src/samples/feeds.jsonl.gz" "$work/pages.jsonl" "$work/mixed.jsonl"
{ cat "$work/mixed.jsonl"; zcat "$data/stories/dev/stream.jsonl.gz"; } |
  LC_ALL=C awk 'length($0) < 1000000' > "$work/all-lines.jsonl"
head -n "$first_n" "$work/all-lines.jsonl" > "$work/first.jsonl"
head -n $((first_n + more_n)) "$work/all-lines.jsonl" > "$work/all.jsonl"
tail -n +$((first_n + 1)) "$work/all.jsonl" > "$work/more.jsonl"
[ "$(wc -l < "$work/all.jsonl")" -eq $((first_n + more_n)) ] ||
  fail "only $(wc -l < "$work/all.jsonl") inputs, not $((first_n + more_n))"
for part in first all; do
  "$bin" replay --input "$work/$part.jsonl" --output "$work/$part.replay.jsonl" \
    --dlq "$work/$part.replay.dlq.jsonl" --quiet
done
want_first=$(wc -l < "$work/first.replay.jsonl") dlq_first=$(wc -l < "$work/first.replay.dlq.jsonl")
want_all=$(wc -l < "$work/all.replay.jsonl") dlq_all=$(wc -l < "$work/all.replay.dlq.jsonl")

"$bin" create-topics --partitions $partitions > "$work/topics.txt" ||
  fail "create-topics: $(cat "$work/topics.txt")"

# start LOG: `newsflow run` started (log LOG); waits until it is ready, sets pid and ready (s).
start() {
  local t0
  t0=$(date +%s.%N)
  "$bin" run > "$1" 2>&1 &
  pid=$!; pids+=($pid)
  wait_ready 60 $pid "$1"
  ready=$(since "$t0")
}
# finish ARTICLES DEAD_LETTERS: waits until the topics hold that many distinct ids, then stops
# the daemon (SIGTERM).
finish() {
  for _ in $(seq 600); do
    [ "$(distinct articles)" -ge "$1" ] && [ "$(distinct dlq)" -ge "$2" ] && break
    kill -0 $pid 2>/dev/null || fail "the daemon exited"
    sleep 0.5
  done
  kill -TERM $pid; wait $pid || fail "the daemon did not exit cleanly"
}
# check WANT DLQ REPLAY: the committed topics against the replay: nothing lost, nothing twice,
# the same verdicts. Sets `checked` (not run in a subshell: `fail` must end the script).
check() {
  local keys total
  keys=$(distinct articles) total=$(records articles)
  [ "$keys" -eq "$1" ] || fail "$keys distinct articles of $1"
  [ "$total" -eq "$keys" ] || fail "$((total - keys)) article records repeat an id"
  [ "$(distinct dlq)" -eq "$2" ] || fail "$(distinct dlq) distinct dead letters of $2"
  [ "$(records dlq)" -eq "$2" ] || fail "$(records dlq) dead-letter records for $2"
  values articles > "$work/kafka.jsonl"
  python3 "$src/tests/integration/compare_runs.py" "$3" "$work/kafka.jsonl" \
    --min-dup-f1 1.0 --min-bcubed 1.0 --min-same-verdict 1.0 > "$work/compare.txt" ||
    fail "verdicts differ from replay: $(cat "$work/compare.txt")"
  checked="$keys articles and $2 dead letters, each once; $(tail -n 1 "$work/compare.txt")"
}
# latency FROM_ID_FILE: p50, p99 and max seconds from each input's produce to its article.
latency() {
  kcat -b "$broker" -C -t "$(topic pages)" -e -q -f '%h\n' > "$work/sent.txt" 2>/dev/null
  kcat -b "$broker" -C -t "$(topic articles)" -e -q -X isolation.level=read_committed \
    -f '%k\t%T\n' > "$work/published.txt" 2>/dev/null
  python3 - "$work/sent.txt" "$work/published.txt" "$1" <<'EOF'
import json, sys
sent = {}
for line in open(sys.argv[1]):
    h = dict(kv.split("=", 1) for kv in line.strip().split(",") if "=" in kv)
    if "id" in h and "produced_at" in h:
        sent[h["id"]] = int(h["produced_at"])
ids = {json.loads(l)["id"] for l in open(sys.argv[3]) if l.strip()}
lat = []
for line in open(sys.argv[2]):
    k, _, t = line.rstrip("\n").partition("\t")
    if k in ids and k in sent:
        lat.append(int(t) - sent[k])
lat.sort()
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] / 1000
print(f"latency of {len(lat)} pages' articles: p50 {q(0.5):.2f} s, p99 {q(0.99):.2f} s, "
      f"max {lat[-1] / 1000:.2f} s")
EOF
}

# 1. Paced, killed KILLS times.
start "$work/run0.log"
"$bin" produce --input "$work/first.jsonl" --rate "$rate" --quiet > "$work/produce1.txt" 2>&1 &
producer=$!
readies=()
for k in $(seq "$kills"); do
  sleep 1
  kill -0 $producer 2>/dev/null || fail "the inputs were all produced before kill $k: raise FIRST"
  kill -KILL $pid; wait $pid 2>/dev/null || true
  start "$work/run$k.log"
  readies+=("$ready")
done
wait $producer || fail "produce: $(cat "$work/produce1.txt")"
finish "$want_first" "$dlq_first"
check "$want_first" "$dlq_first" "$work/first.replay.jsonl"
echo "phase 1 (exactly_once, $first_n inputs at $rate/s, $kills SIGKILLs a second after ready):" \
  "$checked; ready again in ${readies[*]} s"
for r in "${readies[@]}"; do
  python3 -c "import sys; sys.exit(float('$r') > float('$ready_limit'))" ||
    fail "a restart took $r s to be ready (limit $ready_limit)"
done
latency "$work/first.replay.jsonl"

# 2. The changelog compacted, then MORE inputs.
topic_config state segment.ms=100 min.cleanable.dirty.ratio=0 delete.retention.ms=600000 \
  > "$work/state-config.txt"
compacted=$(cleaned)
start "$work/more.log"
grep -q '"state_snapshot_loaded"' "$work/more.log" || fail "the restore loaded no snapshot"
"$bin" produce --input "$work/more.jsonl" --rate "$rate" --quiet > "$work/produce2.txt" 2>&1 ||
  fail "produce: $(cat "$work/produce2.txt")"
finish "$want_all" "$dlq_all"
check "$want_all" "$dlq_all" "$work/all.replay.jsonl"
echo "phase 2 (the changelog compacted: $compacted; ready in $ready s; $more_n more inputs):" \
  "$checked"
latency "$work/more.jsonl"

# 3. Nothing left.
check_nothing_left
echo "phase 3: a restart once all is done is ready and consumes nothing"
echo "passed"

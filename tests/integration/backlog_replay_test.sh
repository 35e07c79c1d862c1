#!/usr/bin/env bash
# A backlog through Kafka gives the verdicts `replay` gives: the whole stream is produced to a
# dev broker (64 partitions, in its own process) before one `newsflow run` starts, as after an
# outage, a new consumer group or a backfill. Duplicate groups and stories of the articles topic
# are compared with `newsflow replay` of the same stream. The pages are the dev dedup stream of
# ../shared (14 days, 1,575 pages) when it is there, else the committed sample pages; a feed and
# text items join them (mixed_stream.py).
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/backlog_replay
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/run.log >&2 || true; exit 1; }
source "$src/tests/integration/lib.sh"

pages=$src/../shared/data/dedup/dev/stream.jsonl.gz
[ -f "$pages" ] || pages=$src/samples/pages.jsonl.gz
echo "pages: $pages"
# Every input kind: the pages, the sample feed with full-text items, and text items (copies of
# every fifth article under new ids, as a news API delivers them).
"$bin" replay --input "$pages" --output "$work/pages.jsonl" --dlq "$work/pages.dlq.jsonl"
stream=$work/stream.jsonl
python3 "$src/tests/integration/mixed_stream.py" "$pages" "$src/samples/feeds.jsonl.gz" \
  "$work/pages.jsonl" "$stream"

"$bin" replay --input "$stream" --output "$work/replay.jsonl" --dlq "$work/replay.dlq.jsonl"

start_dev_broker --brokers 1 --partitions 64
port=$(free_port)
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
export NEWSFLOW_LOG__LEVEL=info NEWSFLOW_LOG__FORMAT=json
inputs=$("$bin" produce --input "$stream")
expected=$(wc -l < "$work/replay.jsonl")

"$bin" run > "$work/run.log" 2>&1 &
pid=$!; pids+=($pid)
count() { kcat -b "$broker" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | sort -u | wc -l; }
for _ in $(seq 300); do
  [ "$(count newsflow.articles)" -ge "$expected" ] && break
  kill -0 $pid 2>/dev/null || fail "the daemon exited"
  sleep 1
done
kill -TERM $pid; wait $pid || fail "the daemon did not exit cleanly"
kcat -b "$broker" -C -t newsflow.articles -e -q -f '%s\n' > "$work/kafka.jsonl" 2>/dev/null
echo "inputs=$inputs replay_articles=$expected kafka_records=$(wc -l < "$work/kafka.jsonl")"
python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
  --min-dup-f1 0.995 --min-bcubed 0.99 --min-same-verdict 0.99 || fail "the backlog's verdicts differ from replay's"
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# Both delivery modes end to end on a real Apache Kafka (at_least_once, the shipped default;
# exactly_once with EXACTLY_ONCE=1, every output in the batch's transaction): the topics created by
# `newsflow create-topics` (auto-creation is off on the broker), the sample pages, a feed, text
# items and three poison messages produced as a crawler would, one `newsflow run` until every
# input is done. Every article published, the poison messages dead letters, every verdict equal
# to an uninterrupted `replay` of the same stream, and the input offsets committed (a restart
# consumes nothing). exactly_once also publishes each article and dead letter once (as read with
# isolation.level=read_committed).
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; build=$2; work=$2/broker_end_to_end${EXACTLY_ONCE:+_exactly_once}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/*.log >&2 || true; exit 1; }
source "$src/tests/broker/lib.sh"

[ -n "${EXACTLY_ONCE:-}" ] && export NEWSFLOW_KAFKA__DELIVERY=exactly_once
reference_stream "$src/samples/pages.jsonl.gz"
"$bin" create-topics --partitions 4 > "$work/topics.txt" || fail "create-topics: $(cat "$work/topics.txt")"
inputs=$("$bin" produce --input "$work/stream.jsonl" --poison --quiet)
port=$(free_port); export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port

t0=$(date +%s.%N)
"$bin" run > "$work/run.log" 2>&1 &
pid=$!; pids+=($pid)
wait_ready 30 $pid "$work/run.log"
ready=$(since "$t0")
for _ in $(seq 120); do
  [ "$(distinct articles)" -ge "$expected" ] && [ "$(distinct dlq)" -ge 3 ] && break
  kill -0 $pid 2>/dev/null || fail "the daemon exited"
  sleep 0.5
done
done_s=$(since "$t0")
kill -TERM $pid; wait $pid || fail "the daemon did not exit cleanly"
keys=$(distinct articles); dlq=$(records dlq)
echo "inputs=$inputs replay_articles=$expected distinct_article_keys=$keys article_records=$(records articles) dead_letters=$dlq stories=$(distinct stories) ready_s=$ready all_published_s=$done_s"
[ "$keys" -eq "$expected" ] || fail "lost: $((expected - keys)) articles"
[ "$dlq" -eq 3 ] || fail "expected the 3 poison messages in the DLQ, found $dlq"
if [ -n "${EXACTLY_ONCE:-}" ]; then
  [ "$(records articles)" -eq "$keys" ] || fail "$(($(records articles) - keys)) articles published twice"
  grep -q '"transactions_initialized"' "$work/run.log" || fail "no transactions"
fi
compare_with_replay
check_nothing_left
echo "1 passed, 0 failed"

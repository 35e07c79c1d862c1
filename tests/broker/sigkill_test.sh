#!/usr/bin/env bash
# SIGKILL and restart on a real Apache Kafka: copies of the sample pages with a feed, text items
# and three poison messages produced as a backlog, one `newsflow run` SIGKILLed twice while it
# publishes and restarted at once (static membership: the restart takes its partitions back
# without waiting out the killed member's session), then run to the end. Nothing lost, every
# verdict equal to an uninterrupted `replay`, the offsets resumed (a last restart consumes
# nothing). With EXACTLY_ONCE=1 (kafka.delivery exactly_once, read with read_committed): also
# no article id and no dead letter published twice.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; build=$2; work=$2/broker_sigkill${EXACTLY_ONCE:+_exactly_once}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/*.log >&2 || true; exit 1; }
source "$src/tests/broker/lib.sh"
[ -n "${EXACTLY_ONCE:-}" ] && export NEWSFLOW_KAFKA__DELIVERY=exactly_once
# Small batches: many batches (transactions) to be killed among.
export NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=25
port=$(free_port); export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port

python3 "$src/tests/broker/copies.py" "$src/samples/pages.jsonl.gz" "${BROKER_COPIES:-24}" \
  "$work/input.jsonl"
reference_stream "$work/input.jsonl"
"$bin" create-topics --partitions 4 > "$work/topics.txt" || fail "create-topics: $(cat "$work/topics.txt")"
inputs=$("$bin" produce --input "$work/stream.jsonl" --poison --quiet)

produced="topic=\"$(topic articles)\""
timings=()
for round in 1 2; do
  t0=$(date +%s.%N)
  "$bin" run > "$work/run$round.log" 2>&1 &
  pid=$!; pids+=($pid)
  wait_ready 30 $pid "$work/run$round.log"
  ready=$(since "$t0")
  # Killed in the middle of its work: once it has published a fifth of the articles (counting
  # those it judges again).
  first=""
  for _ in $(seq 600); do
    published=$(metric newsflow_messages_produced_total "$produced")
    [ -z "$first" ] && [ "$published" -gt 0 ] && first=$(since "$t0")
    [ "$published" -ge $((expected / 5)) ] && break
    kill -0 $pid 2>/dev/null || fail "the daemon exited"
    sleep 0.05
  done
  [ -n "$first" ] || fail "round $round published nothing"
  kill -KILL $pid; wait $pid 2>/dev/null || true
  timings+=("ready ${ready}s, first article ${first}s")
  echo "after kill $round: $(distinct articles) distinct article keys, $(records articles) records (ready ${ready} s, first article ${first} s after its start)"
done

t0=$(date +%s.%N)
"$bin" run > "$work/final.log" 2>&1 &
pid=$!; pids+=($pid)
wait_ready 30 $pid "$work/final.log"
timings+=("final ready $(since "$t0")s")
for _ in $(seq 360); do
  [ "$(distinct articles)" -ge "$expected" ] && [ "$(distinct dlq)" -ge 3 ] && break
  kill -0 $pid 2>/dev/null || fail "the daemon exited"
  sleep 0.5
done
kill -TERM $pid; wait $pid || fail "the final daemon did not exit cleanly"
keys=$(distinct articles); total=$(records articles); dlq=$(records dlq)
echo "inputs=$inputs replay_articles=$expected distinct_article_keys=$keys article_records=$total dead_letters=$dlq restarts: ${timings[*]}"
[ "$keys" -eq "$expected" ] || fail "lost: $((expected - keys)) articles"
[ "$(distinct dlq)" -eq 3 ] || fail "expected the 3 poison messages in the DLQ, found $(distinct dlq)"
if [ -n "${EXACTLY_ONCE:-}" ]; then
  keys articles | sort | uniq -d > "$work/doubled.txt"
  [ "$total" -eq "$keys" ] ||
    fail "$((total - keys)) article records repeat an id ($(wc -l < "$work/doubled.txt") ids, e.g. $(head -n 1 "$work/doubled.txt"))"
  [ "$dlq" -eq 3 ] || fail "$dlq dead-letter records for the 3 poison messages"
fi
compare_with_replay
check_nothing_left
echo "1 passed, 0 failed"

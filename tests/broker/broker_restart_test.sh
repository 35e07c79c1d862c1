#!/usr/bin/env bash
# The broker stopped and started again mid-stream, on a real Apache Kafka: copies of the sample
# pages with a feed, text items and three poison messages produced as a backlog, one `newsflow
# run` judging them; once it has published a fifth of the articles the broker is stopped
# (SIGTERM, its data kept), stays down 10 s while the daemon runs on, and is started again on the
# same data and port. The daemon goes on to the end: nothing lost, every verdict equal to an
# uninterrupted `replay`, the offsets committed (a restart consumes nothing). With EXACTLY_ONCE=1
# (read with read_committed) also no article id or dead letter published twice. A daemon that
# exits non-zero after the broker is back is started again at once, as systemd's
# Restart=on-failure does (at most twice; each restart is reported): on Kafka 4.1.1 its consumer
# was sometimes fenced as a static member (FENCED_INSTANCE_ID) when the broker came back, although
# no other process shares its group.instance.id.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; build=$2; work=$2/broker_restart${EXACTLY_ONCE:+_exactly_once}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/*.log >&2 || true; exit 1; }
source "$src/tests/broker/lib.sh"
[ -n "${EXACTLY_ONCE:-}" ] && export NEWSFLOW_KAFKA__DELIVERY=exactly_once
# Small batches: the outage falls among many of them, some in flight.
export NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=25
port=$(free_port); export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port

python3 "$src/tests/broker/copies.py" "$src/samples/pages.jsonl.gz" "${BROKER_COPIES:-16}" \
  "$work/input.jsonl"
reference_stream "$work/input.jsonl"
"$bin" create-topics --partitions 4 > "$work/topics.txt" || fail "create-topics: $(cat "$work/topics.txt")"
inputs=$("$bin" produce --input "$work/stream.jsonl" --poison --quiet)

t0=$(date +%s.%N)
"$bin" run > "$work/run.log" 2>&1 &
pid=$!; pids+=($pid)
wait_ready 30 $pid "$work/run.log"
produced="topic=\"$(topic articles)\""
for _ in $(seq 600); do
  [ "$(metric newsflow_messages_produced_total "$produced")" -ge $((expected / 5)) ] && break
  kill -0 $pid 2>/dev/null || fail "the daemon exited"
  sleep 0.05
done
before=$(metric newsflow_messages_produced_total "$produced")
down_at=$(since "$t0")
broker_down
sleep 10
kill -0 $pid 2>/dev/null || fail "the daemon exited while the broker was down: $(tail -n 3 "$work/run.log")"
restarts=()
t1=$(date +%s.%N)
broker_up > "$work/broker-up.txt"
up=$(since "$t1")
after_up=$(metric newsflow_messages_produced_total "$produced")
for _ in $(seq 240); do
  [ "$(distinct articles)" -ge "$expected" ] && [ "$(distinct dlq)" -ge 3 ] && break
  if ! kill -0 $pid 2>/dev/null; then
    status=0; wait $pid || status=$?
    [ "$status" -ne 0 ] || fail "the daemon exited 0 by itself"
    [ "${#restarts[@]}" -lt 2 ] || fail "the daemon exited $status a third time after the broker came back"
    log=$work/run$((${#restarts[@]} + 2)).log
    why=$({ grep -ho '"event":"consumer_fenced"\|"event":"consumer_fatal"\|"event":"producer_fatal"\|"event":"transactional_producer_wedged"' "$work"/run*.log || true; } | tail -n 1 | cut -d'"' -f4)
    restarts+=("exit $status (${why:-?}) $(since "$t1") s after the broker was started again")
    "$bin" run > "$log" 2>&1 &
    pid=$!; pids+=($pid)
  fi
  sleep 0.5
done
all=$(since "$t1")
kill -TERM $pid; wait $pid || fail "the daemon did not exit cleanly"
keys=$(distinct articles); total=$(records articles); dlq=$(records dlq)
failures=$(cat "$work"/run*.log | grep -c '"batch_not_delivered"\|"transaction_commit_failed"\|"commit_failed"' || true)
echo "inputs=$inputs replay_articles=$expected distinct_article_keys=$keys article_records=$total dead_letters=$dlq; broker stopped ${down_at} s after the start with $before articles acknowledged, down 10 s, back in ${up} s ($after_up acknowledged then), every article ${all} s after it was started again; $failures failure lines in the log; daemon restarts: ${#restarts[@]} ${restarts[*]}"
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

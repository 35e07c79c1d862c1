#!/usr/bin/env bash
# Standby takeover on a real Apache Kafka: a `--role dedup` owner, a hot standby following the
# state changelog and one `--role extract`, while a live stream (copies of the sample pages with a
# feed, text items and three poison messages, `produce --rate`) comes in. A third of the way
# in, the owner is SIGKILLed: the standby gets the lease once the killed owner's lease session
# (6 s, the least a stock broker accepts) has expired, catches up on the changelog and judges the
# rest. Read with read_committed: nothing lost, the verdicts of an uninterrupted `replay` (the
# same for at least 99% of the articles: the stream is live, see below), each article at most
# twice (the killed owner's unacknowledged batches are judged again) and, with EXACTLY_ONCE=1
# (kafka.delivery exactly_once: the new owner's init_transactions aborts the old owner's open
# transaction), no article id and no dead letter published twice. A restart of both
# roles then consumes nothing. Prints the time from the kill to the standby's first acknowledged
# article and its catch-up.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; build=$2; work=$2/broker_standby${EXACTLY_ONCE:+_exactly_once}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "== $f" >&2; tail -n 5 "$f" >&2; done; exit 1; }
source "$src/tests/broker/lib.sh"
[ -n "${EXACTLY_ONCE:-}" ] && export NEWSFLOW_KAFKA__DELIVERY=exactly_once
# Small batches: many batches (transactions) for the kill to fall among.
export NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=25

python3 "$src/tests/broker/copies.py" "$src/samples/pages.jsonl.gz" "${BROKER_COPIES:-20}" \
  "$work/input.jsonl"
reference_stream "$work/input.jsonl"
"$bin" create-topics --partitions 4 > "$work/topics.txt" || fail "create-topics: $(cat "$work/topics.txt")"

# start NAME ROLE: `newsflow run --role ROLE` with its metrics on a port of its own (in
# port_NAME) and its pid in pid_NAME. The dedup processes share the transactional id (a new
# owner fences the old one); the extractor has its own.
start() {
  local p txn=$NEWSFLOW_KAFKA__TRANSACTIONAL_ID
  p=$(free_port)
  [ "$2" = extract ] && txn=$txn-$1
  NEWSFLOW_HTTP__LISTEN=127.0.0.1:$p NEWSFLOW_KAFKA__GROUP_INSTANCE_ID=$1 \
    NEWSFLOW_KAFKA__TRANSACTIONAL_ID=$txn "$bin" run --role "$2" > "$work/$1.log" 2>&1 &
  pids+=($!)
  printf -v "pid_$1" %s $!
  printf -v "port_$1" %s "$p"
}
# on NAME CMD...: CMD (metric) against NAME's metrics.
on() { local port_var=port_$1; local port=${!port_var}; shift; "$@"; }
# wait_log SECONDS NAME EVENT: waits for EVENT in NAME's log while NAME runs.
wait_log() {
  local pid_var=pid_$2
  for _ in $(seq $(($1 * 10))); do
    grep -q "\"$3\"" "$work/$2.log" 2>/dev/null && return 0
    kill -0 "${!pid_var}" 2>/dev/null || fail "$2 exited before $3: $(tail -n 3 "$work/$2.log")"
    sleep 0.1
  done
  fail "$2 logged no $3 within $1 s"
}
articles_label="topic=\"$(topic articles)\""

start owner dedup
wait_log 30 owner dedup_lease_acquired
start standby dedup
wait_log 30 standby dedup_standby
wait_log 30 standby daemon_ready
start x1 extract
wait_log 30 x1 daemon_ready

# The live stream, paced so that it runs on well past the takeover.
"$bin" produce --input "$work/stream.jsonl" --poison --rate "${BROKER_RATE:-30}" --quiet \
  > "$work/produced.txt" 2> "$work/produce.log" &
producer=$!; pids+=($producer)
t_stream=$(date +%s.%N)
for _ in $(seq 1200); do
  [ "$(on owner metric newsflow_messages_produced_total "$articles_label")" -ge $((expected / 3)) ] &&
    break
  kill -0 "$pid_owner" 2>/dev/null || fail "the owner exited"
  sleep 0.05
done
by_owner=$(on owner metric newsflow_messages_produced_total "$articles_label")
[ "$by_owner" -ge $((expected / 3)) ] || fail "the owner published only $by_owner articles in 60 s"
lag=$(on standby metric newsflow_standby_lag_records)
t_kill=$(date +%s.%N)
kill -KILL "$pid_owner"; wait "$pid_owner" 2>/dev/null || true
killed_at=$(python3 -c "print(f'{$t_kill - $t_stream:.1f}')")
takeover=""
for _ in $(seq 1200); do
  if [ "$(on standby metric newsflow_messages_produced_total "$articles_label")" -gt 0 ]; then
    takeover=$(since "$t_kill"); break
  fi
  kill -0 "$pid_standby" 2>/dev/null || fail "the standby exited"
  sleep 0.05
done
[ -n "$takeover" ] || fail "the standby published nothing within 60 s of the kill"
acquired=$(grep -m 1 '"dedup_lease_acquired"' "$work/standby.log")

wait "$producer" || fail "produce failed: $(cat "$work/produce.log")"
inputs=$(cat "$work/produced.txt")
streamed=$(since "$t_stream")
for _ in $(seq 240); do
  [ "$(distinct articles)" -ge "$expected" ] && [ "$(distinct dlq)" -ge 3 ] && break
  kill -0 "$pid_standby" 2>/dev/null || fail "the new owner exited"
  sleep 0.5
done
for name in standby x1; do
  pid_var=pid_$name
  kill -TERM "${!pid_var}"; wait "${!pid_var}" || fail "$name did not exit cleanly"
done

keys=$(distinct articles); total=$(records articles); dlq=$(records dlq)
keys articles | sort | uniq -c | awk '$1 > 1 {print $1, $2}' > "$work/repeated.txt"
most=$(awk 'BEGIN {m = 1} $1 > m {m = $1} END {print m}' "$work/repeated.txt")
echo "inputs=$inputs replay_articles=$expected distinct_article_keys=$keys article_records=$total" \
  "repeated_ids=$(wc -l < "$work/repeated.txt") dead_letters=$dlq; the owner published" \
  "$by_owner articles and was killed ${killed_at} s into the stream (standby lag $lag records);" \
  "kill to the standby's first acknowledged article ${takeover} s; takeover" \
  "(catch-up $(value_of "$acquired" catch_up_seconds) s, $(value_of "$acquired" caught_up_records)" \
  "records caught up, $(value_of "$acquired" uncommitted_dropped) uncommitted dropped) done in" \
  "$(value_of "$acquired" seconds) s; stream of ${streamed} s"
[ "$keys" -eq "$expected" ] || fail "lost: $((expected - keys)) articles"
[ "$(distinct dlq)" -eq 3 ] || fail "expected the 3 poison messages in the DLQ, found $(distinct dlq)"
grep -q '"dedup_lease_acquired"' "$work/standby.log" || fail "the standby never took the lease"
if [ -n "${EXACTLY_ONCE:-}" ]; then
  [ "$total" -eq "$keys" ] ||
    fail "$((total - keys)) article records repeat an id ($(wc -l < "$work/repeated.txt") ids, e.g. $(head -n 1 "$work/repeated.txt"))"
  [ "$dlq" -eq 3 ] || fail "$dlq dead-letter records for the 3 poison messages"
else
  # One takeover: what the killed owner published and did not commit is published once more.
  [ "$most" -le 2 ] || fail "an article published $most times: $(sort -rn "$work/repeated.txt" | head -n 1)"
fi
# The stream is live: two inputs 33 ms apart in different partitions may reach the extractor in
# another order than they were produced (a live stream's record goes on once its partitions sit
# at their end, docs/architecture.md), so a few copies may name another original than replay's:
# 2 of 771 articles in the runs this test was written with. A standby that missed the owner's
# state would judge the copies of its articles unique (753 of the 771 are duplicates).
values articles > "$work/kafka.jsonl"
python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
  --min-dup-f1 0.99 --min-bcubed 0.99 --min-same-verdict 0.99 ||
  fail "the verdicts differ from an uninterrupted replay"

# Both roles again, with nothing left to do: they consume nothing (every input offset, of the
# pages and feeds and of the extracted topic, was committed). The dedup process takes the lease
# at once (the stopped owner left its group).
start x1 extract
start again dedup
wait_log 30 again dedup_lease_acquired
wait_log 30 x1 daemon_ready
sleep 3
consumed_x=$(on x1 metric newsflow_messages_consumed_total)
consumed_d=$(on again metric newsflow_messages_consumed_total)
for name in again x1; do
  pid_var=pid_$name
  kill -TERM "${!pid_var}"; wait "${!pid_var}" || fail "the idle $name did not exit cleanly"
done
[ "$consumed_x" -eq 0 ] && [ "$consumed_d" -eq 0 ] ||
  fail "restarts with every input done consumed again: extractor $consumed_x, dedup $consumed_d"
echo "1 passed, 0 failed"

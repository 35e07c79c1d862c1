#!/usr/bin/env bash
# A zombie owner fenced, on a real Apache Kafka with kafka.delivery exactly_once: copies of the
# sample pages with a feed, text items and three poison messages as a backlog; `newsflow run` A
# is paused (SIGSTOP) while it publishes, in the middle of its transactions. B, the same role
# with the same transactional id on another host (its own group.instance.id), starts: its
# init_transactions fences A's producer and aborts A's open transaction; it takes the partitions
# once A's session has expired and judges to the end. A is resumed: it must find itself fenced
# and exit non-zero without publishing anything more. Read with read_committed: no article id
# and no dead letter published twice, nothing lost, every verdict equal to an uninterrupted
# `replay`, and a restart consumes nothing.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; build=$2; work=$2/broker_fencing
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/*.log >&2 || true; exit 1; }
source "$src/tests/broker/lib.sh"
export NEWSFLOW_KAFKA__DELIVERY=exactly_once
# Small batches: many transactions, one of them open when A is paused.
export NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=25

python3 "$src/tests/broker/copies.py" "$src/samples/pages.jsonl.gz" "${BROKER_COPIES:-16}" \
  "$work/input.jsonl"
reference_stream "$work/input.jsonl"
"$bin" create-topics --partitions 4 > "$work/topics.txt" || fail "create-topics: $(cat "$work/topics.txt")"
inputs=$("$bin" produce --input "$work/stream.jsonl" --poison --quiet)

port=$(free_port)
t0=$(date +%s.%N)
NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port NEWSFLOW_KAFKA__GROUP_INSTANCE_ID=host-a \
  "$bin" run > "$work/a.log" 2>&1 &
a=$!; pids+=($a)
wait_ready 30 $a "$work/a.log"
produced="topic=\"$(topic articles)\""
for _ in $(seq 600); do
  a_out=$(metric newsflow_messages_produced_total "$produced")
  [ "$a_out" -ge $((expected / 5)) ] && break
  kill -0 $a 2>/dev/null || fail "A exited"
  sleep 0.02
done
# Paused with a transaction open: articles in the log beyond the committed ones, still so half a
# second later (not a commit under way). Else resumed for a moment and paused again.
open_at_pause=""
for try in $(seq 40); do
  kill -STOP $a
  committed_then=$(records articles)
  if [ "$(stored articles | cut -d' ' -f1)" -gt "$committed_then" ]; then
    sleep 0.5
    [ "$(records articles)" -eq "$committed_then" ] &&
      [ "$(stored articles | cut -d' ' -f1)" -gt "$committed_then" ] && { open_at_pause=1; break; }
  fi
  kill -CONT $a
  sleep 0.0$((RANDOM % 10))
done
[ -n "$open_at_pause" ] || fail "A was never paused with a transaction open (40 tries)"
paused=$(since "$t0")
uncommitted_then=$(($(stored articles | cut -d' ' -f1) - committed_then))

t1=$(date +%s.%N)
port_b=$(free_port)
NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port_b NEWSFLOW_KAFKA__GROUP_INSTANCE_ID=host-b \
  "$bin" run > "$work/b.log" 2>&1 &
b=$!; pids+=($b)
wait_ready 60 $b "$work/b.log"
b_ready=$(since "$t1")
for _ in $(seq 240); do
  [ "$(distinct articles)" -ge "$expected" ] && [ "$(distinct dlq)" -ge 3 ] && break
  kill -0 $b 2>/dev/null || fail "B exited"
  sleep 0.5
done
b_done=$(since "$t1")

# A wakes up with a batch (or its transaction) in hand.
t2=$(date +%s.%N)
kill -CONT $a
status=0
for _ in $(seq 600); do kill -0 $a 2>/dev/null || break; sleep 0.1; done
kill -0 $a 2>/dev/null && fail "A still runs 60 s after it was resumed"
wait $a || status=$?
a_exit=$(since "$t2")
sleep 1
port=$port_b
kill -TERM $b; wait $b || fail "B did not exit cleanly"
keys=$(distinct articles); total=$(records articles); dlq=$(records dlq)
# What the broker holds beyond the committed records: those of aborted transactions (A's open
# one among them, if it had one when it was paused).
aborted=$(($(stored articles | cut -d' ' -f1) - total))
why=$({ grep -o '"event":"[a-z_]*\(fenced\|fatal\|wedged\)[a-z_]*"' "$work/a.log" || true; } | head -n 3 | cut -d'"' -f4 | tr '\n' ' ')
echo "inputs=$inputs replay_articles=$expected distinct_article_keys=$keys article_records=$total dead_letters=$dlq aborted_article_records=$aborted; A paused ${paused} s after its start (try $try; $committed_then articles committed, $uncommitted_then in its open transaction); B ready ${b_ready} s after its start, every article after ${b_done} s; A exited $status ${a_exit} s after it was resumed (${why})"
[ "$status" -ne 0 ] || fail "A exited 0 after it was fenced"
[ "$aborted" -ge "$uncommitted_then" ] || fail "A's open transaction was not aborted: $aborted aborted records"
grep -q '"daemon_ready"' "$work/a.log" || fail "A never got ready"
[ "$keys" -eq "$expected" ] || fail "lost: $((expected - keys)) articles"
keys articles | sort | uniq -d > "$work/doubled.txt"
[ "$total" -eq "$keys" ] ||
  fail "$((total - keys)) article records repeat an id ($(wc -l < "$work/doubled.txt") ids, e.g. $(head -n 1 "$work/doubled.txt"))"
[ "$dlq" -eq 3 ] || fail "$dlq dead-letter records for the 3 poison messages"
compare_with_replay
port=$(free_port); export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port NEWSFLOW_KAFKA__GROUP_INSTANCE_ID=host-b
check_nothing_left
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# Failover of the roles: two extractors, a dedup owner and a hot standby over the multilingual
# stream (tests/data/multilingual). A quarter of the way in the owner is stopped (a redeploy):
# the standby, which has followed the state changelog all along, takes the lease over, and a
# new standby starts; later that owner is SIGKILLed and the new standby takes over. Before all
# that an extractor is SIGKILLed with pages left, and the other takes its partitions. Nothing
# may be lost and every verdict must be replay's (copies judged after a takeover are still
# marked). Reports the time from the stop and from the kill to the standby's first
# acknowledged article. EXACTLY_ONCE=1 runs it all with Kafka transactions.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/standby
if [ "${EXACTLY_ONCE:-0}" = 1 ]; then work=$work-exactly-once; fi
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "== $f" >&2; tail -8 "$f" >&2; done; exit 1; }
stop_signal=TERM
source "$src/tests/integration/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (deploy/install-deps.sh installs it)"
command -v curl >/dev/null || fail "curl is not installed"

stream=$src/tests/data/multilingual/stream.jsonl.gz
"$bin" replay --input "$stream" --output "$work/replay.jsonl" --dlq "$work/replay.dlq.jsonl"
expected=$(wc -l < "$work/replay.jsonl")

start_dev_broker --brokers 1 --partitions 4
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_LOG__LEVEL=info
export NEWSFLOW_KAFKA__CONSUMER__SESSION_TIMEOUT_MS=6000
# A lease held by a dead process is given away after this long (the default, 6000, is what
# brokers accept out of the box; this test's broker takes less).
export NEWSFLOW_KAFKA__LEASE__SESSION_TIMEOUT_MS=3000 NEWSFLOW_KAFKA__LEASE__HEARTBEAT_INTERVAL_MS=500
# Small batches, so the stream takes long enough to be killed in the middle of.
export NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=8
# EXACTLY_ONCE=1: transactions; the dedup processes share one transactional.id (a new owner
# fences the old one), each extractor has its own.
if [ "${EXACTLY_ONCE:-0}" = 1 ]; then
  export NEWSFLOW_KAFKA__DELIVERY=exactly_once
fi

metric() {  # metric PORT NAME_WITH_LABELS: its value, 0 when absent (or not listening yet)
  { curl -s "http://127.0.0.1:$1/metrics" || true; } |
    awk -v m="$2" '$1 == m {v = $2} END {print v + 0}'
}
start() {  # start NAME ROLE PORT
  NEWSFLOW_KAFKA__TRANSACTIONAL_ID=newsflow-${2/extract/$1} NEWSFLOW_HTTP__LISTEN=127.0.0.1:$3 \
    "$bin" run --role "$2" > "$work/$1.log" 2>&1 &
  pids+=($!)
}
port_a=$(free_port); port_b=$(free_port)
start dedup-a dedup "$port_a"; pid_a=${pids[-1]}
for _ in $(seq 300); do grep -q dedup_lease_acquired "$work/dedup-a.log" && break; sleep 0.1; done
grep -q dedup_lease_acquired "$work/dedup-a.log" || fail "the first dedup process did not take the lease"
start dedup-b dedup "$port_b"; pid_b=${pids[-1]}
for _ in $(seq 300); do grep -q dedup_standby "$work/dedup-b.log" && break; sleep 0.1; done
grep -q dedup_standby "$work/dedup-b.log" || fail "the second dedup process did not stand by"
port_x1=$(free_port)
start extract-1 extract "$port_x1"; pid_x1=${pids[-1]}
start extract-2 extract 0
inputs=$("$bin" produce --input "$stream")

articles='newsflow_messages_produced_total{topic="newsflow.articles"}'
# until_owner_judged PORT PID N: waits until the process on PORT has published N articles.
until_owner_judged() {
  for _ in $(seq 1200); do
    [ "$(metric "$1" "$articles")" -ge "$3" ] && return 0
    kill -0 "$2" 2>/dev/null || fail "the owner on port $1 exited"
    sleep 0.05
  done
  fail "the owner on port $1 published fewer than $3 articles"
}
# takeover_seconds PORT PID T0: seconds from T0 until the process on PORT published an article.
takeover_seconds() {
  for _ in $(seq 3000); do
    [ "$(metric "$1" "$articles")" -gt 0 ] && break
    kill -0 "$2" 2>/dev/null || fail "the standby on port $1 exited"
    sleep 0.02
  done
  [ "$(metric "$1" "$articles")" -gt 0 ] || fail "the standby on port $1 published nothing"
  python3 -c "import time; print(f'{time.time() - $3:.2f}')"
}

# An extractor dies while it has pages left; the other takes its partitions.
for _ in $(seq 600); do
  consumed=$({ curl -s "http://127.0.0.1:$port_x1/metrics" || true; } |
    awk '$1 ~ /^newsflow_messages_consumed_total/ {s += $2} END {print s + 0}')
  [ "$consumed" -ge 60 ] && break
  sleep 0.02
done
kill -KILL "$pid_x1"

# A redeploy: the owner is stopped a quarter of the way in; it drains and hands the lease over.
until_owner_judged "$port_a" "$pid_a" $((expected / 4))
judged_by_a=$(metric "$port_a" "$articles")
kill -TERM "$pid_a"
graceful=$(takeover_seconds "$port_b" "$pid_b" "$(date +%s.%N)")
wait "$pid_a" || fail "the stopped owner exited non-zero"
port_c=$(free_port)
start dedup-c dedup "$port_c"; pid_c=${pids[-1]}
for _ in $(seq 300); do grep -q dedup_standby "$work/dedup-c.log" && break; sleep 0.1; done

# A crash: the new owner is SIGKILLed half way; the third process takes over.
until_owner_judged "$port_b" "$pid_b" $((expected / 4))
judged_by_b=$(metric "$port_b" "$articles")
standby_lag=$(metric "$port_c" newsflow_standby_lag_records)
kill -KILL "$pid_b"
takeover=$(takeover_seconds "$port_c" "$pid_c" "$(date +%s.%N)")

count() {
  kcat -b "$broker" -X isolation.level=read_committed -C -t "$1" -e -q -f '%k\n' 2>/dev/null |
    sort -u | wc -l
}
for _ in $(seq 240); do
  [ "$(count newsflow.articles)" -ge "$expected" ] && break
  kill -0 "$pid_c" 2>/dev/null || fail "the last owner exited"
  sleep 1
done
for p in "${pids[@]:1}"; do
  kill -0 "$p" 2>/dev/null || continue  # the killed ones
  kill -TERM "$p"
  wait "$p" || true
done
kcat -b "$broker" -X isolation.level=read_committed -C -t newsflow.articles -e -q -f '%s\n' \
  > "$work/kafka.jsonl" 2>/dev/null
caught_up() {
  sed -n 's/.*dedup_lease_acquired caught_up_records=\([0-9]*\) catch_up_seconds=\([0-9.]*\).*/\1 records in \2 s/p' "$1"
}
echo "inputs=$inputs replay_articles=$expected extractor_killed_after=$consumed" \
  "first_owner_judged=$judged_by_a" \
  "stop_to_first_article_seconds=$graceful (catch-up: $(caught_up "$work/dedup-b.log"))" \
  "second_owner_judged=$judged_by_b standby_lag_at_kill=$standby_lag" \
  "kill_to_first_article_seconds=$takeover (catch-up: $(caught_up "$work/dedup-c.log"))" \
  "kafka_records=$(wc -l < "$work/kafka.jsonl")"
grep -q 'partitions_assigned' "$work/extract-2.log" || fail "the surviving extractor got no partitions"
python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
  --min-dup-f1 0.995 --min-bcubed 0.99 --min-same-verdict 0.99 ||
  fail "verdicts after the failovers differ from replay's"
python3 -c "import sys; sys.exit(0 if $takeover <= 15 and $graceful <= 5 else 1)" ||
  fail "the standbys took $graceful s (stop) and $takeover s (kill) to publish"
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# Stops at awkward moments of a consumer group's life, each of which must end in a clean exit
# within the drain limit:
# - a process stopped before its first assignment: an extractor that joins while another holds
#   every input partition gets SIGTERM while the rebalance is under way (a rolling restart, or
#   a scale-up undone at once). librdkafka 2.0 aborts when a cooperative-sticky consumer that
#   never had an assignment is destroyed, and the daemon's shutdown used to destroy it;
# - a process stopped while the brokers are gone and its group rebalances: closing its
#   consumer waited for the coordinator forever (the process never exited).
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/early_stop
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "== $f" >&2; tail -n 8 "$f" >&2; done; exit 1; }
stop_signal=TERM
source "$src/tests/integration/lib.sh"

start_dev_broker --brokers 1 --partitions 4
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_LOG__LEVEL=info NEWSFLOW_KAFKA__DRAIN_TIMEOUT_MS=3000
"$bin" produce --input "$src/samples/pages.jsonl.gz" > /dev/null

start() {  # start NAME: an extractor with its own static id, logging to $work/NAME.log
  NEWSFLOW_KAFKA__GROUP_INSTANCE_ID="$1" NEWSFLOW_HTTP__LISTEN=127.0.0.1:0 \
    "$bin" run --role extract > "$work/$1.log" 2>&1 &
  pids+=($!)
}
wait_for() {  # wait_for FILE PATTERN
  for _ in $(seq 300); do grep -q "$2" "$1" && return 0; sleep 0.1; done
  fail "no '$2' in $1"
}
start first
wait_for "$work/first.log" partitions_assigned
start late; late=${pids[-1]}
wait_for "$work/late.log" kafka_subscribed
sleep 1  # its join under way: the group rebalances, the first extractor gives up partitions
kill -TERM "$late"
code=0; wait "$late" || code=$?
[ "$code" -eq 0 ] || fail "the extractor stopped before its first assignment exited with $code"
grep -q daemon_stopping "$work/late.log" || fail "the late extractor did not stop through its shutdown"
first=${pids[1]}
kill -0 "$first" 2>/dev/null || fail "the first extractor exited"

# The group rebalances again (the late member left); the broker goes away meanwhile.
kill -KILL "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
kill -TERM "$first"
for _ in $(seq 300); do kill -0 "$first" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$first" 2>/dev/null; then
  kill -KILL "$first"
  fail "the extractor told to stop with the broker gone still runs after 30 s"
fi
code=0; wait "$first" || code=$?
[ "$code" -eq 0 ] || fail "the extractor stopped with the broker gone exited with $code"
echo "1 passed, 0 failed"

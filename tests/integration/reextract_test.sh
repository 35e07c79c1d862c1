#!/usr/bin/env bash
# Inputs extracted twice: an extractor whose commits never reach the broker (as when a rebalance
# keeps failing them) hands over most of the mixed multilingual stream (3 days) and is
# SIGKILLed; the next owner of its partitions extracts all of it again, from the start. The dedup
# role meets every early input a second time, long after its articles left the window: it must
# know them (they were judged) rather than judge them anew against the window of day 3 and
# publish other verdicts (11% of them did). Its verdicts must be replay's.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/reextract
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "== $f" >&2; tail -n 6 "$f" >&2; done; exit 1; }
stop_signal=TERM
source "$src/tests/integration/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (deploy/install-deps.sh installs it)"

mixed_multilingual_stream

start_dev_broker --brokers 1 --partitions 4
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_LOG__LEVEL=info
export NEWSFLOW_KAFKA__CONSUMER__SESSION_TIMEOUT_MS=3000
export NEWSFLOW_KAFKA__CONSUMER__HEARTBEAT_INTERVAL_MS=500
inputs=$("$bin" produce --input "$stream")

metric() {  # metric PORT NAME: its value, 0 when absent (or not listening yet)
  { curl -s "http://127.0.0.1:$1/metrics" || true; } |
    awk -v m="$2" '$1 == m {v = $2} END {print v + 0}'
}
start() {  # start NAME ROLE PORT [VAR=value...]
  local name=$1 role=$2 port=$3; shift 3
  env "$@" NEWSFLOW_KAFKA__GROUP_INSTANCE_ID="$name" NEWSFLOW_HTTP__LISTEN="127.0.0.1:$port" \
    "$bin" run --role "$role" > "$work/$name.log" 2>&1 &
  pids+=($!)
}
port_d=$(free_port); port_x=$(free_port)
start dedup dedup "$port_d"
start extract-1 extract "$port_x" NEWSFLOW_FAULT_NO_COMMIT=1; pid_x1=${pids[-1]}
articles='newsflow_messages_produced_total{topic="newsflow.articles"}'
for _ in $(seq 1200); do
  [ "$(metric "$port_d" "$articles")" -ge $((expected * 2 / 3)) ] && break
  kill -0 "$pid_x1" 2>/dev/null || fail "the first extractor exited"
  sleep 0.05
done
judged_before=$(metric "$port_d" "$articles")
[ "$judged_before" -ge $((expected * 2 / 3)) ] || fail "the dedup role judged only $judged_before"
kill -KILL "$pid_x1"
start extract-2 extract 0

count() { kcat -b "$broker" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | sort -u | wc -l; }
for _ in $(seq 240); do
  [ "$(count newsflow.articles)" -ge "$expected" ] && break
  for p in "${pids[@]:1}"; do
    [ "$p" = "$pid_x1" ] || kill -0 "$p" 2>/dev/null || fail "a role process exited"
  done
  sleep 1
done
# Every input of the first extractor is handed over again; wait until the dedup role read them.
again=0
for _ in $(seq 300); do
  again=$(metric "$port_d" newsflow_handed_over_again_total)
  [ "$again" -ge "$((judged_before / 2))" ] && break
  sleep 0.1
done
for p in "${pids[@]:1}"; do
  [ "$p" = "$pid_x1" ] && continue
  kill -TERM "$p"; wait "$p" || fail "a role process exited non-zero"
done
kcat -b "$broker" -C -t newsflow.articles -e -q -f '%s\n' > "$work/kafka.jsonl" 2>/dev/null
echo "inputs=$inputs replay_articles=$expected judged_before_kill=$judged_before" \
  "handed_over_again=$again kafka_records=$(wc -l < "$work/kafka.jsonl")"
python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
  --min-dup-f1 0.995 --min-bcubed 0.99 --min-same-verdict 0.99 ||
  fail "verdicts after the re-extraction differ from replay's"
[ "$again" -ge "$((judged_before / 2))" ] ||
  fail "the second extractor handed over only $again records again (no re-extraction to test)"
echo "1 passed, 0 failed"

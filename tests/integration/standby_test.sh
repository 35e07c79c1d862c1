#!/usr/bin/env bash
# Failover of the roles: two extractors, a dedup owner and two hot standbys over the multilingual
# stream (tests/data/multilingual, with a feed and text items). An extractor is SIGKILLed with
# pages left, and the other takes its partitions. Then, a quarter of the way in, the owner is
# stopped (a redeploy): a standby, which has followed the state changelog all along, takes the
# lease over; soon after its first articles it is SIGKILLed and the other standby takes over.
# Nothing may be lost and every verdict must be replay's (copies judged after a takeover are still
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

# Every input kind (pages, a feed with full-text items, text items) and its replay.
mixed_multilingual_stream

start_dev_broker --brokers 1 --partitions 4
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_LOG__LEVEL=info
export NEWSFLOW_KAFKA__CONSUMER__SESSION_TIMEOUT_MS=6000
# A lease held by a dead process is given away after this long (the default, 6000, is what
# brokers accept out of the box; this test's broker takes less).
export NEWSFLOW_KAFKA__LEASE__SESSION_TIMEOUT_MS=3000 NEWSFLOW_KAFKA__LEASE__HEARTBEAT_INTERVAL_MS=500
# Small batches: many commits and handovers along the stream.
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
    NEWSFLOW_KAFKA__GROUP_INSTANCE_ID=$1 "$bin" run --role "$2" > "$work/$1.log" 2>&1 &
  pids+=($!)
}
port_a=$(free_port); port_b=$(free_port); port_c=$(free_port)
start dedup-a dedup "$port_a"; pid_a=${pids[-1]}
for _ in $(seq 300); do grep -q dedup_lease_acquired "$work/dedup-a.log" && break; sleep 0.1; done
grep -q dedup_lease_acquired "$work/dedup-a.log" || fail "the first dedup process did not take the lease"
# Two standbys from the start: the owner's successor and the successor's are ready when their
# time comes, however fast the owners judge the backlog.
start dedup-b dedup "$port_b"; pid_b=${pids[-1]}
start dedup-c dedup "$port_c"; pid_c=${pids[-1]}
for name in dedup-b dedup-c; do
  for _ in $(seq 300); do grep -q dedup_standby "$work/$name.log" && break; sleep 0.1; done
  grep -q dedup_standby "$work/$name.log" || fail "$name did not stand by"
done
port_x1=$(free_port)
start extract-1 extract "$port_x1"; pid_x1=${pids[-1]}
start extract-2 extract 0
# The stream (ordered by event time) in three parts: each owner is stopped or killed before the
# part its successor judges is produced. An owner that takes over an extracted backlog judges it
# in well under a second, before this script sees its first articles, and with offsets
# committed batch by batch (kafka.commit_interval_ms 0) a successor would then find nothing to
# judge (the first owner judged all of a first part of three quarters while the extractor's
# partitions moved, and the test waited for a successor's first article until its timeout).
n=$(wc -l < "$stream")
head -n $((n / 2)) "$stream" > "$work/part1.jsonl"
sed -n "$((n / 2 + 1)),$((n * 3 / 4))p" "$stream" > "$work/partb.jsonl"
tail -n +$((n * 3 / 4 + 1)) "$stream" > "$work/part2.jsonl"
inputs=$("$bin" produce --input "$work/part1.jsonl")

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
# takeover T0 PORT PID [PORT PID]: the first of the standbys given to publish an article, as
# "PORT PID SECONDS" (seconds from T0).
takeover() {
  local t0=$1; shift
  for _ in $(seq 3000); do
    local args=("$@")
    while [ ${#args[@]} -gt 0 ]; do
      if [ "$(metric "${args[0]}" "$articles")" -gt 0 ]; then
        echo "${args[0]} ${args[1]} $(python3 -c "import time; print(f'{time.time() - $t0:.2f}')")"
        return 0
      fi
      kill -0 "${args[1]}" 2>/dev/null || fail "the standby on port ${args[0]} exited"
      args=("${args[@]:2}")
    done
    sleep 0.02
  done
  fail "no standby published anything"
}

# An extractor dies while it has pages left; the other takes its partitions.
for _ in $(seq 600); do
  consumed=$({ curl -s "http://127.0.0.1:$port_x1/metrics" || true; } |
    awk '$1 ~ /^newsflow_messages_consumed_total/ {s += $2} END {print s + 0}')
  [ "$consumed" -ge 60 ] && break
  sleep 0.02
done
kill -KILL "$pid_x1"
# Its partitions reach the other extractor after the session timeout; the handovers below come
# after that (until then an owner waits for the dead extractor's partitions).
owned() {  # partitions the surviving extractor holds, from its log
  awk '{ if (match($0, /count=[0-9]+/)) n = substr($0, RSTART + 6, RLENGTH - 6) + 0; else n = 0 }
       /partitions_assigned/ { s += n } /partitions_revoked/ { s -= n } END { print s + 0 }' \
    "$work/extract-2.log"
}
for _ in $(seq 600); do [ "$(owned)" -ge 8 ] && break; sleep 0.1; done

# A redeploy: the owner is stopped a quarter of the way in; it drains and hands the lease over
# to one of the standbys.
until_owner_judged "$port_a" "$pid_a" $((expected / 4))
judged_by_a=$(metric "$port_a" "$articles")
inputs=$((inputs + $("$bin" produce --input "$work/partb.jsonl")))
t_stop=$(date +%s.%N)
kill -TERM "$pid_a"
read -r port_2 pid_2 graceful < <(takeover "$t_stop" "$port_b" "$pid_b" "$port_c" "$pid_c")
[ -n "${graceful:-}" ] || fail "no standby published after the owner stopped"
wait "$pid_a" || fail "the stopped owner exited non-zero"
if [ "$port_2" = "$port_b" ]; then port_3=$port_c pid_3=$pid_c name_2=dedup-b name_3=dedup-c
else port_3=$port_b pid_3=$pid_b name_2=dedup-c name_3=dedup-b; fi

# A crash: the new owner is SIGKILLed soon after its first articles; the last standby takes
# over, judges again what was not committed, and the last quarter of the stream.
until_owner_judged "$port_2" "$pid_2" 20
judged_by_2=$(metric "$port_2" "$articles")
standby_lag=$(metric "$port_3" newsflow_standby_lag_records)
t_kill=$(date +%s.%N)
kill -KILL "$pid_2"
inputs=$((inputs + $("$bin" produce --input "$work/part2.jsonl")))
read -r _ _ takeover < <(takeover "$t_kill" "$port_3" "$pid_3")
[ -n "${takeover:-}" ] || fail "the last standby published nothing after the kill"

count() {
  kcat -b "$broker" -X isolation.level=read_committed -C -t "$1" -e -q -f '%k\n' 2>/dev/null |
    sort -u | wc -l
}
for _ in $(seq 240); do
  [ "$(count newsflow.articles)" -ge "$expected" ] && break
  kill -0 "$pid_3" 2>/dev/null || fail "the last owner exited"
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
  sed -n 's/.*dedup_lease_acquired caught_up_records=\([0-9]*\) uncommitted_dropped=\([0-9]*\) catch_up_seconds=\([0-9.]*\).*/\1 records, \2 uncommitted dropped, in \3 s/p' "$1"
}
echo "inputs=$inputs replay_articles=$expected extractor_killed_after=$consumed" \
  "first_owner_judged=$judged_by_a" \
  "stop_to_first_article_seconds=$graceful (catch-up: $(caught_up "$work/$name_2.log"))" \
  "second_owner=$name_2 judged=$judged_by_2 standby_lag_at_kill=$standby_lag" \
  "kill_to_first_article_seconds=$takeover (catch-up: $(caught_up "$work/$name_3.log"))" \
  "kafka_records=$(wc -l < "$work/kafka.jsonl")"
grep -q 'partitions_assigned' "$work/extract-2.log" || fail "the surviving extractor got no partitions"
python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
  --min-dup-f1 0.995 --min-bcubed 0.99 --min-same-verdict 0.99 ||
  fail "verdicts after the failovers differ from replay's"
# The handover of the lease takes about 2 s on the mock cluster (plus the session timeout after a
# kill); a new owner may wait for pages still being extracted (3.9-5.0 s measured for the stop).
python3 -c "import sys; sys.exit(0 if $takeover <= 15 and $graceful <= 8 else 1)" ||
  fail "the standbys took $graceful s (stop) and $takeover s (kill) to publish"
echo "1 passed, 0 failed"

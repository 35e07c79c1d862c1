#!/usr/bin/env bash
# An input that crashes the process must not crash-loop the daemon. A dev broker in its own
# process; the sample pages plus one input that makes a worker abort (fault injection:
# NEWSFLOW_FAULT_CRASH_MARKER); the daemon restarted whenever it dies, as systemd or Kubernetes
# would, once with a state directory and once with the default `state.dir: ""` (the crash
# guard's notes then go under $TMPDIR). The fatal signal names the input: the daemon must die
# once, then dead-letter the input as worker_crash and publish every other input.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/crash_loop
mode=${CRASH_LOOP_MODE:-state_dir}; work=$work-$mode
rm -rf "$work"; mkdir -p "$work/state" "$work/tmp"
ulimit -c 0
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/run*.log >&2 || true; exit 1; }
source "$src/tests/integration/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (deploy/install-deps.sh installs it)"

start_dev_broker --partitions 4
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:0 NEWSFLOW_LOG__LEVEL=info
export NEWSFLOW_KAFKA__CONSUMER__SESSION_TIMEOUT_MS=6000
export NEWSFLOW_FAULT_CRASH_MARKER=CRASH-THE-WORKER-NOW
if [ "$mode" = state_dir ]; then
  export NEWSFLOW_STATE__DIR=$work/state
else
  export NEWSFLOW_STATE__DIR="" TMPDIR=$work/tmp
fi
pages=$("$bin" produce --input "$src/samples/pages.jsonl.gz")
printf '<html><body><p>CRASH-THE-WORKER-NOW</p></body></html>' |
  kcat -b "$broker" -P -t newsflow.pages -k crasher -H url=https://poison.test/crasher

# kcat under a bounded time: a consumer that never sees a partition's end must not hang the test.
distinct() { timeout 60 kcat -b "$broker" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | sort -u | wc -l; }
crashes=0 stuck=0
for start in 1 2 3 4 5; do
  "$bin" run > "$work/run$start.log" 2>&1 &
  pid=$!; pids+=($pid)
  began=$SECONDS
  while kill -0 $pid 2>/dev/null; do
    if [ "$(distinct newsflow.articles)" -ge "$pages" ] && [ "$(distinct newsflow.dlq)" -ge 1 ]; then
      kill -TERM $pid
      wait $pid || fail "the daemon exited non-zero on SIGTERM"
      break 2
    fi
    if [ $((SECONDS - began)) -gt 90 ]; then
      # A start that gets nowhere in 90 s is what a liveness probe or systemd's watchdog ends;
      # the log says where it was.
      echo "start $start: no progress in 90 s; killed as a watchdog would. Its log:" >&2
      tail -n 20 "$work/run$start.log" >&2
      kill -KILL $pid
      stuck=$((stuck + 1))
      break
    fi
    sleep 0.3
  done
  wait $pid && rc=0 || rc=$?
  [ "$rc" -eq 137 ] && continue
  crashes=$((crashes + 1))
  echo "start $start: the daemon died (exit $rc)"
done
[ "$stuck" -le 1 ] || fail "$stuck starts got nowhere"
[ "$crashes" -le 1 ] || fail "the daemon died $crashes times"
grep -q 'fatal signal SIGABRT while processing {"offset"' "$work"/run*.log ||
  fail "no log line names the input the process died on"
dlq=$(kcat -b "$broker" -C -t newsflow.dlq -e -q -f '%k %h\n' 2>/dev/null)
grep -q '^crasher .*error_reason=worker_crash' <<< "$dlq" || fail "the crashing input is not a worker_crash dead letter: $dlq"
[ "$(distinct newsflow.articles)" -eq "$pages" ] || fail "$(distinct newsflow.articles) articles for $pages pages"
if [ "$mode" = state_dir ]; then
  notes=$work/state
else
  notes=$(find "$work/tmp" -mindepth 2 -maxdepth 2 -type d)
fi
[ -n "$notes" ] && [ -d "$notes" ] || fail "no crash guard directory"
[ ! -e "$notes/inflight.jsonl" ] || fail "the in-flight note was left behind"
# The fatal signal's note stays (the input may be read again after a rewind) and names it alone.
[ "$(grep -c '"topic":"newsflow.pages"' "$notes/crashed.jsonl")" -eq 1 ] ||
  fail "the crash note does not name the one input: $(cat "$notes/crashed.jsonl" 2>/dev/null)"
echo "crash loop ($mode): $crashes crashes, then the input dead-lettered and all $pages pages published"
echo "1 passed, 0 failed"

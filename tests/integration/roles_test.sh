#!/usr/bin/env bash
# Extraction scaled out: the multilingual stream (tests/data/multilingual, 1,046 pages, 3 days,
# with a feed and text items) is produced to a dev broker as a backlog, then two `newsflow run --role extract` processes
# share the input partitions and one `newsflow run --role dedup` judges what they hand over.
# Its verdicts and stories must be those of `newsflow replay` of the same stream, as the
# all-in-one daemon's are: how many processes share the work changes nothing.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/roles
rm -rf "$work"; mkdir -p "$work"
fail() {
  echo "FAIL: $*" >&2
  # Each process's own events (startup, assignments, commits, watermarks waited for, stop), not
  # librdkafka's chatter: how the group's work moved is what explains a difference.
  for f in "$work"/*.log; do
    echo "== $f" >&2
    grep -v ' librdkafka ' "$f" | cut -c1-300 | head -60 >&2
  done
  # What each process counted before it stopped: records passed over by the event-time order,
  # inputs handed over again, failed commits and deliveries.
  for f in "$work"/*.metrics; do echo "== $f" >&2; cat "$f" >&2; done
  # Kept whole, as the next run of the test starts from an empty folder.
  cp -r "$work" "$work.failed-$(date +%s)" 2>/dev/null || true
  exit 1
}
stop_signal=TERM
source "$src/tests/integration/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (deploy/install-deps.sh installs it)"

# Every input kind (pages, a feed with full-text items, text items) and its replay.
mixed_multilingual_stream

start_dev_broker --brokers 1 --partitions 8
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_LOG__LEVEL=info
export NEWSFLOW_KAFKA__CONSUMER__SESSION_TIMEOUT_MS=6000
inputs=$("$bin" produce --input "$stream")

for role in extract extract dedup; do
  # Each process its own static id: the default (host and role) is the same for both extractors.
  NEWSFLOW_KAFKA__GROUP_INSTANCE_ID=$role-${#pids[@]} NEWSFLOW_HTTP__LISTEN=127.0.0.1:0 \
    "$bin" run --role $role > "$work/$role-${#pids[@]}.log" 2>&1 &
  pids+=($!)
done
count() { kcat -b "$broker" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | sort -u | wc -l; }
for _ in $(seq 240); do
  [ "$(count newsflow.articles)" -ge "$expected" ] && break
  for p in "${pids[@]:1}"; do kill -0 "$p" 2>/dev/null || fail "a role process exited"; done
  sleep 1
done
# Each role's counters of what can reorder or repeat work, kept for a failure's report.
for log in "$work"/extract-*.log "$work"/dedup-*.log; do
  url=$(grep -o 'http_listening metrics=[^ ]*' "$log" | head -1 | cut -d= -f2)
  [ -n "$url" ] && curl -s --max-time 5 "$url" | grep -E '^newsflow_(order_passed_over|handed_over_again|commit_failures|delivery_failures|messages_produced)_total' \
    > "${log%.log}.metrics" || true
done
# The roles stop before the broker (the trap stops the broker first).
for p in "${pids[@]:1}"; do kill -TERM "$p"; wait "$p" || fail "a role process exited non-zero"; done
kcat -b "$broker" -C -t newsflow.articles -e -q -f '%s\n' > "$work/kafka.jsonl" 2>/dev/null
extractors=$(grep -l 'partitions_assigned' "$work"/extract-*.log | wc -l)
echo "inputs=$inputs replay_articles=$expected kafka_records=$(wc -l < "$work/kafka.jsonl")" \
  "extractors_with_partitions=$extractors"
[ "$extractors" -eq 2 ] || fail "the two extractors did not share the input partitions"
python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
  --min-dup-f1 0.995 --min-bcubed 0.99 --min-same-verdict 0.99 ||
  fail "the roles' verdicts differ from replay's"
# What the extractors handed over holds to its schema.
kcat -b "$broker" -C -t newsflow.extracted -e -q -J > "$work/extracted.kcat" 2>/dev/null
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
  /usr/bin/python3 "$src/tests/integration/schemas_check.py" "$src/deploy/schemas" extracted \
    "$work/extracted.kcat" || fail "extracted records break their schema"
fi
echo "1 passed, 0 failed"

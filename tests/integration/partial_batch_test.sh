#!/usr/bin/env bash
# Outputs that reached the brokers only in part: the state record of one article is lost, no
# commit lands from then on, and the process dies once its copy's batch is acknowledged
# (NEWSFLOW_FAULT_LOSE_STATE_MARKER, in both), so a restart judges them again. The restored state
# must be that of the committed inputs only: the copy's record, durable while the original's is
# not, must not make the original a duplicate of its own copy. Every verdict equals `replay`.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/partial_batch
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/run*.log >&2 || true; exit 1; }
source "$src/tests/integration/lib.sh"

start_dev_broker --brokers 3 --partitions 1
port=$(free_port)
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
export NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=8 NEWSFLOW_LOG__LEVEL=info NEWSFLOW_LOG__FORMAT=json

# Each sample page, then a copy of it under a new id a second later. The marked page (and its
# copy) is the tenth.
python3 - "$src/samples/pages.jsonl.gz" "$work/input.jsonl" <<'PY'
import datetime, gzip, json, sys
lines = [json.loads(l) for l in gzip.open(sys.argv[1], "rt", encoding="utf-8")]
out = []
for i, d in enumerate(sorted(lines, key=lambda d: d["fetched_at"])):
    t = datetime.datetime.fromisoformat(d["fetched_at"].replace("Z", "+00:00"))
    if i == 9:
        d = dict(d, html=d["html"] + "<!-- LOSE-THE-STATE-OF-THIS-PAGE -->")
    out.append(d)
    out.append(dict(d, id=d["id"] + "-copy", url=d["url"] + "#copy",
                    fetched_at=(t + datetime.timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")))
    if i == 9:
        open(sys.argv[2] + ".marked", "w").write(d["id"])
with open(sys.argv[2], "w", encoding="utf-8") as f:
    for c in out:
        f.write(json.dumps(c) + "\n")
PY
"$bin" replay --input "$work/input.jsonl" --output "$work/replay.jsonl" --dlq "$work/replay.dlq.jsonl"
inputs=$("$bin" produce --input "$work/input.jsonl")

NEWSFLOW_FAULT_LOSE_STATE_MARKER=LOSE-THE-STATE-OF-THIS-PAGE "$bin" run > "$work/run1.log" 2>&1 &
pid=$!; pids+=($pid)
for _ in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -0 $pid 2>/dev/null && fail "the daemon did not meet the marked page"
wait $pid && fail "the daemon exited cleanly instead of being killed" || true
grep -q '"fault_injected"' "$work/run1.log" || fail "no fault was injected"
# What makes the case: the copy's state record is durable while its original's is not.
state_keys=$(kcat -b "$broker" -C -t newsflow.state -e -q -f '%k\n' 2>/dev/null)
marked=$(cat "$work/input.jsonl.marked")
grep -qx "$marked-copy" <<<"$state_keys" || fail "the copy's state record was not written"
grep -qx "$marked" <<<"$state_keys" && fail "the marked page's state record was written"

count() { kcat -b "$broker" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | sort -u | wc -l; }
"$bin" run > "$work/run2.log" 2>&1 &
pid=$!; pids+=($pid)
for _ in $(seq 300); do
  [ "$(count newsflow.articles)" -ge "$inputs" ] && break
  kill -0 $pid 2>/dev/null || fail "the daemon exited"
  sleep 0.5
done
kill -TERM $pid; wait $pid || fail "the daemon did not exit cleanly"
kcat -b "$broker" -C -t newsflow.articles -e -q -f '%s\n' > "$work/kafka.jsonl" 2>/dev/null
python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
  --min-dup-f1 1.0 --min-bcubed 1.0 --min-same-verdict 1.0 ||
  fail "verdicts after the partial batch differ from replay's"
restored=$(grep -h '"window_restored"' "$work/run2.log" | tail -n 1)
echo "restore: $restored"
grep -q '"uncommitted":"[1-9]' <<< "$restored" || fail "the restore applied the uncommitted batch's records"
echo "1 passed, 0 failed"

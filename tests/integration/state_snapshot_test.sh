#!/usr/bin/env bash
# A changelog bounded by snapshots. 2.5 windows of event time (a window of one hour) go through
# the daemon, which saves its judging state every 150 articles (`kafka.state_snapshot_articles`).
# What compaction keeps of newsflow.state (the last record of each key, tombstones dropped) must
# be one snapshot and the records after it, whatever came before; a restart after SIGKILL must
# load the snapshot and apply only the records after it; every verdict must equal `replay`'s.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/state_snapshot
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/run*.log >&2 || true; exit 1; }
source "$src/tests/integration/lib.sh"

start_dev_broker --brokers 1 --partitions 8
port=$(free_port)
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
export NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=20 NEWSFLOW_LOG__LEVEL=info NEWSFLOW_LOG__FORMAT=json
export NEWSFLOW_WINDOW__HOURS=1 NEWSFLOW_KAFKA__STATE_SNAPSHOT_ARTICLES=150

# 25 copies of each sample page under new ids, six minutes apart: 150 minutes of event time, so
# copies an hour apart are out of each other's window.
python3 - "$src/samples/pages.jsonl.gz" "$work/first.jsonl" "$work/second.jsonl" <<'PY'
import datetime, gzip, json, sys
lines = [json.loads(l) for l in gzip.open(sys.argv[1], "rt", encoding="utf-8")]
out = []
for k in range(25):
    for d in lines:
        t = datetime.datetime.fromisoformat(d["fetched_at"].replace("Z", "+00:00"))
        out.append(dict(d, id=f"{d['id']}-{k}", url=f"{d['url']}#{k}",
                        fetched_at=(t + datetime.timedelta(minutes=6 * k)).strftime("%Y-%m-%dT%H:%M:%SZ")))
out.sort(key=lambda c: c["fetched_at"])
half = len(out) * 3 // 5
for path, part in ((sys.argv[2], out[:half]), (sys.argv[3], out[half:])):
    with open(path, "w", encoding="utf-8") as f:
        for c in part:
            f.write(json.dumps(c) + "\n")
PY
cat "$work/first.jsonl" "$work/second.jsonl" > "$work/all.jsonl"
"$bin" replay --input "$work/all.jsonl" --output "$work/replay.jsonl" --dlq "$work/replay.dlq.jsonl"
expected=$(wc -l < "$work/replay.jsonl")
[ "$expected" -gt 450 ] || fail "replay gave only $expected articles"

count() { kcat -b "$broker" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | sort -u | wc -l; }
first=$("$bin" produce --input "$work/first.jsonl")
"$bin" run > "$work/run1.log" 2>&1 &
pid=$!; pids+=($pid)
for _ in $(seq 600); do
  [ "$(grep -c '"state_snapshot_written"' "$work/run1.log" || true)" -ge 2 ] &&
    [ "$(count newsflow.articles)" -ge "$first" ] && break
  kill -0 $pid 2>/dev/null || fail "the daemon exited"
  sleep 0.2
done
[ "$(grep -c '"state_snapshot_written"' "$work/run1.log" || true)" -ge 2 ] || fail "fewer than 2 snapshots"
kill -KILL $pid; wait $pid 2>/dev/null || true

"$bin" produce --input "$work/second.jsonl" > /dev/null
"$bin" run > "$work/run2.log" 2>&1 &
pid=$!; pids+=($pid)
for _ in $(seq 600); do
  [ "$(count newsflow.articles)" -ge "$expected" ] && break
  kill -0 $pid 2>/dev/null || fail "the daemon exited"
  sleep 0.2
done
sleep 1
kill -TERM $pid; wait $pid || fail "the daemon did not exit cleanly"

# The restart loaded a snapshot and applied only the records after it.
loaded=$(grep -h '"state_snapshot_loaded"' "$work/run2.log" | tail -n 1)
restored=$(grep -h '"window_restored"' "$work/run2.log" | tail -n 1)
echo "loaded: $loaded"; echo "restored: $restored"
[ -n "$loaded" ] || fail "the restart loaded no snapshot"
applied=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["articles"])' "$restored")
covered=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["in_snapshot"])' "$restored")
[ "$applied" -le 190 ] || fail "the restart applied $applied records, more than one snapshot interval"
[ "$covered" -ge 150 ] || fail "the restart found only $covered records in the snapshot"

# What compaction keeps: the last record of each key, unless it is a tombstone.
kcat -b "$broker" -C -t newsflow.state -e -q -f '%k\t%S\n' > "$work/state.tsv" 2>/dev/null
python3 - "$work/state.tsv" <<'PY' || fail "the changelog keeps more than one snapshot and the records since"
import sys
last = {}
for line in open(sys.argv[1], encoding="utf-8"):
    key, size = line.rstrip("\n").rsplit("\t", 1)
    last[key] = int(size)
live = [k for k, s in last.items() if s >= 0]
snapshots = {k.split("/")[1] for k in live if k.startswith("snapshot/")}
articles = [k for k in live if not k.startswith("snapshot/")]
print(f"{len(last)} keys written, {len(live)} live: {len(articles)} article records, "
      f"snapshots {sorted(snapshots)}")
assert len(snapshots) == 1, snapshots
assert len(articles) <= 190, len(articles)
assert len(last) > 450
PY

kcat -b "$broker" -C -t newsflow.articles -e -q -f '%s\n' > "$work/kafka.jsonl" 2>/dev/null
python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
  --min-dup-f1 1.0 --min-bcubed 1.0 --min-same-verdict 1.0 ||
  fail "verdicts across snapshots and a SIGKILL differ from replay's"
echo "1 passed, 0 failed"

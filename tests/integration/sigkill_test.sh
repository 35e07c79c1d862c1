#!/usr/bin/env bash
# Nothing lost across SIGKILL: a dev broker in its own process, ~1,000 pages produced, the daemon
# killed with SIGKILL five times while it works and restarted each time, then run to the end.
# Every input must be in newsflow.articles or newsflow.dlq; repeated records may only re-write
# the same key (at-least-once), and a copy processed after a restart is still a duplicate.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/sigkill
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/run*.log >&2 || true; exit 1; }
source "$src/tests/integration/lib.sh"

start_dev_broker --brokers 1 --partitions 48
port=$(free_port)
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
# The shipped consumer settings (session timeout and heartbeat): a restart must publish again
# within 10 s while the killed process's membership is still on the broker.
export NEWSFLOW_KAFKA__WORKERS=1 NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=50
export NEWSFLOW_LOG__LEVEL=info NEWSFLOW_LOG__FORMAT=json

# 45 copies of each sample page under new ids and URLs, each a few seconds after the last, so
# an uninterrupted `replay` of the same lines is the reference for every verdict.
python3 - "$src/samples/pages.jsonl.gz" "$work/input.jsonl" <<'PY'
import datetime, gzip, json, sys
lines = [json.loads(l) for l in gzip.open(sys.argv[1], "rt", encoding="utf-8")]
out = []
for k in range(45):
    for d in lines:
        t = datetime.datetime.fromisoformat(d["fetched_at"].replace("Z", "+00:00"))
        c = dict(d, id=f"{d['id']}-{k}" if k else d["id"], url=f"{d['url']}#{k}" if k else d["url"],
                 fetched_at=(t + datetime.timedelta(seconds=7 * k)).strftime("%Y-%m-%dT%H:%M:%SZ"))
        out.append(c)
out.sort(key=lambda c: c["fetched_at"])
with open(sys.argv[2], "w", encoding="utf-8") as f:
    for c in out:
        f.write(json.dumps(c) + "\n")
PY
# Every input kind: those pages, the sample feed with full-text items, and text items (copies
# of every fifth article under new ids, with their titles, as a news API delivers them).
"$bin" replay --input "$work/input.jsonl" --output "$work/pages.jsonl" --dlq "$work/pages.dlq.jsonl"
python3 "$src/tests/integration/mixed_stream.py" "$work/input.jsonl" "$src/samples/feeds.jsonl.gz" \
  "$work/pages.jsonl" "$work/stream.jsonl"
"$bin" replay --input "$work/stream.jsonl" --output "$work/replay.jsonl" --dlq "$work/replay.dlq.jsonl"
inputs=$("$bin" produce --input "$work/stream.jsonl" --poison)
[ "$inputs" -gt 900 ] || fail "produced only $inputs messages"
# A feed input gives an article per item: the articles replay gives, plus the 3 poison messages.
expected=$(wc -l < "$work/replay.jsonl")
texts=$(grep -c '"text"' "$work/stream.jsonl" || true)
feeds=$(grep -c '"feed"' "$work/stream.jsonl" || true)
[ "$texts" -gt 100 ] && [ "$feeds" -ge 1 ] || fail "the stream has $texts text items and $feeds feeds"

count() { kcat -b "$NEWSFLOW_KAFKA__BROKERS" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | sort -u | wc -l; }
total() { kcat -b "$NEWSFLOW_KAFKA__BROKERS" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | wc -l; }
acked='newsflow_messages_produced_total{topic="newsflow.articles"}'
restarts=()
for round in 1 2 3 4 5; do
  # A fast machine may have judged and committed the whole stream before the last kills: a
  # restart with nothing left to publish is "idle", not late.
  idle=""; [ "$(count newsflow.articles)" -ge "$expected" ] && idle=1
  t0=$(date +%s.%N); first=""
  "$bin" run > "$work/run$round.log" 2>&1 &
  pid=$!; pids+=($pid)
  # Kill it in the middle of its work: once it has published a few batches of articles.
  for _ in $(seq 600); do
    metrics=$(curl -s "http://127.0.0.1:$port/metrics" || true)
    done_now=$(awk '/^newsflow_articles_total/ {s += $2} END {print s + 0}' <<<"$metrics")
    published=$(awk -v m="$acked" '$1 == m {s += $2} END {print s + 0}' <<<"$metrics")
    if [ -z "$first" ] && [ "$published" -gt 0 ]; then
      first=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
    fi
    [ "${done_now:-0}" -ge $((60 + 17 * round)) ] && [ -n "$first" ] && break
    # Nothing left to publish: killed once it has restored and taken its partitions (waiting
    # out the loop cost a minute a round).
    [ -n "$idle" ] && grep -q daemon_ready "$work/run$round.log" && break
    sleep 0.05
  done
  kill -KILL $pid
  wait $pid 2>/dev/null || true
  if [ -n "$idle" ] && [ -z "$first" ]; then first=idle; fi
  restarts+=("${first:-never}")
  echo "after kill $round: $(count newsflow.articles) distinct article keys, $(total newsflow.articles) records; it published its first article ${first:-never} s after its start"
done
"$bin" run > "$work/final.log" 2>&1 &
pid=$!; pids+=($pid)

for _ in $(seq 120); do
  keys=$(count newsflow.articles); dlq=$(count newsflow.dlq)
  [ "$keys" -ge "$expected" ] && [ "$dlq" -ge 3 ] && break
  sleep 2
done
kill -TERM $pid; wait $pid || fail "final daemon did not exit cleanly"
keys=$(count newsflow.articles); dlq=$(count newsflow.dlq); records=$(total newsflow.articles)
echo "inputs=$inputs (text items $texts, feeds $feeds) replay_articles=$expected distinct_article_keys=$keys dead_letters=$dlq article_records=$records rewritten=$((records - keys)) kills=5 first_article_after_start_s=${restarts[*]}"
[ "$dlq" -eq 3 ] || fail "expected the 3 poison messages in the DLQ, found $dlq"
[ "$keys" -eq "$expected" ] || fail "lost: $((expected - keys)) articles"
# Copies produced under new ids must still be recognized after the restarts: every verdict as
# the uninterrupted replay gives it (the window, the stories and the document frequencies came
# back from the state changelog each time).
kcat -b "$NEWSFLOW_KAFKA__BROKERS" -C -t newsflow.articles -e -q -f '%s\n' > "$work/kafka.jsonl" 2>/dev/null
python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
  --min-dup-f1 1.0 --min-bcubed 0.99 --min-same-verdict 1.0 ||
  fail "verdicts after the restarts differ from an uninterrupted replay"
grep -h '"window_restored"' "$work"/run*.log "$work/final.log" | tail -1
# Every restart after a kill (the first start has no killed predecessor) publishes within 10 s
# of its start, with the shipped session timeout; NEWSFLOW_TEST_RESTART_LIMIT_S widens it for a
# sanitizer build.
limit=${NEWSFLOW_TEST_RESTART_LIMIT_S:-10}
for s in "${restarts[@]:1}"; do
  [ "$s" = idle ] && continue
  python3 -c "import sys; sys.exit(0 if '$s' != 'never' and float('$s') <= $limit else 1)" ||
    fail "a restart published its first article after ${s} s (limit $limit s): ${restarts[*]}"
done
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# Restore from a changelog the broker has compacted, on a real Apache Kafka: three copies of the
# sample pages a day and a half apart (exact duplicates, and articles that leave the 72-hour
# window) with a feed and text items, in three parts (half, a quarter, a quarter), each judged by
# a `newsflow run` of its own that snapshots its state every 20 articles (each snapshot
# tombstones the records it covers and the snapshot before). The broker's log cleaner compacts
# the changelog as it goes (segment.ms and min.cleanable.dirty.ratio made small on the topic):
# the second part is judged after a restore from a changelog compacted with its tombstones kept,
# the third after they are gone too (delete.retention.ms 20 s). Every verdict equal to an
# uninterrupted `replay` of the whole stream, nothing lost, and a restart after that consumes
# nothing. With EXACTLY_ONCE=1 the changelog also holds transaction markers for the cleaner, and
# no article is published twice.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; build=$2; work=$2/broker_compaction${EXACTLY_ONCE:+_exactly_once}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 5 "$work"/*.log >&2 || true; exit 1; }
source "$src/tests/broker/lib.sh"
[ -n "${EXACTLY_ONCE:-}" ] && export NEWSFLOW_KAFKA__DELIVERY=exactly_once
# Snapshots (and the tombstones with them) often; small batches, so that every judged input is
# committed at many moments and a snapshot is taken at them.
export NEWSFLOW_KAFKA__STATE_SNAPSHOT_ARTICLES=20 NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=10
port=$(free_port); export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port

python3 "$src/tests/broker/copies.py" "$src/samples/pages.jsonl.gz" 3 "$work/input.jsonl" 129600
reference_stream "$work/input.jsonl"
lines=$(wc -l < "$work/stream.jsonl")
head -n $((lines / 2)) "$work/stream.jsonl" > "$work/part1.jsonl"
head -n $((lines * 3 / 4)) "$work/stream.jsonl" | tail -n +$((lines / 2 + 1)) > "$work/part2.jsonl"
tail -n +$((lines * 3 / 4 + 1)) "$work/stream.jsonl" > "$work/part3.jsonl"

"$bin" create-topics --partitions 2 > "$work/topics.txt" || fail "create-topics: $(cat "$work/topics.txt")"
# Every append rolls a segment (the records carry their event time, of 2023, as timestamp; a
# segment older than segment.ms rolls), and the cleaner takes the topic as soon as anything is
# dirty (the snapshots' chunks are most of its bytes: at any ratio above 0 a few dirty records
# would wait). A cleaning keeps the tombstones it finds and sets their time to go, 20 s later (a
# later delete.retention.ms does not move it): long enough for the second part's restore.
topic_config state segment.ms=100 min.cleanable.dirty.ratio=0 delete.retention.ms=20000 \
  > "$work/state-config.txt"

# Part N of the stream produced and judged by one `newsflow run` (log: $work/runN.log) until
# the articles of parts 1 to N are published; then stopped (SIGTERM).
judged=""
judge_part() {
  cat "$work"/part[1-$1].jsonl > "$work/upto$1.jsonl"
  "$bin" replay --input "$work/upto$1.jsonl" --output "$work/upto$1.replay.jsonl" --quiet
  local want t0 pid
  want=$(wc -l < "$work/upto$1.replay.jsonl")
  "$bin" produce --input "$work/part$1.jsonl" --quiet > /dev/null
  t0=$(date +%s.%N)
  "$bin" run > "$work/run$1.log" 2>&1 &
  pid=$!; pids+=($pid)
  wait_ready 30 $pid "$work/run$1.log"
  judged+="; part $1: ready in $(since "$t0") s"
  for _ in $(seq 240); do
    [ "$(distinct articles)" -ge "$want" ] && break
    kill -0 $pid 2>/dev/null || fail "the daemon exited"
    sleep 0.25
  done
  kill -TERM $pid; wait $pid || fail "the daemon of part $1 did not exit cleanly"
  [ "$(distinct articles)" -ge "$want" ] ||
    fail "part $1: $(distinct articles) of $want articles published"
  [ "$1" -eq 1 ] && return
  grep -q '"state_snapshot_loaded"' "$work/run$1.log" || fail "part $1: the restore loaded no snapshot"
  local restored
  restored=$(grep '"window_restored"' "$work/run$1.log")
  judged+=" (restored $(value_of "$restored" articles) records after the snapshot, $(value_of "$restored" held) articles held)"
}

judge_part 1
snapshots=$(grep -c '"state_snapshot_written"' "$work/run1.log" || true)
[ "$snapshots" -ge 2 ] || fail "the first run wrote $snapshots snapshots, not 2 or more"
read -r written tombstones _ <<< "$(stored state)"
kept=$(cleaned)
[ "$(cut -d' ' -f3 <<< "$kept" | tr -d '(')" -gt 4 ] || fail "no tombstone kept: $kept"
judge_part 2
gone=$(cleaned tombstones)
judge_part 3

keys=$(distinct articles)
echo "replay_articles=$expected distinct_article_keys=$keys article_records=$(records articles) first run: $snapshots snapshots, $written records ($tombstones tombstones) in the changelog; compacted: $kept; tombstones removed: $gone$judged"
[ "$keys" -eq "$expected" ] || fail "lost: $((expected - keys)) articles"
if [ -n "${EXACTLY_ONCE:-}" ]; then
  [ "$(records articles)" -eq "$keys" ] || fail "$(($(records articles) - keys)) articles published twice"
fi
compare_with_replay
check_nothing_left
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# `newsflow produce --rate` on a real Apache Kafka delivers a paced stream in the order it is
# sent, a topic's first record included: 20 sample pages, then a feed (the first record of the
# feeds topic), then the other 12, at 40 a second, into topics that stamp each record with the
# time the broker appended it (LogAppendTime). The feed must be appended within 300 ms of its
# send (its produced_at header) and before the pages sent after it. librdkafka asks for a
# topic's partitions only when the first record for it is queued and holds the record until
# the answer: the feed was appended about a second late, after pages sent 0.5 s after it, and a
# daemon reading both topics judged it after them (tests/bench/kafka_broker_kills.sh).
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; build=$2; work=$2/broker_produce_new_topic
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; cat "$work"/*.txt >&2 || true; exit 1; }
source "$src/tests/broker/lib.sh"
"$bin" create-topics --partitions 1 > "$work/topics.txt" || fail "create-topics failed"
topic_config pages message.timestamp.type=LogAppendTime > "$work/pages-config.txt"
topic_config feeds message.timestamp.type=LogAppendTime > "$work/feeds-config.txt"
python3 - "$src/samples" "$work/input.jsonl" <<'PY'
import gzip, sys
lines = lambda name: [l for l in gzip.open(f"{sys.argv[1]}/{name}", "rt", encoding="utf-8") if l.strip()]
pages, feeds = lines("pages.jsonl.gz"), lines("feeds.jsonl.gz")
open(sys.argv[2], "w", encoding="utf-8").writelines(pages[:20] + feeds[:1] + pages[20:])
PY
"$bin" produce --input "$work/input.jsonl" --rate 40 --quiet > "$work/out.txt" 2> "$work/err.txt" ||
  fail "produce failed"
# "APPENDED PRODUCED_AT" of each record of a topic.
times() {
  kcat -b "$broker" -C -t "$(topic "$1")" -e -q -f '%T %h\n' 2>/dev/null |
    sed -n 's/^\([0-9]*\) .*produced_at=\([0-9]*\).*$/\1 \2/p'
}
times feeds > "$work/feeds-times.txt"
times pages > "$work/pages-times.txt"
read -r appended produced < "$work/feeds-times.txt" || fail "no feed record"
late=$((appended - produced))
overtook=$(awk -v a="$appended" -v p="$produced" '$2 > p && $1 < a' "$work/pages-times.txt" | wc -l)
echo "the feed appended $late ms after its send; $overtook pages sent after it appended before it;" \
  "$(tail -n 1 "$work/err.txt")"
[ "$(wc -l < "$work/pages-times.txt")" -ge 30 ] || fail "the pages topic holds too few records"
[ "$late" -lt 300 ] || fail "the feed reached the broker $late ms after it was sent"
[ "$overtook" -eq 0 ] || fail "$overtook pages sent after the feed were appended before it"
echo "1 passed, 0 failed"

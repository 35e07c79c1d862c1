#!/usr/bin/env bash
# Every record newsflow writes holds to its JSON Schema (deploy/schemas) and says which in its
# `schema` header: replay's articles and dead letters, then the daemon's articles, stories and
# dead letters through a dev broker (sample pages and feeds, poison messages).
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/schemas
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -20 "$work"/run.log >&2 || true; exit 1; }
source "$src/tests/integration/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (deploy/install-deps.sh installs it)"
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null ||
  fail "python3-jsonschema is not installed (deploy/install-deps.sh installs it)"
check() { /usr/bin/python3 "$src/tests/integration/schemas_check.py" "$src/deploy/schemas" "$@"; }
export NEWSFLOW_FETCH__ENABLED=false NEWSFLOW_LOG__LEVEL=warn

# Replay: the sample pages and feeds and one line of each malformed kind.
{ zcat "$src/samples/pages.jsonl.gz" "$src/samples/feeds.jsonl.gz"
  printf '%s\n' 'not json' '{"id":"nourl","html":"<p>x</p>"}' '' \
    '{"id":"bin","url":"https://x.test/b","html":"\u0000\u0001\u0002"}' \
    '{"id":"wall","url":"https://x.test/w","html":"<div><p>We use cookies to improve your experience. By clicking Accept all you consent to our use of cookies. Manage preferences</p></div>"}'
} > "$work/in.jsonl"
"$bin" replay --input "$work/in.jsonl" --output "$work/articles.jsonl" --dlq "$work/dlq.jsonl" \
  > /dev/null 2>&1 || fail "replay failed"
check replay "$work/articles.jsonl" "$work/dlq.jsonl"
grep -q '"reason":"consent_wall"' "$work/dlq.jsonl" || fail "a consent wall was not dead-lettered"

# Replay with fetching on, over two files: feed items whose links do not resolve (*.example)
# are dead letters of their own (`feed_item`), and a run over several files names each dead
# letter's file (`input_file`).
NEWSFLOW_FETCH__ENABLED=true NEWSFLOW_FETCH__CONNECT_TIMEOUT_MS=1000 NEWSFLOW_FETCH__TIMEOUT_MS=2000 \
  NEWSFLOW_FETCH__RETRIES=0 "$bin" replay --input "$src/samples/feeds.jsonl.gz" \
  --input "$work/in.jsonl" --output "$work/fetch.jsonl" --dlq "$work/fetch.dlq.jsonl" \
  > /dev/null 2>&1 || fail "replay with fetching on failed"
grep -q '"feed_item":true' "$work/fetch.dlq.jsonl" || fail "no feed-item dead letter to check"
grep -q '"input_file":' "$work/fetch.dlq.jsonl" || fail "no dead letter naming its file"
check replay "$work/fetch.jsonl" "$work/fetch.dlq.jsonl"

# Replay's stories (--stories), with the links across languages on: the multilingual stream's
# translated manual sections share names and commands.
NEWSFLOW_STORIES__RELATED_ACROSS_LANGUAGES=true "$bin" replay \
  --input "$src/tests/data/multilingual/stream.jsonl.gz" --output "$work/ml.jsonl" \
  --dlq "$work/ml.dlq.jsonl" --stories "$work/ml.stories.jsonl" > /dev/null 2>&1 ||
  fail "replay --stories failed"
[ "$(wc -l < "$work/ml.stories.jsonl")" = "$(wc -l < "$work/ml.jsonl")" ] ||
  fail "replay --stories did not write a story for every article"
grep -q '"related_stories":\["' "$work/ml.stories.jsonl" || fail "no related_stories to check"
check replay "$work/ml.jsonl" "$work/ml.dlq.jsonl" "$work/ml.stories.jsonl"

# The daemon through a dev broker.
start_dev_broker --partitions 4
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:0
# Fetching on: the sample feeds' link-only items point at *.example hosts, which do not resolve,
# so each becomes a feed-item dead letter (fetch_dns_error) with its own JSON value.
export NEWSFLOW_FETCH__ENABLED=true NEWSFLOW_FETCH__CONNECT_TIMEOUT_MS=1000
export NEWSFLOW_FETCH__TIMEOUT_MS=2000 NEWSFLOW_FETCH__RETRIES=0
"$bin" run > "$work/run.log" 2>&1 & pids+=($!)
"$bin" produce --input "$src/samples/pages.jsonl.gz" --poison > /dev/null
"$bin" produce --input "$src/samples/feeds.jsonl.gz" > /dev/null
count() { timeout 20 kcat -b "$broker" -C -t "$1" -e -q 2>/dev/null | wc -l; }
for _ in $(seq 120); do
  [ "$(count newsflow.dlq)" -ge 4 ] && [ "$(count newsflow.articles)" -ge 32 ] && break
  sleep 0.5
done
for t in articles stories dlq; do
  timeout 30 kcat -b "$broker" -C -t "newsflow.$t" -e -q -J > "$work/$t.kcat" 2>/dev/null || true
done
check kafka "$work/articles.kcat" "$work/stories.kcat" "$work/dlq.kcat"
grep -q 'fetch_' "$work/dlq.kcat" || fail "no feed-item dead letter to check"
echo "1 passed, 0 failed"

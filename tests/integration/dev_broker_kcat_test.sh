#!/usr/bin/env bash
# dev-broker + run + kcat over real TCP: pages in with kcat, articles out with kcat, and a
# restarted daemon resumes after the committed offsets instead of re-reading the topic.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/dev_broker_kcat
rm -rf "$work"; mkdir -p "$work"
command -v kcat >/dev/null || { echo "kcat is not installed (deploy/install-deps.sh installs it)"; exit 1; }
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do echo "== $f"; tail -20 "$f"; done; exit 1; }
stop_signal=TERM
source "$src/tests/integration/lib.sh"

start_dev_broker --brokers 2 --partitions 4
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:0
export NEWSFLOW_KAFKA__BATCH_MAX_MS=50
# The mock cluster holds a departed member until its session times out; keep restarts quick.
export NEWSFLOW_KAFKA__CONSUMER__SESSION_TIMEOUT_MS=6000

python3 -c '
import gzip, json, sys
for i, line in enumerate(gzip.open(sys.argv[1], "rt")):
    if i == 3: break
    open(sys.argv[2] + f"/page{i}.html", "w").write(json.loads(line)["html"])' \
  "$src/samples/pages.jsonl.gz" "$work"

articles() { kcat -b "$NEWSFLOW_KAFKA__BROKERS" -C -t newsflow.articles -e -q 2>/dev/null | grep -c '"id"' || true; }
wait_for_articles() {
  timeout 30 kcat -b "$NEWSFLOW_KAFKA__BROKERS" -C -t newsflow.articles -o beginning -c "$1" -q \
    > /dev/null 2>&1 || fail "expected $1 articles, have $(articles)"
}

"$bin" run > "$work/run1.log" 2>&1 & run=$!; pids+=($run)
kcat -b "$NEWSFLOW_KAFKA__BROKERS" -P -t newsflow.pages -H url=https://a.test/0 -k a0 "$work/page0.html"
kcat -b "$NEWSFLOW_KAFKA__BROKERS" -P -t newsflow.pages -H url=https://a.test/1 -k a1 "$work/page1.html"
wait_for_articles 2
kill -TERM $run; wait $run || fail "daemon exited non-zero on SIGTERM"

"$bin" run > "$work/run2.log" 2>&1 & run=$!; pids+=($run)
kcat -b "$NEWSFLOW_KAFKA__BROKERS" -P -t newsflow.pages -H url=https://a.test/2 -k a2 "$work/page2.html"
wait_for_articles 3
sleep 1
kill -TERM $run; wait $run || fail "restarted daemon exited non-zero on SIGTERM"
n=$(articles)
[ "$n" -eq 3 ] || fail "the restarted daemon re-read committed input: $n articles for 3 pages"
grep -q 'consumed=1 ' "$work/run2.log" || fail "the restarted daemon did not consume exactly one page"
echo "dev-broker + kcat: 3 pages in, $n articles out across a restart"
echo "1 passed, 0 failed"

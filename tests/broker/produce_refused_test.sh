#!/usr/bin/env bash
# `newsflow produce` on a real Apache Kafka counts what the broker took: two sample pages and one
# of 1.2 MB, over the broker's message.max.bytes (1 MiB by default), which it refuses
# (MSG_SIZE_TOO_LARGE). produce prints 2, names the refused message on stderr and exits 1; the
# pages topic holds the two. (It printed 3 and exited 0 before, and a benchmark waited for an
# input the broker never had.)
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; build=$2; work=$2/broker_produce_refused
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; cat "$work"/*.txt >&2 || true; exit 1; }
source "$src/tests/broker/lib.sh"
"$bin" create-topics --partitions 1 > "$work/topics.txt" || fail "create-topics failed"
python3 - "$src/samples/pages.jsonl.gz" "$work/input.jsonl" <<'EOF'
import gzip, json, sys
pages = [json.loads(l) for l in gzip.open(sys.argv[1], "rt", encoding="utf-8") if l.strip()]
big = dict(pages[2], id="big-page", url=pages[2]["url"] + "#big")
big["html"] = "<html><body>" + "<p>" + "word " * 240000 + "</p></body></html>"
with open(sys.argv[2], "w", encoding="utf-8") as f:
    for p in (pages[0], big, pages[1]):
        f.write(json.dumps(p) + "\n")
EOF
status=0
"$bin" produce --input "$work/input.jsonl" --quiet > "$work/out.txt" 2> "$work/err.txt" || status=$?
stored_pages=$(keys pages | grep -c . || true)
echo "produce printed $(cat "$work/out.txt"), exited $status, stderr: $(tail -n 1 "$work/err.txt");" \
  "the pages topic holds $stored_pages"
[ "$stored_pages" -eq 2 ] || fail "the pages topic holds $stored_pages records, not 2"
[ "$(cat "$work/out.txt")" = 2 ] || fail "produce counted $(cat "$work/out.txt") messages delivered"
[ "$status" -eq 1 ] || fail "produce exited $status with a message refused"
grep -q "1 messages not delivered" "$work/err.txt" || fail "produce did not say what it lost"
echo "1 passed, 0 failed"

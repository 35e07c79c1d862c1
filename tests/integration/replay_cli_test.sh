#!/usr/bin/env bash
# The real binary in batch mode: every input line ends in the output or the DLQ with a reason,
# gzip and plain input give the same result, and the CLI's error paths exit non-zero.
set -euo pipefail
src=$1; work=$2/replay_cli; bin=${NEWSFLOW_BIN}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Sample pages plus one line of every malformed kind.
zcat "$src/samples/pages.jsonl.gz" > "$work/in.jsonl"
cat >> "$work/in.jsonl" <<'LINES'
this is not json
{"id":"nourl","html":"<p>x</p>"}
{"id":"nobody","url":"https://x.test/"}
{"id":"empty","url":"https://x.test/e","html":"   "}
{"id":"bin","url":"https://x.test/b","html":"\u0000\u0001\u0002"}
{"id":"feed","url":"https://x.test/f","feed":"<rss/>"}
{"id":"b64","url":"https://x.test/l","html_b64":"PHA+Q2Fm6SBhdSBsYWl0PC9wPg=="}
{"id":"rss1","url":"https://x.test/rss","feed":"<rss><channel><item><title>Feed item</title><link>/i/1</link><description>Item words &amp;amp; more words.</description></item><item><title>Two</title><description>Second item text.</description></item></channel></rss>"}

LINES
printf '{"id":"latin","url":"https://x.test/raw","html":"caf\xe9"}\n' >> "$work/in.jsonl"
lines=$(wc -l < "$work/in.jsonl")
items_extra=1  # the feed line gives two articles

"$bin" replay --input "$work/in.jsonl" --output "$work/out.jsonl" --dlq "$work/dlq.jsonl"
out=$(wc -l < "$work/out.jsonl"); dlq=$(wc -l < "$work/dlq.jsonl")
# Feed items whose page could not be fetched get their own record besides their line's outcome
# (the rss1 item links to x.test, which never resolves; the item keeps its teaser text).
item_dlq=$(grep -c '"feed_item":true' "$work/dlq.jsonl" || true)
[ "$item_dlq" -eq 1 ] || fail "expected one feed-item dead letter, have $item_dlq"
grep -q '"feed_item":true.*"reason":"fetch_dns_error"' "$work/dlq.jsonl" || fail "no fetch_dns_error record"
[ $((out + dlq - item_dlq)) -eq $((lines + items_extra)) ] || fail "$lines lines in, $out articles + $dlq dead letters out"
for reason in invalid_json missing_url missing_body empty_document binary_content feed_no_items empty_line invalid_utf8; do
  grep -q "\"reason\":\"$reason\"" "$work/dlq.jsonl" || fail "no dead letter with reason $reason"
done
grep -q '"id":"b64"' "$work/out.jsonl" || fail "html_b64 (latin-1 bytes) did not become an article"
grep -q 'Café au lait' "$work/out.jsonl" || fail "html_b64 was not decoded to UTF-8"
grep -q '"kind":"exact"' "$work/out.jsonl" || fail "no exact duplicate found among the samples"
[ "$(grep -c '"feed_id":"rss1"' "$work/out.jsonl")" -eq 2 ] || fail "the feed line did not give two items with feed_id"
grep -q '"url":"https://x.test/i/1"' "$work/out.jsonl" || fail "feed item link not resolved against the feed URL"

# gzip input and stdin/stdout give the same articles.
gzip -c "$work/in.jsonl" > "$work/in.jsonl.gz"
"$bin" replay --input "$work/in.jsonl.gz" --output - --dlq /dev/null > "$work/out2.jsonl"
cmp -s "$work/out.jsonl" "$work/out2.jsonl" || fail "gzip input gave different output"
"$bin" replay --input - --output "$work/out3.jsonl" --dlq /dev/null < "$work/in.jsonl"
cmp -s "$work/out.jsonl" "$work/out3.jsonl" || fail "stdin input gave different output"

# Two gzip members (concatenated files) read as one stream, also from stdin.
head -n 3 "$work/in.jsonl" | gzip -c > "$work/two.jsonl.gz"
tail -n +4 "$work/in.jsonl" | gzip -c >> "$work/two.jsonl.gz"
"$bin" replay --input - --output "$work/out4.jsonl" --dlq /dev/null < "$work/two.jsonl.gz"
cmp -s "$work/out.jsonl" "$work/out4.jsonl" || fail "a two-member gzip on stdin gave different output"

# Error paths: missing input, a cut gzip file, bad config.
if "$bin" replay --input "$work/missing.jsonl" --output "$work/x.jsonl" 2>/dev/null; then fail "missing input accepted"; fi
head -c "$(($(stat -c %s "$work/in.jsonl.gz") / 2))" "$work/in.jsonl.gz" > "$work/cut.jsonl.gz"
if "$bin" replay --input "$work/cut.jsonl.gz" --output "$work/x.jsonl" 2> "$work/cut.err"; then
  fail "a cut gzip file was read as if whole"
fi
grep -q "gzip data is truncated" "$work/cut.err" || fail "a cut gzip file did not say so: $(cat "$work/cut.err")"
printf 'kafka: {group_id: ""}\nbogus: 1\n' > "$work/bad.yaml"
if "$bin" check-config "$work/bad.yaml" 2> "$work/check.err"; then fail "bad config accepted"; fi
grep -q "kafka.group_id" "$work/check.err" || fail "check-config did not name kafka.group_id"
grep -q "bogus: unknown key" "$work/check.err" || fail "check-config did not name the unknown key"
"$bin" check-config "$src/deploy/config/newsflow.yaml" > /dev/null || fail "the sample config does not check"
"$bin" --version | grep -q '^newsflow ' || fail "--version"
# redrive: a time it cannot read, and no brokers, are refused before anything is read.
set +e
NEWSFLOW_KAFKA__BROKERS=127.0.0.1:9 "$bin" redrive --since yesterday 2> "$work/redrive.err"; code=$?
NEWSFLOW_KAFKA__BROKERS= "$bin" redrive --dry-run 2> "$work/redrive2.err"; code2=$?
set -e
[ "$code" = 2 ] && grep -q "not RFC 3339" "$work/redrive.err" || fail "redrive took --since yesterday"
[ "$code2" = 2 ] && grep -q "kafka.brokers" "$work/redrive2.err" || fail "redrive ran without brokers"
echo "replay CLI: $lines lines -> $out articles + $dlq dead letters"
echo "1 passed, 0 failed"

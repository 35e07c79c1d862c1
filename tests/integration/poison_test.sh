#!/usr/bin/env bash
# Poison input against the real daemon: a dev broker in its own process, then binary junk, a
# gzip body cut short, a 50 MB page, invalid UTF-8, HTML nested 200,000 deep, XML entity bombs
# (billion laughs, external entities), an Atom title nested 200,000 deep, a feed of 100,000
# empty items, a header-less message,
# among ordinary pages (empty messages are in the Kafka integration test's poison set). The daemon must keep running, put every bad message in
# newsflow.dlq with a reason, commit past all of them, and stay under a peak-memory bound.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/poison
limit_mb=${POISON_RSS_LIMIT_MB:-768}
rm -rf "$work"; mkdir -p "$work/msgs"
fail() { echo "FAIL: $*" >&2; tail -20 "$work"/run.log >&2 || true; exit 1; }
source "$src/tests/integration/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (deploy/install-deps.sh installs it)"

start_dev_broker --partitions 4
port=$(free_port)
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
export NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=8 NEWSFLOW_LOG__LEVEL=warn
# Accept up to 64 MB inputs (so the 50 MB page reaches the extractor's own limit).
export NEWSFLOW_KAFKA__CONSUMER__FETCH_MAX_BYTES=70000000
export NEWSFLOW_KAFKA__CONSUMER__MAX_PARTITION_FETCH_BYTES=70000000

python3 - "$work/msgs" "$src/samples/pages.jsonl.gz" <<'PY'
import gzip, json, os, random, sys
out, samples = sys.argv[1], sys.argv[2]
rnd = random.Random(7)
def w(name, data, kind="pages"):
    open(os.path.join(out, f"{kind}--{name}"), "wb").write(data)
w("binary", bytes(rnd.getrandbits(8) for _ in range(1 << 20)))
page = json.loads(gzip.open(samples, "rt").readline())["html"].encode()
w("truncated-gzip", gzip.compress(page)[: len(page) // 5])
w("huge", b"<html><body>" + b"<p>" + b"word " * 10_000_000 + b"</p></body></html>")
w("invalid-utf8", b"<html><head><meta charset=utf-8></head><body><p>" + b"\xff\xfe\xc3\x28 bad bytes " * 2000 + b"</p></body></html>")
w("deep", b"<html><body>" + b"<div>" * 200_000 + b"deep text" + b"</div>" * 200_000 + b"</body></html>")
w("good", page)
laughs = b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' + b"".join(
    b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10) for i in range(1, 10)
) + b']><rss><channel><item><title>&lol9;</title><description>&lol9;</description></item></channel></rss>'
w("billion-laughs", laughs, "feeds")
w("xxe", b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss><channel><item><title>&x;</title><description>&x;</description></item></channel></rss>', "feeds")
w("many-items", b"<rss><channel>" + b"<item></item>" * 100_000 + b"</channel></rss>", "feeds")
w("not-a-feed", b"<html><body>a page on the feeds topic</body></html>", "feeds")
w("deep-feed", b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><title type="html">' + b"<b>" * 200_000 + b"x" + b"</b>" * 200_000 + b"</title></entry></feed>", "feeds")
PY
# The mock cluster trims a partition's log beyond about 5 MiB: the 50 MB page gets partition 3 to
# itself, everything else goes to partitions 0-2.
n=0
for f in "$work"/msgs/*; do
  name=$(basename "$f"); topic=newsflow.${name%%--*}; key=${name#*--}
  part=$((n % 3)); [ "$key" = "huge" ] && part=3
  kcat -b "$broker" -P -t "$topic" -p $part -k "$key" -H "url=https://poison.test/$key" \
    -X message.max.bytes=70000000 "$f" || fail "kcat could not produce $key"
  n=$((n + 1))
done
printf '<p>no url header</p>' | kcat -b "$broker" -P -t newsflow.pages -p 0 -k missing-url
n=$((n + 1))

"$bin" run > "$work/run.log" 2>&1 &
pid=$!; pids+=($pid)
metric() { (curl -s "http://127.0.0.1:$port/metrics" || true) | awk -v m="$1" '$1 ~ "^"m"({|$)" {s += $2} END {print s + 0}'; }
peak=0
for _ in $(seq 600); do
  kill -0 $pid 2>/dev/null || fail "the daemon died"
  rss=$(awk '/VmHWM/ {print int($2 / 1024)}' /proc/$pid/status)
  [ "$rss" -gt "$peak" ] && peak=$rss
  consumed=$(metric newsflow_messages_consumed_total)
  commits=$(metric newsflow_offset_commits_total)
  [ "${consumed%.*}" -ge "$n" ] && [ "${commits%.*}" -ge 1 ] && break
  sleep 0.2
done
echo "consumed $(metric newsflow_messages_consumed_total) of $n messages"
sleep 1
kill -0 $pid 2>/dev/null || fail "the daemon died"
peak=$(awk '/VmHWM/ {print int($2 / 1024)}' /proc/$pid/status)
curl -s "http://127.0.0.1:$port/metrics" > "$work/metrics.txt"
curl -sf "http://127.0.0.1:$port/healthz" > /dev/null || fail "/healthz does not answer after the poison"
kill -TERM $pid
wait $pid || fail "the daemon exited non-zero"

dlq=$(kcat -b "$broker" -C -t newsflow.dlq -e -q -f '%k %h\n' 2>/dev/null)
articles=$(kcat -b "$broker" -C -t newsflow.articles -e -q -f '%k\n' 2>/dev/null | sort -u | wc -l)
echo "$dlq" | while read -r key headers; do
  echo "$key $(echo "$headers" | grep -o 'error_reason=[a-z_0-9]*')"
done | sort -u > "$work/dlq.txt"
cat "$work/dlq.txt"
for key in binary truncated-gzip huge deep deep-feed many-items not-a-feed missing-url; do
  grep -q "^$key " "$work/dlq.txt" || fail "$key is not in the DLQ"
done
grep -q '^huge .*error_reason=too_large' "$work/dlq.txt" || fail "the 50 MB page is not too_large"
grep '^huge ' <<< "$dlq" | grep -q 'payload_truncated_from=' || fail "the 50 MB page's DLQ record was not truncated"
# The good page, the entity bombs (read with their entities unexpanded) and the page with
# invalid UTF-8 (read with replacement characters, as browsers do) are articles: every
# message is accounted for.
total=$((articles + $(wc -l < "$work/dlq.txt")))
[ "$total" -ge "$n" ] || fail "$n messages in, $articles articles + $(wc -l < "$work/dlq.txt") dead letters out"
echo "poison: $n messages, $(wc -l < "$work/dlq.txt") dead letters, $articles articles, peak RSS ${peak} MiB (bound ${limit_mb} MiB), no crash"
[ "$peak" -le "$limit_mb" ] || fail "peak RSS ${peak} MiB is above ${limit_mb} MiB"
echo "1 passed, 0 failed"

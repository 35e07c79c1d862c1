#!/usr/bin/env bash
# Hostile input against the real daemon, every case of issue 35's table at once, interleaved with
# 20 ordinary pages, on a dev broker with a local site whose robots.txt asks 30 s between
# requests: a text whose article record grows past what the producer may send once escaped as
# JSON; a feed of 50 link-only items on that site; an Atom feed whose root has 100,000 attributes
# over 100,000 entries; a page whose URL is javascript:; 400 KB of "<script>" and 1 MB of "<";
# and 40 HTTP clients that send a request a byte at a time while it runs. Every ordinary page
# must be published and the run must end within seconds, each hostile input as articles or dead
# letters with their reasons, no article published more than twice (a rewind's worth), /healthz
# answering throughout, and the peak memory bounded.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/hostile
limit_mb=${HOSTILE_RSS_LIMIT_MB:-1024}
rm -rf "$work"; mkdir -p "$work/msgs"
fail() { echo "FAIL: $*" >&2; tail -20 "$work"/run.log >&2 || true; exit 1; }
source "$src/tests/integration/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (deploy/install-deps.sh installs it)"

start_dev_broker --partitions 4
# The slow site: robots.txt with Crawl-delay 30, an article at every path.
site_port=$(free_port)
start_local_site "$site_port" $'User-agent: *\nCrawl-delay: 30\n'

port=$(free_port)
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
export NEWSFLOW_KAFKA__BATCH_MAX_MESSAGES=8 NEWSFLOW_LOG__LEVEL=warn
export NEWSFLOW_FETCH__ENABLED=true NEWSFLOW_FETCH__ALLOW_NETWORKS=127.0.0.1/32
export NEWSFLOW_FETCH__BATCH_DEADLINE_MS=3000
# The producer may send 400 KB a record: the 300 KB text of quotes is 600 KB as JSON.
export NEWSFLOW_KAFKA__PRODUCER__MESSAGE_MAX_BYTES=400000 NEWSFLOW_EXTRACT__MAX_TEXT_BYTES=1048576

python3 - "$work/msgs" "$src/samples/pages.jsonl.gz" "$site_port" <<'PY'
import gzip, json, os, sys
out, samples, site = sys.argv[1], sys.argv[2], sys.argv[3]
pages = [json.loads(l) for l in gzip.open(samples, "rt")][:20]
n = 0
def w(name, data, kind="pages", url=None, ctype=None):
    global n
    n += 1
    meta = {"url": url or f"https://hostile.test/{name}"}
    if ctype: meta["content_type"] = ctype
    open(os.path.join(out, f"{n:03d}--{kind}--{name}"), "wb").write(data)
    open(os.path.join(out, f"{n:03d}--{kind}--{name}.meta"), "w").write(json.dumps(meta))
hostile = [
    ("quotes", json.dumps({"url": "https://hostile.test/quotes", "text": '"' * (300 * 1024)}).encode(),
     "pages", None, "application/json"),
    ("crawl-delay-feed", ("<rss><channel><title>slow</title>" + "".join(
        f"<item><guid>s{i}</guid><title>Slow post {i}</title><link>http://127.0.0.1:{site}/post/{i}</link></item>"
        for i in range(50)) + "</channel></rss>").encode(), "feeds", f"http://127.0.0.1:{site}/feed", None),
    ("attributes-feed", ('<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://hostile.test/"'
        + "".join(f' a{i}=""' for i in range(100000)) + ">" + "<entry></entry>" * 100000 + "</feed>").encode(),
     "feeds", None, None),
    ("javascript", b"<html><body><p>" + b"An ordinary looking paragraph of words. " * 10 + b"</p></body></html>",
     "pages", "javascript:alert(document.domain)//x", None),
    ("scripts", b"<html><body><p>" + b"<script>" * 50000 + b"</p></body></html>", "pages", None, None),
    ("angles", b"<html><body><p>" + b"<" * (1 << 20) + b"</p></body></html>", "pages", None, None),
]
for i, p in enumerate(pages):
    w(f"ordinary-{i}", p["html"].encode(), "pages", p["url"])
    if i % 3 == 0 and hostile:
        name, data, kind, url, ctype = hostile.pop(0)
        w(name, data, kind, url, ctype)
PY
n=0
for f in "$work"/msgs/*; do
  case $f in *.meta) continue ;; esac
  name=$(basename "$f"); kind=${name#*--}; key=${kind#*--}; topic=newsflow.${kind%%--*}
  url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$f.meta")
  ctype=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("content_type",""))' "$f.meta")
  headers=(-H "url=$url" -H "fetched_at=2026-11-01T00:$(printf %02d $((n % 60))):00Z")
  [ -n "$ctype" ] && headers+=(-H "content_type=$ctype")
  kcat -b "$broker" -P -t "$topic" -p $((n % 4)) -k "$key" "${headers[@]}" \
    -X message.max.bytes=10000000 "$f" || fail "kcat could not produce $key"
  n=$((n + 1))
done

# 40 clients that send a request header a byte a second, for the whole run.
python3 - "$port" > "$work/slow.log" 2>&1 <<'PY' &
import socket, sys, threading, time
def slow():
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000:
                s.send(bytes([b])); time.sleep(1)
        except OSError:
            time.sleep(0.5)
for _ in range(40): threading.Thread(target=slow, daemon=True).start()
time.sleep(3600)
PY
pids+=($!)

t0=$(date +%s.%N)
"$bin" run > "$work/run.log" 2>&1 &
pid=$!; pids+=($pid)
metric() { (curl -s -m 2 "http://127.0.0.1:$port/metrics" || true) | awk -v m="$1" '$1 ~ "^"m"({|$)" {s += $2} END {print s + 0}'; }
peak=0 probes=0 missed=0 started=0
for _ in $(seq 1200); do
  kill -0 $pid 2>/dev/null || fail "the daemon died"
  rss=$(awk '/VmHWM/ {print int($2 / 1024)}' /proc/$pid/status)
  [ "$rss" -gt "$peak" ] && peak=$rss
  if curl -sf -m 2 "http://127.0.0.1:$port/healthz" > /dev/null; then
    started=1
  elif [ "$started" = 1 ]; then
    missed=$((missed + 1))
  fi
  probes=$((probes + 1))
  committed=$(metric newsflow_offset_commits_total)
  consumed=$(metric newsflow_messages_consumed_total)
  [ "${consumed%.*}" -ge "$n" ] && [ "${committed%.*}" -ge 1 ] && break
  sleep 0.25
done
sleep 2
elapsed=$(python3 -c "import time; print(round(time.time() - $t0, 1))")
kill -0 $pid 2>/dev/null || fail "the daemon died"
[ "$missed" -eq 0 ] || fail "/healthz went unanswered $missed times of $probes (40 slow clients)"
kill -TERM $pid
wait $pid || fail "the daemon exited non-zero"

kcat -b "$broker" -C -t newsflow.dlq -e -q -f '%k\t%h\n' 2>/dev/null |
  sed -E 's/\t.*error_reason=([a-z_0-9]+).*/\t\1/' > "$work/dlq.txt"
kcat -b "$broker" -C -t newsflow.articles -e -q -f '%k\n' 2>/dev/null > "$work/article_keys.txt"
kcat -b "$broker" -C -t newsflow.articles -e -q -f '%s\n' 2>/dev/null |
  python3 -c 'import json,sys; [print(json.loads(l)["url"]) for l in sys.stdin if l.strip()]' \
  > "$work/article_urls.txt"
cut -f2 "$work/dlq.txt" | sort | uniq -c | sort -rn
reason_count() { awk -F'\t' -v r="$1" '$2 == r' "$work/dlq.txt" | wc -l; }
# No input has more than one dead letter of a kind (a batch judged again writes it again only
# after a rewind, which none of these needs).
dups=$(grep -v fetch_deferred "$work/dlq.txt" | sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] || fail "$dups inputs have the same dead letter twice"
# Every ordinary page is an article.
for url in $(python3 -c 'import gzip,json,sys; [print(json.loads(l)["url"]) for l in list(gzip.open(sys.argv[1],"rt"))[:20]]' "$src/samples/pages.jsonl.gz"); do
  grep -qxF "$url" "$work/article_urls.txt" || fail "the ordinary page $url was not published"
done
dead_letters_of() { awk -F'\t' -v k="$1" -v r="$2" '$1 == k && $2 == r' "$work/dlq.txt" | wc -l; }
[ "$(dead_letters_of quotes output_too_large)" -eq 1 ] ||
  fail "the text of quotes is not one output_too_large dead letter"
[ "$(dead_letters_of javascript invalid_url)" -eq 1 ] ||
  fail "the javascript: page is not one invalid_url dead letter"
[ "$(dead_letters_of attributes-feed feed_no_items)" -eq 1 ] ||
  fail "the feed of 100,000 attributes is not one feed_no_items dead letter"
# The slow site's feed: what its Crawl-delay let through in the deadline is published, every
# other item waits for a later try in newsflow.fetch-retries (fetch_deferred, one record per
# item; the first is a minute away), and nothing is lost.
slow_articles=$(grep -c "127.0.0.1:$site_port/post/" "$work/article_urls.txt" || true)
deferred=$(reason_count fetch_deferred)
kcat -b "$broker" -C -t newsflow.fetch-retries -e -q -f '%k\t%s\n' 2>/dev/null > "$work/retries.txt"
waiting=$(grep -c '"reason":"fetch_deferred"' "$work/retries.txt" || true)
most_retries=$(cut -f1 "$work/retries.txt" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
[ "${most_retries:-0}" -le 2 ] || fail "an item was scheduled for a later try $most_retries times"
[ "$slow_articles" -ge 1 ] || fail "no item of the slow site's feed was published"
[ $((slow_articles + deferred + waiting)) -ge 50 ] ||
  fail "the slow feed: $slow_articles articles + $deferred deferred + $waiting waiting of 50 items"
# The scripts and the angles: an article or a dead letter each.
for key in scripts angles; do
  grep -q "^$key	" "$work/dlq.txt" || grep -q "hostile.test/$key" "$work/article_urls.txt" ||
    fail "$key is neither an article nor a dead letter"
done
most=$(sort "$work/article_keys.txt" | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
[ "${most:-0}" -le 2 ] || fail "an article was published $most times"
echo "hostile: $n inputs in ${elapsed} s, $(sort -u "$work/article_keys.txt" | wc -l) articles, $(wc -l < "$work/dlq.txt") dead letters, $waiting links waiting for a later try, /healthz answered $probes probes with 40 slow clients, peak RSS ${peak} MiB (bound ${limit_mb} MiB)"
python3 -c "import sys; sys.exit(0 if $elapsed < 90 else 1)" || fail "the run took ${elapsed} s"
[ "$peak" -le "$limit_mb" ] || fail "peak RSS ${peak} MiB is above ${limit_mb} MiB"
echo "1 passed, 0 failed"

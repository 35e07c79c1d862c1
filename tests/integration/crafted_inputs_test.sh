#!/usr/bin/env bash
# Crafted inputs of issue 53's table through the real binary: each page alone through `extract`
# (no crash, an answer within a time bound and a memory bound), pages between ordinary lines
# through `replay` (no ordinary line lost beside them), a feed of 20,000 items (the items past
# extract.max_feed_items are one dead letter), and the same inputs in a live `newsflow run` on a
# dev broker, one of them as the page a feed item links to on a site on 127.0.0.1.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/crafted_inputs
seconds=${CRAFTED_SECONDS:-2}
rss_limit_mb=${CRAFTED_RSS_LIMIT_MB:-160}
rm -rf "$work"; mkdir -p "$work/pages"
ulimit -c 0
fail() { echo "FAIL: $*" >&2; tail -20 "$work"/run.log >&2 2>/dev/null || true; exit 1; }
source "$src/tests/integration/lib.sh"

python3 - "$work/pages" <<'PY'
import os, sys
out = sys.argv[1]
head = b"<html><head><title>Crafted</title>"
body = b"<body><article><p>" + b"An ordinary paragraph of an ordinary article about the town. " * 20 + b"</p></article>"
def page(name, ld=b"", markup=b""):
    open(os.path.join(out, name + ".html"), "wb").write(
        head + (b'<script type="application/ld+json">' + ld + b"</script>" if ld else b"")
        + b"</head>" + body + markup + b"</body></html>")
page("jsonld_objects", ld=b'{"@type":"NewsArticle","a":' + b'{"a":' * 100000 + b"1" + b"}" * 100001)
page("jsonld_arrays", ld=b'{"@type":"NewsArticle","author":' + b"[" * 200000 + b"]" * 200000 + b"}")
page("jsonld_graph", ld=b'{"@graph":[' + b'{"@graph":[' * 50000 + b"]}" * 50000 + b"]}")
names = b",".join(b'{"@type":"Person","name":"Author %d"}' % i for i in range(180000))
page("jsonld_authors", ld=b'{"@type":"NewsArticle","headline":"H","author":[' + names + b"]}")
page("jsonld_authors_1mb", ld=b'{"@type":"NewsArticle","headline":"H","author":[' + names[:1000000].rsplit(b",", 1)[0] + b"]}")
page("stray_end_tags_i", markup=b"<i></x>" * ((1 << 20) // 7))
page("stray_end_tags_i_8mb", markup=b"<i></x>" * ((8 << 20) // 7 - 1000))
page("stray_end_tags_div", markup=b"<div></b>" * ((1 << 20) // 9))
page("deep_then_stray", markup=b"<span>" * 4000 + b"</li>" * ((4 << 20) // 5))
page("formatting_reopened", markup=b"".join(b"<div><b class=c%d>x</div>" % i for i in range(40000)) + b"<div>x</div>" * 200000)
PY

# Each page alone: an answer (an article or a refusal), never a signal, in bounded time and memory.
for f in "$work"/pages/*.html; do
  name=$(basename "$f" .html)
  rc=0
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$bin" extract "$f" > "$work/$name.out" 2> "$work/$name.err" || rc=$?
  [ "$rc" -le 1 ] || fail "extract $name exited $rc: $(tail -c 300 "$work/$name.err")"
  read -r secs kb < <(tail -1 "$work/$name.time")
  echo "extract $name: exit $rc in ${secs} s, peak ${kb} KB $(head -c 120 "$work/$name.err")"
  python3 -c "import sys; sys.exit(0 if $secs < $seconds else 1)" || fail "extract $name took $secs s"
  [ $((kb / 1024)) -le "$rss_limit_mb" ] || fail "extract $name peaked at $((kb / 1024)) MiB"
done
grep -q '"text":"An ordinary paragraph' "$work/jsonld_objects.out" ||
  fail "the page with nested JSON-LD lost its article"
grep -q "parse_error" "$work/stray_end_tags_i.err" || fail "1 MB of <i></x> was not refused"

# replay: 100 ordinary lines, each crafted page, 100 more: every ordinary line is an article.
python3 - "$src/samples/pages.jsonl.gz" "$work/pages" "$work/stream.jsonl" "$work/ordinary.jsonl" <<'PY'
import gzip, json, os, sys
samples = [json.loads(l) for l in gzip.open(sys.argv[1], "rt")]
crafted = sorted(os.listdir(sys.argv[2]))
def ordinary(k):
    p = dict(samples[k % len(samples)])
    p["id"] = f"ordinary-{k}"
    p["url"] = p["url"] + f"?copy={k}"
    return p
with open(sys.argv[3], "w") as out, open(sys.argv[4], "w") as plain:
    k = 0
    for name in crafted:
        for _ in range(100 // len(crafted) + 1):
            line = json.dumps(ordinary(k)); k += 1
            out.write(line + "\n"); plain.write(line + "\n")
        html = open(os.path.join(sys.argv[2], name), "rb").read().decode()
        out.write(json.dumps({"id": name, "url": f"https://crafted.test/{name}", "html": html}) + "\n")
PY
"$bin" replay --quiet --jobs 2 --input "$work/ordinary.jsonl" --output "$work/ordinary.out.jsonl" \
  > /dev/null 2>&1 || fail "replay of the ordinary lines failed"
"$bin" replay --quiet --jobs 2 --input "$work/stream.jsonl" --output "$work/stream.out.jsonl" \
  > "$work/replay.log" 2>&1 || fail "replay with the crafted pages failed: $(tail -3 "$work/replay.log")"
ordinary=$(grep -c '"id":"ordinary-' "$work/ordinary.out.jsonl" || true)
kept=$(grep -c '"url":"[^"]*?copy=' "$work/stream.out.jsonl" || true)
[ "$ordinary" -gt 0 ] && [ "$kept" -eq "$ordinary" ] ||
  fail "replay published $kept of the $ordinary ordinary articles beside the crafted pages"
lines=$(wc -l < "$work/stream.jsonl")
accounted=$(( $(wc -l < "$work/stream.out.jsonl") + $(wc -l < "$work/stream.out.jsonl.dlq.jsonl") ))
[ "$accounted" -ge "$lines" ] || fail "replay accounted for $accounted of $lines lines"

# A feed of 20,000 items (4 MB): the first extract.max_feed_items (1000) are read, the rest one dead letter.
python3 - "$work/feed.jsonl" <<'PY'
import json, sys
items = "".join(f"<item><guid>g{i}</guid><title>Item {i}</title><link>https://feed.test/{i}</link>"
                f"<description>{'Words of the item text. ' * 4}</description></item>" for i in range(20000))
rss = f"<rss version='2.0'><channel><title>Big</title>{items}</channel></rss>"
open(sys.argv[1], "w").write(json.dumps({"id": "big-feed", "url": "https://feed.test/rss", "feed": rss}) + "\n")
PY
"$bin" replay --quiet --input "$work/feed.jsonl" --output "$work/feed.out.jsonl" \
  > "$work/feed.log" 2>&1 || fail "replay of the big feed failed: $(tail -3 "$work/feed.log")"
items=$(wc -l < "$work/feed.out.jsonl")
[ "$items" -eq 1000 ] || fail "the big feed gave $items articles, not 1000"
grep -c '"reason":"feed_too_many_items"' "$work/feed.out.jsonl.dlq.jsonl" | grep -qx 1 ||
  fail "the items past the bound are not one feed_too_many_items dead letter"

# The daemon: the crafted pages of up to 1 MB (the mock cluster keeps about 5 MiB a partition)
# among the sample pages, and a feed whose item links to the nested JSON-LD page on a local
# site. No crash; every ordinary page and the feed's other item published.
start_dev_broker --partitions 8
site_port=$(free_port)
start_local_site "$site_port" $'User-agent: *\nAllow: /\n' "/deep=$work/pages/jsonld_objects.html"
port=$(free_port)
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port NEWSFLOW_LOG__LEVEL=warn
export NEWSFLOW_FETCH__ENABLED=true NEWSFLOW_FETCH__ALLOW_NETWORKS=127.0.0.1/32
export NEWSFLOW_STATE__DIR=$work/state NEWSFLOW_KAFKA__PRODUCER__MESSAGE_MAX_BYTES=10000000
pages=$("$bin" produce --input "$src/samples/pages.jsonl.gz")
crafted=0
for f in "$work"/pages/*.html; do
  name=$(basename "$f" .html)
  [ "$(stat -c %s "$f")" -le 1200000 ] || continue
  crafted=$((crafted + 1))
  kcat -b "$broker" -P -t newsflow.pages -k "$name" -H "url=https://crafted.test/$name" \
    -X message.max.bytes=10000000 "$f" || fail "kcat could not produce $name"
done
printf '%s' "<rss><channel><title>Local</title><item><guid>deep</guid><title>Deep</title><link>http://127.0.0.1:$site_port/deep</link></item><item><guid>plain</guid><title>Plain</title><link>http://127.0.0.1:$site_port/plain</link></item></channel></rss>" |
  kcat -b "$broker" -P -t newsflow.feeds -k local-feed -H "url=http://127.0.0.1:$site_port/feed"
inputs=$((pages + crafted + 1))
"$bin" run > "$work/run.log" 2>&1 &
pid=$!; pids+=($pid)
metric() { (curl -s -m 2 "http://127.0.0.1:$port/metrics" || true) | awk -v m="$1" '$1 ~ "^"m"({|$)" {s += $2} END {print s + 0}'; }
for _ in $(seq 240); do
  kill -0 $pid 2>/dev/null || fail "the daemon died"
  consumed=$(metric newsflow_messages_consumed_total)
  committed=$(metric newsflow_offset_commits_total)
  [ "${consumed%.*}" -ge "$inputs" ] && [ "${committed%.*}" -ge 1 ] && break
  sleep 0.5
done
sleep 2
kill -0 $pid 2>/dev/null || fail "the daemon died"
kill -TERM $pid
wait $pid || fail "the daemon exited non-zero"
kcat -b "$broker" -C -t newsflow.articles -e -q -f '%s\n' 2>/dev/null |
  python3 -c 'import json,sys; [print(json.loads(l)["url"]) for l in sys.stdin if l.strip()]' \
  > "$work/article_urls.txt"
for url in $(python3 -c 'import gzip,json,sys; [print(json.loads(l)["url"]) for l in gzip.open(sys.argv[1],"rt")]' "$src/samples/pages.jsonl.gz"); do
  grep -qxF "$url" "$work/article_urls.txt" || fail "the ordinary page $url was not published"
done
grep -qxF "http://127.0.0.1:$site_port/plain" "$work/article_urls.txt" ||
  fail "the feed's plain item was not published beside the deep one"
grep -qxF "http://127.0.0.1:$site_port/deep" "$work/article_urls.txt" ||
  fail "the page with nested JSON-LD, linked from a feed, was not published"
echo "crafted inputs: $(ls "$work"/pages/*.html | wc -l) pages through extract, replay and the daemon, a feed of 20,000 items; $(wc -l < "$work/article_urls.txt") articles from the daemon"
echo "1 passed, 0 failed"

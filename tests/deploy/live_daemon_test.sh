#!/usr/bin/env bash
# The real daemon against a dev broker in its own process, with the sample pages, checked the
# way production watches it:
#   1. /metrics names every metric the Grafana dashboard and the alert rules use;
#   2. the status page on / renders the stories and dead letters in headless Chromium (a
#      screenshot is saved), and the stories page on /stories shows the largest and the newest
#      stories as newsflow.stories holds them (headline, articles, copies, languages);
#   3. the systemd protocol: STATUS= during restore, READY=1 once partitions are assigned,
#      WATCHDOG=1 from the processing loop, STOPPING=1 on SIGTERM, and a clean exit.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/live_daemon
rm -rf "$work"; mkdir -p "$work"
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do echo "== $f"; grep -v '^WATCHDOG=1$' "$f" | tail -20; done
  exit 1
}
stop_signal=TERM
source "$src/tests/integration/lib.sh"
for tool in chromium python3 curl kcat; do
  command -v $tool >/dev/null || fail "$tool is not installed (deploy/install-deps.sh installs it)"
done

start_dev_broker --partitions 4
export NEWSFLOW_KAFKA__BROKERS=$broker
port=$(free_port)
export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port NEWSFLOW_KAFKA__BATCH_MAX_MS=50
export NEWSFLOW_KAFKA__CONSUMER__STATISTICS_INTERVAL_MS=500
produced=$("$bin" produce --input "$src/samples/pages.jsonl.gz" --poison)
# A feed whose item only links to its page, served on 127.0.0.1 (allow-listed for this test).
mkdir -p "$work/site"
python3 - "$src/samples/pages.jsonl.gz" "$work/site/post.html" <<'PY'
import gzip, json, sys
lines = gzip.open(sys.argv[1], "rt").read().splitlines()
open(sys.argv[2], "w").write(json.loads(lines[-1])["html"])
PY
site_port=$(free_port)
(cd "$work/site" && exec python3 -m http.server --bind 127.0.0.1 "$site_port" > "$work/site.log" 2>&1) &
pids+=($!)
site=http://127.0.0.1:$site_port
for _ in $(seq 50); do curl -sf "$site/post.html" > /dev/null && break; sleep 0.1; done
# Dated with the samples: an undated message would take the broker's timestamp (now), move the
# watermark years ahead and expire the sample stories the status page is checked for.
printf '{"id":"local-blog","url":"%s/feed.xml","fetched_at":"2023-05-06T01:00:00Z","feed":"<rss><channel><item><title>Linked only</title><link>%s/post.html</link></item></channel></rss>"}\n' \
  "$site" "$site" > "$work/feed.jsonl"
"$bin" produce --input "$src/samples/feeds.jsonl.gz" > /dev/null
"$bin" produce --input "$work/feed.jsonl" > /dev/null
produced=$((produced + 3))
export NEWSFLOW_FETCH__ALLOW_NETWORKS=127.0.0.1/32 NEWSFLOW_FETCH__HOST_DELAY_MS=0
# The samples span five days: with the default 72-hour window, which stories are still active
# at the end depends on the order the partitions are read in. A longer window keeps them all.
export NEWSFLOW_WINDOW__HOURS=240

python3 "$src/tests/deploy/notify_listener.py" "$work/notify.sock" "$work/notify.log" &
pids+=($!)
for _ in $(seq 50); do [ -S "$work/notify.sock" ] && break; sleep 0.1; done
NOTIFY_SOCKET=$work/notify.sock WATCHDOG_USEC=400000 "$bin" run --log-format json > "$work/run.log" 2>&1 &
run=$!; pids+=($run)

base=http://127.0.0.1:$port
metric_sum() { curl -sf "$base/metrics" | awk -v m="$1" '$1 ~ "^"m"({|$)" {s += $2} END {print s + 0}'; }
for _ in $(seq 300); do
  [ "$(metric_sum newsflow_messages_consumed_total)" -ge "$produced" ] 2>/dev/null && \
    [ "$(metric_sum newsflow_offset_commits_total)" -ge 1 ] && break
  sleep 0.1
done
[ "$(metric_sum newsflow_messages_consumed_total)" -ge "$produced" ] || fail "consumed fewer than $produced inputs"
sleep 1.5  # a statistics interval, so the lag gauges are set
curl -sf "$base/metrics" > "$work/metrics.txt" || fail "no /metrics"

# 1. The dashboard and the rules name only metrics the binary exposes.
python3 "$src/tests/deploy/metric_names.py" "$work/metrics.txt" \
  "$src/deploy/monitoring/newsflow-dashboard.json" "$src/deploy/monitoring/newsflow-alerts.yaml" \
  || fail "deploy/monitoring names metrics the binary does not expose"
grep -q '^newsflow_consumer_lag_messages{' "$work/metrics.txt" || fail "no consumer lag gauges"
grep -q '^newsflow_ready 1' "$work/metrics.txt" || fail "newsflow_ready is not 1"
grep -q '^newsflow_fetch_total{outcome="ok"} 1' "$work/metrics.txt" || fail "the linked page was not fetched"

# 2. The status page in headless Chromium.
chrome=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
        --disable-background-networking --disable-component-update --disable-sync
        --user-data-dir="$work/chromium" --hide-scrollbars --window-size=1200,1800)
timeout 60 "${chrome[@]}" --dump-dom "$base/" > "$work/status.dom.html" 2> "$work/chromium.log" \
  || fail "chromium could not load the status page"
for want in "Biggest stories" "binary_content" "missing_url" "Throughput"; do
  grep -q "$want" "$work/status.dom.html" || fail "status page lacks '$want'"
done
# The biggest story: its title is its latest member's headline (which member arrives last
# depends on timing), so it is found by a member's link.
grep -qi "doobie-brothers-set-50th" "$work/status.dom.html" \
  || fail "status page lacks the Doobie Brothers story"
timeout 60 "${chrome[@]}" --screenshot="$work/status-page.png" "$base/" >> "$work/chromium.log" 2>&1 \
  || fail "chromium could not take a screenshot"
size=$(stat -c %s "$work/status-page.png")
[ "$size" -gt 20000 ] || fail "screenshot is only $size bytes"
echo "status page screenshot: $work/status-page.png ($size bytes)"

# The stories page, rendered by Chromium, against the latest record of each story on
# newsflow.stories (tombstones: merged away).
timeout 60 "${chrome[@]}" --dump-dom "$base/stories" > "$work/stories.dom.html" \
  2>> "$work/chromium.log" || fail "chromium could not load the stories page"
kcat -b "$broker" -C -t newsflow.stories -e -q -f '%k\t%S\t%s\n' > "$work/stories.tsv" 2>/dev/null \
  || fail "cannot read newsflow.stories"
python3 - "$work/stories.dom.html" "$work/stories.tsv" <<'PY' || fail "the stories page disagrees with newsflow.stories"
import html.parser, json, sys
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.section = None; self.stories = {"largest": [], "newest": []}
        self.field = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and a.get("id") in self.stories: self.section = a["id"]
        elif tag == "li" and "data-story-id" in a and self.section:
            self.stories[self.section].append({"id": a["data-story-id"], "articles": int(a["data-articles"]),
                                               "copies": int(a["data-copies"]), "headline": "", "languages": [],
                                               "image": None, "description": ""})
        elif tag == "img" and a.get("class") == "card" and self.section:
            self.stories[self.section][-1]["image"] = a.get("src")
        elif tag == "p" and a.get("class") == "description": self.field = "description"
        elif tag == "b" and a.get("class") == "headline": self.field = "headline"
        elif tag == "span" and a.get("class") == "lang": self.field = "lang"
    def handle_endtag(self, tag):
        if tag in ("b", "span", "p"): self.field = None
    def handle_data(self, data):
        if not self.field or not self.section: return
        s = self.stories[self.section][-1]
        if self.field == "headline": s["headline"] += data
        elif self.field == "description": s["description"] += data
        else: s["languages"].append(data)
page = Page(); page.feed(open(sys.argv[1]).read())
latest = {}
for line in open(sys.argv[2]):
    key, size, value = line.rstrip("\n").split("\t", 2)
    if size == "-1": latest.pop(key, None)
    else: latest[key] = json.loads(value)
live = list(latest.values())
largest = sorted(live, key=lambda s: (-s["article_count"], [-ord(c) for c in s["last_updated"]], s["story_id"]))
newest = sorted(live, key=lambda s: ([-ord(c) for c in s["last_updated"]], -s["article_count"], s["story_id"]))
for name, want in (("largest", largest), ("newest", newest)):
    shown = page.stories[name]
    assert shown, "no %s stories on the page" % name
    assert [s["id"] for s in shown] == [s["story_id"] for s in want[:len(shown)]], \
        (name, [s["id"] for s in shown], [s["story_id"] for s in want[:len(shown)]])
    for s in shown:
        t = latest[s["id"]]
        assert s["articles"] == t["article_count"] and s["copies"] == t["copies"], (s, t)
        assert s["headline"] == (t["title"] or "(untitled)"), (s["headline"], t["title"])
        assert s["languages"] == t["languages"], (s["languages"], t["languages"])
        # The card: the representative's image and description as the record has them.
        assert s["image"] == t["image_url"], (s["image"], t["image_url"])
        assert s["description"] == (t["description"] or ""), (s["description"], t["description"])
cards = sum(1 for name in page.stories for s in page.stories[name] if s["image"])
assert cards > 0, "no story on the page shows an image"
print("stories page: %d largest and %d newest stories as newsflow.stories holds them (%d live, "
      "%d with an image)" % (len(page.stories["largest"]), len(page.stories["newest"]), len(live), cards))
PY
timeout 60 "${chrome[@]}" --screenshot="$work/stories-page.png" "$base/stories" \
  >> "$work/chromium.log" 2>&1 || fail "chromium could not take a screenshot of /stories"
echo "stories page screenshot: $work/stories-page.png ($(stat -c %s "$work/stories-page.png") bytes)"

# 3. systemd notifications, then a clean stop.
kill -TERM $run
wait $run || fail "daemon exited non-zero on SIGTERM"
sleep 0.2
grep -q '^STATUS=restoring' "$work/notify.log" || fail "no STATUS= during the window restore"
ready=$(grep -n '^READY=1$' "$work/notify.log" | head -1 | cut -d: -f1)
stopping=$(grep -n '^STOPPING=1$' "$work/notify.log" | head -1 | cut -d: -f1)
[ -n "$ready" ] || fail "no READY=1"
[ -n "$stopping" ] && [ "$stopping" -gt "$ready" ] || fail "no STOPPING=1 after READY=1"
pings=$(grep -c '^WATCHDOG=1$' "$work/notify.log" || true)
[ "$pings" -ge 3 ] || fail "only $pings watchdog pings with WatchdogSec=0.4s"
grep -q '^STATUS=consumed [1-9]' "$work/notify.log" || fail "no throughput STATUS= line"
# --log-format json holds for every line, librdkafka's own messages included.
python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$work/run.log" \
  || fail "run.log has a line that is not JSON"
echo "notify: READY=1 at message $ready, $pings watchdog pings, STOPPING=1 at message $stopping"
echo "1 passed, 0 failed"

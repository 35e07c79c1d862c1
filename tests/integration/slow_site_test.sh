#!/usr/bin/env bash
# A slow site against the real daemon (issue 53): four feeds, 3 s apart, each linking to a site
# that sends its pages a byte a second (its robots.txt too, the first time it is asked) and to a
# quick site, while an ordinary page is produced every half second. Before, every batch with a
# slow link waited for the fetch to time out (up to fetch.batch_deadline_ms) and the ordinary
# pages behind it waited with it; now a batch waits fetch.batch_wait_ms and what the slow site
# has not sent goes on as a later try. Checked: every ordinary page and every quick item is
# published within a few seconds of being produced (6 s; SLOW_SITE_MAX_LATENCY_S); each slow item ends as a later try, an
# article when the site answers the later try at once ("once" links) or a fetch_timeout dead
# letter after its tries ("forever" links); nothing is published twice.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/slow_site
max_latency_s=${SLOW_SITE_MAX_LATENCY_S:-6}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -20 "$work"/run.log >&2 || true; exit 1; }
stop_signal=TERM
source "$src/tests/integration/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (deploy/install-deps.sh installs it)"

start_dev_broker --partitions 2
# The slow site (one byte a second) and the quick site, in one process; on two addresses, as
# two sites are (requests are spaced and counted per host).
slow_port=$(free_port) quick_port=$(free_port)
python3 - "$slow_port" "$quick_port" > "$work/sites.log" 2>&1 <<'PY' &
import http.server, sys, threading, time
asked, lock = {}, threading.Lock()
def article(path):
    return (f"<html><head><title>Post {path}</title></head><body><article><p>"
            + f"A long enough article paragraph about {path}, with words of its own. " * 20
            + "</p></article></body></html>").encode()
class Slow(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        with lock:
            n = asked[self.path] = asked.get(self.path, 0) + 1
        print(f"{time.time():.3f} slow {self.path} #{n}", flush=True)
        trickle = self.path.startswith("/forever/") or n == 1
        if self.path == "/robots.txt" and not trickle:
            return self.send(404, b"none", "text/plain")
        body = b"User-agent: *\nAllow: /\n" if self.path == "/robots.txt" else article(self.path)
        if not trickle:
            return self.send(200, body, "text/html; charset=utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for b in body:
                self.wfile.write(bytes([b])); self.wfile.flush(); time.sleep(1)
        except OSError:
            pass
    def send(self, status, body, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
class Quick(Slow):
    def do_GET(self):
        if self.path == "/robots.txt":
            return self.send(404, b"none", "text/plain")
        self.send(200, article(self.path), "text/html; charset=utf-8")
for host, port, h in (("127.0.0.1", int(sys.argv[1]), Slow), ("127.0.0.2", int(sys.argv[2]), Quick)):
    s = http.server.ThreadingHTTPServer((host, port), h)
    s.daemon_threads = True
    threading.Thread(target=s.serve_forever, daemon=True).start()
time.sleep(3600)
PY
pids+=($!)

port=$(free_port)
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port NEWSFLOW_LOG__LEVEL=warn
export NEWSFLOW_FETCH__ENABLED=true NEWSFLOW_FETCH__ALLOW_NETWORKS=127.0.0.0/8
# A slow page times out after 10 s (before, every batch with a slow link waited that long) and is
# not tried again within its batch; a later try comes a second after the batch and is the last. fetch.batch_wait_ms and batch_deadline_ms: defaults.
# (SLOW_SITE_TIMEOUT_MS and SLOW_SITE_RETRIES=2 measure the defaults' 15 s and 2 retries.)
export NEWSFLOW_FETCH__TIMEOUT_MS=${SLOW_SITE_TIMEOUT_MS:-10000}
export NEWSFLOW_FETCH__RETRIES=${SLOW_SITE_RETRIES:-0}
export NEWSFLOW_FETCH__REQUEUE_BACKOFF_MS=1000 NEWSFLOW_FETCH__REQUEUE_ATTEMPTS=1
"$bin" run > "$work/run.log" 2>&1 &
pid=$!; pids+=($pid)
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/readyz" > /dev/null 2>&1 && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/readyz" > /dev/null || fail "the daemon did not become ready"

# The stream: an ordinary page every 0.5 s for 12 s, and at 1, 4, 7 and 10 s a feed of three
# link-only items (no text of their own): once/k (not in the first feed), forever/k on the slow
# site, quick/k on the quick one. The first feed's batch meets the slow robots.txt: its quick
# item must not wait for it.
python3 - "$broker" "$src/samples/pages.jsonl.gz" "$slow_port" "$quick_port" "$work" <<'PY'
import gzip, json, subprocess, sys, time
broker, samples, slow, quick, work = sys.argv[1:]
pages = [json.loads(l) for l in gzip.open(samples, "rt")][:24]
events = [(0.5 * i, "page", p) for i, p in enumerate(pages)]
events += [(1.0 + 3 * k, "feed", k) for k in range(4)]
events.sort(key=lambda e: e[0])
produced = open(f"{work}/produced.tsv", "w")
t0 = time.time()
for n, (at, kind, what) in enumerate(events):
    time.sleep(max(0.0, t0 + at - time.time()))
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    if kind == "page":
        topic, key, url, body = "newsflow.pages", what["id"], what["url"], what["html"]
    else:
        k = what
        url = f"http://127.0.0.1:{slow}/feed/{k}"
        items = [(f"Once {k}", f"http://127.0.0.1:{slow}/once/{k}"),
                 (f"Forever {k}", f"http://127.0.0.1:{slow}/forever/{k}"),
                 (f"Quick {k}", f"http://127.0.0.2:{quick}/quick/{k}")]
        if k == 0:
            # Its batch waits for the slow robots.txt, so the page would first be asked by the
            # later try: no "once" item here.
            items.pop(0)
        topic, key = "newsflow.feeds", f"feed-{k}"
        body = ("<rss version='2.0'><channel><title>Slow feed</title>" + "".join(
            f"<item><guid>{t}</guid><title>{t}</title><link>{l}</link></item>" for t, l in items)
            + "</channel></rss>")
    path = f"{work}/message"  # a file: one message, whatever its lines
    open(path, "wb").write(body.encode())
    subprocess.run(["kcat", "-b", broker, "-P", "-t", topic, "-p", str(n % 2), "-k", key,
                    "-H", f"url={url}", "-H", f"fetched_at={stamp}", path], check=True)
    print(f"{kind}\t{key}\t{url}\t{int(now * 1000)}", file=produced, flush=True)
PY

# Until every input has its end: the pages (as articles, or dead letters) and 4 quick items published, 3 "once" items
# published from their later try, 4 "forever" items dead letters (fetch_timeout).
check() {
  kcat -b "$broker" -C -t newsflow.articles -e -q -f '%T\t%s\n' 2>/dev/null > "$work/articles.tsv" || true
  kcat -b "$broker" -C -t newsflow.dlq -e -q -f '%T\t%h\n' 2>/dev/null > "$work/dlq.tsv" || true
  python3 - "$work" "$max_latency_s" "$1" <<'PY'
import json, statistics, sys
work, bound, final = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "final"
produced = {}
for line in open(f"{work}/produced.tsv"):
    kind, key, url, ms = line.rstrip("\n").split("\t")
    produced[url] = (kind, int(ms))
articles = []
for line in open(f"{work}/articles.tsv"):
    if "\t" in line:
        ts, value = line.rstrip("\n").split("\t", 1)
        articles.append((int(ts), json.loads(value)))
dead = [l for l in open(f"{work}/dlq.tsv") if l.strip()]
# A sample page without an article is a dead letter: published too.
dead_urls = {}
for l in dead:
    ts, headers = l.rstrip("\n").split("\t", 1)
    for h in headers.split(","):
        if h.startswith("url="):
            dead_urls.setdefault(h[4:], int(ts))
latency, problems = [], []
for url, (kind, ms) in produced.items():
    if kind != "page":
        continue
    got = [ts for ts, a in articles if a.get("url") == url] + [dead_urls.get(url, 1 << 62)]
    if min(got) < 1 << 62:
        latency.append((min(got) - ms) / 1000)
    elif final:
        problems.append(f"the ordinary page {url} was not published")
feeds = {k: ms for u, (kind, ms) in produced.items() if kind == "feed" for k in [u.rsplit("/", 1)[1]]}
titles = {}
for ts, a in articles:
    titles.setdefault(a.get("title", ""), []).append((ts, a))
quick = []
for k, ms in feeds.items():
    if f"Quick {k}" in titles:
        quick.append((titles[f"Quick {k}"][0][0] - ms) / 1000)
    elif final:
        problems.append(f"the quick item Quick {k} was not published")
once = sum(1 for k in feeds if f"Once {k}" in titles)
once_dead = [l for l in dead if "/once/" in l]
forever = sum(1 for l in dead if "error_reason=fetch_timeout" in l and "/forever/" in l)
published_forever = [t for t in titles if t.startswith("Forever")]
# A feed item is published once (the samples hold a page crawled twice: two versions of it).
ids = [a.get("id") for ts, a in articles if a.get("feed_url")]
twice = sorted({i for i in ids if ids.count(i) > 1})
pages = sum(1 for kind, ms in produced.values() if kind == "page")
done = len(latency) == pages and len(quick) == 4 and once == 3 and forever == 4
if not final:
    print(f"pages {len(latency)} quick {len(quick)} once {once} forever {forever}", file=sys.stderr)
    sys.exit(0 if done else 1)
if once != 3: problems.append(f"{once} of 3 'once' items published from their later try")
if once_dead: problems.append(f"a 'once' item is a dead letter: {once_dead}")
if forever != 4: problems.append(f"{forever} of 4 'forever' items are fetch_timeout dead letters")
if published_forever: problems.append(f"published without a page: {published_forever}")
if twice: problems.append(f"published more than once: {twice}")
worst = max(latency + quick, default=0)
if worst > bound:
    problems.append(f"an ordinary page or quick item took {worst:.1f} s (bound {bound} s)")
print(f"slow site: ordinary pages published {statistics.median(latency or [0]):.2f} s after "
      f"they were produced (median; worst {max(latency, default=0):.2f} s), quick items worst "
      f"{max(quick, default=0):.2f} s; 'once' items published from their later try: {once} of 3; "
      f"'forever' items fetch_timeout dead letters: {forever} of 4")
for p in problems:
    print("FAIL:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
}
end=$((SECONDS + 100))
while [ $SECONDS -lt $end ]; do
  kill -0 $pid 2>/dev/null || fail "the daemon died"
  check progress 2>> "$work/progress.log" && break
  sleep 1
done
kill -0 $pid 2>/dev/null || fail "the daemon died"
check final || fail "see above"
kill -TERM $pid
wait $pid || fail "the daemon exited non-zero"
echo "1 passed, 0 failed"

# Shared by the shell tests that run newsflow processes. Source it after setting `bin` and
# `work` and defining `fail`; set `stop_signal=TERM` first for a gentler cleanup than KILL.
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -"${stop_signal:-KILL}" "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# A TCP port that was free a moment ago on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts `newsflow dev-broker ARGS...` in its own process (log: $work/broker.log) and sets
# `broker` to its bootstrap list once it is ready.
start_dev_broker() {
  "$bin" dev-broker "$@" --bootstrap-file "$work/bootstrap" > "$work/broker.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$work/bootstrap" ] && break; sleep 0.1; done
  [ -s "$work/bootstrap" ] || fail "dev-broker wrote no bootstrap file"
  broker=$(cat "$work/bootstrap")
}

# Every input kind: the multilingual pages, the sample feed with full-text items, and text items
# (copies of every fifth article under new ids, with their titles, as a news API delivers them),
# in $work/stream.jsonl, and its replay in $work/replay.jsonl. Sets `stream` and `expected`
# (the replay's articles).
mixed_multilingual_stream() {
  local pages=$src/tests/data/multilingual/stream.jsonl.gz
  "$bin" replay --input "$pages" --output "$work/pages.jsonl" --dlq "$work/pages.dlq.jsonl"
  stream=$work/stream.jsonl
  python3 "$src/tests/integration/mixed_stream.py" "$pages" "$src/samples/feeds.jsonl.gz" \
    "$work/pages.jsonl" "$stream"
  "$bin" replay --input "$stream" --output "$work/replay.jsonl" --dlq "$work/replay.dlq.jsonl"
  expected=$(wc -l < "$work/replay.jsonl")
}

# Serves a site on 127.0.0.1:PORT in the background (log: $work/site.log): robots.txt says
# ROBOTS, each PATH=FILE given after it serves FILE, and every other path is an article
# ("Post PATH").
start_local_site() {
  local site_port=$1 robots=$2
  shift 2
  python3 - "$site_port" "$robots" "$@" > "$work/site.log" 2>&1 <<'PY' &
import http.server, sys
robots = sys.argv[2].encode()
files = dict(arg.split("=", 1) for arg in sys.argv[3:])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/robots.txt":
            body, ctype = robots, "text/plain"
        elif self.path in files:
            body, ctype = open(files[self.path], "rb").read(), "text/html; charset=utf-8"
        else:
            body = (f"<html><head><title>Post {self.path}</title></head><body><article><p>"
                    + "A long enough article paragraph about the local site. " * 20
                    + "</p></article></body></html>").encode()
            ctype = "text/html; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
  pids+=($!)
}

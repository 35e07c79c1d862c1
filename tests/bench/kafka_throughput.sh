#!/usr/bin/env bash
# Throughput and latency through Kafka, on the paths users run: a dev broker (64 partitions) and
# the dev stream (1,575 pages). Prints, in one run:
#   replay:  `newsflow replay` of the stream on one core, pages/s (the reference).
#   backlog: every page produced first, then the processes start: one `newsflow run` (all), or
#            two `--role extract` and one `--role dedup` (roles; --standby adds a second dedup).
#            Pages/s from the first input consumed to the last article acknowledged, and from the
#            processes' start (group joins included); the CPU cores the processes used between
#            the first input consumed and the last acknowledgement.
#   dedup:   (roles) one `--role dedup` fed from a pre-filled `newsflow.extracted` (the extractors
#            ran first and stopped): articles/s from its first input to its last acknowledgement.
#   latency: the processes run first, the pages come at RATE per second (`produce --rate`,
#            each with a produced_at header); per article, the time from its page's produce to
#            the article record's timestamp (the daemon produces it and waits for the ack).
# Usage: tests/bench/kafka_throughput.sh all|roles RATE [STREAM] [BUILD_DIR] [--standby]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
mode=$1; rate=$2
stream=${3:-$src/../shared/data/dedup/dev/stream.jsonl.gz}
bin=${4:-$src/build}/newsflow
work=$(mktemp -d)
fail() { echo "FAIL $*" >&2; tail -5 "$work"/*.log >&2; exit 1; }
stop_signal=TERM
source "$src/tests/integration/lib.sh"
export NEWSFLOW_LOG__LEVEL=warn
count() { kcat -b "$broker" -C -t "$1" -e -q -f '%k\n' 2>/dev/null | grep -v '^$' | sort -u | wc -l; }
now() { date +%s.%N; }
procs=() ports=()
start() {  # start NAME ROLE: a process with its metrics on a port of its own
  local port; port=$(free_port)
  NEWSFLOW_KAFKA__GROUP_INSTANCE_ID=$1 NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port \
    "$bin" run --role "$2" > "$work/$1.log" 2>&1 &
  procs+=($!); ports+=("$port")
}
start_processes() {
  procs=() ports=()
  if [ "$mode" = all ]; then
    start all all
  else
    start dedup dedup
    if [ "${5:-}" = --standby ]; then start standby dedup; fi
    start x1 extract
    start x2 extract
  fi
}
stop_processes() {
  for p in "${procs[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${procs[@]}"; do wait "$p" 2>/dev/null || true; done
  procs=() ports=()
}
# until_done N: waits for the first input consumed, then for N articles acknowledged; sets
# t_first, t_last, cpu_first and cpu_last. One poller process scrapes the metrics every 20 ms
# and reads the processes' CPU time: a shell loop starting curl and python3 at every turn took
# 0.7 of this machine's two cores, which the processes measured then did not have.
until_done() {
  local out
  out=$(python3 - "$1" "${#procs[@]}" "${procs[@]}" "${ports[@]}" <<'EOF'
import os, sys, time, urllib.request
want, k = float(sys.argv[1]), int(sys.argv[2])
pids, ports = sys.argv[3:3 + k], sys.argv[3 + k:]
tick = os.sysconf("SC_CLK_TCK")
def cpu():  # utime + stime of the processes, seconds
    total = 0
    for p in pids:
        fields = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick
def scrape():  # the samples of every process: [name{labels}, value]
    samples = []
    for port in ports:
        try:
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()
        except Exception:
            continue
        samples += [l.split() for l in body.decode().splitlines() if l and l[0] != "#"]
    return samples
def total(samples, prefix):
    return sum(float(s[-1]) for s in samples if s[0].startswith(prefix))
consumed = "newsflow_messages_consumed_total"
acked = 'newsflow_messages_produced_total{topic="newsflow.articles"}'
first = None
deadline = time.time() + 300
while time.time() < deadline:
    samples = scrape()
    if first is None and total(samples, consumed) > 0:
        first = (time.time(), cpu())
    if first is not None and total(samples, acked) >= want:
        print(first[0], first[1], time.time(), cpu())
        sys.exit(0)
    time.sleep(0.02)
print("timeout", total(scrape(), acked))
sys.exit(1)
EOF
) || fail "only ${out#timeout } of $1 articles acknowledged"
  read -r t_first cpu_first t_last cpu_last <<< "$out"
}
rate_of() { python3 -c "print(f'{$1 / ($3 - $2):.0f}')"; }

# Replay on one core: the reference.
t0=$(now)
"$bin" replay --jobs 1 --input "$stream" --output "$work/replay.jsonl" --quiet > /dev/null
t1=$(now)
n=$(wc -l < "$work/replay.jsonl")
replay_rate=$(rate_of "$n" "$t0" "$t1")

# Backlog.
start_dev_broker --brokers 1 --partitions 64
export NEWSFLOW_KAFKA__BROKERS=$broker
pages=$("$bin" produce --input "$stream")
t_start=$(now)
start_processes "$@"
until_done "$n"
stop_processes
backlog_rate=$(rate_of "$n" "$t_first" "$t_last")
backlog_rate_join=$(rate_of "$n" "$t_start" "$t_last")
cores=$(python3 -c "print(f'{($cpu_last - $cpu_first) / ($t_last - $t_first):.2f}')")
kill -TERM "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true; pids=()
rm -f "$work/bootstrap"

dedup_line=""
if [ "$mode" = roles ]; then
  # The dedup role alone, from a pre-filled newsflow.extracted.
  start_dev_broker --brokers 1 --partitions 64
  export NEWSFLOW_KAFKA__BROKERS=$broker
  "$bin" produce --input "$stream" > /dev/null
  start x1 extract
  start x2 extract
  for _ in $(seq 1200); do [ "$(count newsflow.extracted)" -ge "$n" ] && break; sleep 0.5; done
  stop_processes
  start dedup dedup
  until_done "$n"
  stop_processes
  dedup_line="; dedup role from a filled newsflow.extracted: $(rate_of "$n" "$t_first" "$t_last") articles/s"
  kill -TERM "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true; pids=()
  rm -f "$work/bootstrap"
fi

# Latency at a steady rate.
start_dev_broker --brokers 1 --partitions 64
export NEWSFLOW_KAFKA__BROKERS=$broker
start_processes "$@"
sleep 8  # group joins, restores
"$bin" produce --input "$stream" --rate "$rate" > /dev/null
for _ in $(seq 1200); do [ "$(count newsflow.articles)" -ge "$n" ] && break; sleep 0.5; done
stop_processes
kcat -b "$broker" -C -t newsflow.pages -e -q -f '%h\n' > "$work/pages.txt" 2>/dev/null
kcat -b "$broker" -C -t newsflow.articles -e -q -f '%k\t%T\n' > "$work/articles.txt" 2>/dev/null
python3 - "$work/pages.txt" "$work/articles.txt" "$rate" > "$work/latency.txt" <<'EOF'
import sys
pages, articles, rate = sys.argv[1:]
sent = {}
for line in open(pages):
    h = dict(kv.split("=", 1) for kv in line.strip().split(",") if "=" in kv)
    if "id" in h and "produced_at" in h:
        sent[h["id"]] = int(h["produced_at"])
first = {}
for line in open(articles):
    k, _, t = line.rstrip("\n").partition("\t")
    if k in sent and k not in first:
        first[k] = int(t)
lat = sorted(first[k] - sent[k] for k in first)
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] / 1000
print(f"at {rate} pages/s: {len(lat)} articles, latency p50 {q(0.5):.2f} s, p99 {q(0.99):.2f} s, "
      f"max {lat[-1] / 1000:.2f} s")
EOF
echo "$mode: replay on one core $replay_rate pages/s; backlog of $pages pages: $backlog_rate pages/s" \
  "from the first input consumed to the last article acknowledged" \
  "($(python3 -c "print(f'{$backlog_rate / $replay_rate:.2f}')")x replay), $backlog_rate_join pages/s" \
  "with the group join, $cores cores used$dedup_line; $(cat "$work/latency.txt")"
rm -rf "$work"

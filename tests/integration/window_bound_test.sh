#!/usr/bin/env bash
# Two things production relies on, with the real daemon against a dev broker:
#   1. a freshly started daemon, before any input, already carries a series of every metric the
#      Grafana dashboard and the alert rules query (labelled families initialized at zero);
#   2. a window bounded by window.max_articles stays at its bound when far more articles
#      arrive: the oldest leave, newsflow_window_evictions_total counts them, every input is
#      still accounted for and the process stays small.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/window_bound
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -20 "$work/run.log" >&2 || true; exit 1; }
stop_signal=TERM
source "$src/tests/integration/lib.sh"
# In the sanitizer build, AddressSanitizer keeps freed memory in a quarantine of up to 256 MiB,
# counted in the RSS below; a smaller one leaves the RSS to what the daemon holds (with the
# default the window's small table parts took it to 508-513 MiB of the 512 allowed).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=64"

start_dev_broker --partitions 16  # the mock keeps about 5 MiB a partition
port=$(free_port)
export NEWSFLOW_KAFKA__BROKERS=$broker NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
export NEWSFLOW_WINDOW__MAX_ARTICLES=40 NEWSFLOW_WINDOW__HOURS=2400
"$bin" run --log-format json > "$work/run.log" 2>&1 &
run=$!; pids+=($run)
base=http://127.0.0.1:$port
for _ in $(seq 200); do curl -sf "$base/readyz" > /dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$base/readyz" > /dev/null || fail "the daemon did not become ready"
# At once: the lag gauges exist before librdkafka's first statistics (5 s by default).
curl -sf "$base/metrics" > "$work/fresh.txt" || fail "no /metrics"
echo "fresh daemon: $(grep -vc '^#' "$work/fresh.txt") series"
python3 "$src/tests/deploy/metric_names.py" --series "$work/fresh.txt" \
  "$src/deploy/monitoring/newsflow-dashboard.json" "$src/deploy/monitoring/newsflow-alerts.yaml" \
  || fail "a fresh daemon lacks series the dashboard or the alerts query"
grep -q '^newsflow_window_max_articles 40' "$work/fresh.txt" || fail "the bound is not exported"

produced=$("$bin" produce --input "$src/samples/pages.jsonl.gz" --repeat 12 --poison)
metric_sum() { curl -sf "$base/metrics" | awk -v m="$1" '$1 ~ "^"m"({|$)" {s += $2} END {print s + 0}'; }
for _ in $(seq 600); do
  [ $(($(metric_sum newsflow_articles_total) + $(metric_sum newsflow_dlq_total))) -ge "$produced" ] \
    2>/dev/null && break
  kill -0 $run 2>/dev/null || fail "the daemon exited"
  sleep 0.1
done
curl -sf "$base/metrics" > "$work/after.txt"
articles=$(metric_sum newsflow_articles_total); dlq=$(metric_sum newsflow_dlq_total)
held=$(awk '$1 == "newsflow_window_articles" {print $2}' "$work/after.txt")
evicted=$(awk '$1 == "newsflow_window_evictions_total" {print $2}' "$work/after.txt")
rss_kib=$(awk '/^VmRSS:/ {print $2}' /proc/$run/status)
echo "produced=$produced articles=$articles dead_letters=$dlq held=$held evicted=$evicted rss_mib=$((rss_kib / 1024))"
[ $((articles + dlq)) -eq "$produced" ] || fail "inputs not accounted for"
awk -v h="$held" 'BEGIN {exit !(h <= 40 && h >= 39)}' || fail "window holds $held articles, bound 40"
awk -v e="$evicted" -v a="$articles" 'BEGIN {exit !(e >= a - 40)}' || fail "only $evicted evictions counted"
[ "$rss_kib" -lt $((512 * 1024)) ] || fail "RSS ${rss_kib} KiB"
kill -TERM $run; wait $run || fail "the daemon did not exit cleanly"
echo "1 passed, 0 failed"

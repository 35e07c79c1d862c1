#!/usr/bin/env bash
# `newsflow replay` end to end against readability-lxml on the same pages, one core each
# (taskset -c 0), in rounds: each round times readability-lxml's extraction of every page (pages
# in memory, Python's start not counted) and then a whole `newsflow replay` process (start,
# reading the gzip JSONL, JSON, extraction, language, dedup, stories, writing JSON). Adjacent
# runs share the machine's state of the moment, so the per-round ratio holds when a shared
# machine's speed drifts between runs; the median round is the figure.
# With BASELINE_BUILD_DIR (another checkout's build, e.g. a git worktree of an older commit),
# each round also times that build's replay: before and after in one run.
# Usage: tests/bench/replay_vs_readability.sh [PAGES.jsonl.gz] [BUILD_DIR] [ROUNDS]
#        [BASELINE_BUILD_DIR]
set -euo pipefail
pages=${1:-../shared/data/extraction/aeb/pages.jsonl.gz}; build=${2:-build}; rounds=${3:-7}
baseline=${4:-}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
pin() { if command -v taskset > /dev/null; then taskset -c 0 "$@"; else "$@"; fi; }
if ! /usr/bin/python3 -c "import readability" 2> /dev/null; then
  apt-get install -y -qq python3-readability > /dev/null
fi
cat > "$work/rl.py" <<'PY'
import gzip, json, sys, time
from readability import Document
opener = gzip.open if sys.argv[1].endswith(".gz") else open
with opener(sys.argv[1], "rt", encoding="utf-8") as f:
    pages = [p for p in (json.loads(l).get("html") for l in f if l.strip()) if p]
t = time.perf_counter()
for p in pages:
    Document(p).summary()
print(len(pages), time.perf_counter() - t)
PY
replay_seconds() {
  local start end
  start=$(date +%s.%N)
  pin "$1/newsflow" replay --input "$pages" --output "$work/replay.jsonl" > /dev/null 2>&1
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN { print e - s }'
}
printf '%-6s %16s %16s %7s' round readability-lxml "newsflow replay" ratio
[ -n "$baseline" ] && printf ' %16s %7s' "baseline replay" ratio
printf '\n'
for r in $(seq 1 "$rounds"); do
  read -r n rl < <(pin /usr/bin/python3 "$work/rl.py" "$pages" 2> /dev/null)
  t=$(replay_seconds "$build")
  b=$([ -n "$baseline" ] && replay_seconds "$baseline" || echo 0)
  awk -v r="$r" -v n="$n" -v rl="$rl" -v t="$t" -v b="$b" 'BEGIN {
    printf "%-6s %10.1f pages/s %10.1f pages/s %6.2fx", r, n / rl, n / t, rl / t
    if (b > 0) printf " %10.1f pages/s %6.2fx", n / b, rl / b
    printf "\n" }'
done | tee "$work/rounds"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "median ratio $(awk '{ print $6 }' "$work/rounds" | median) over $rounds rounds" \
  "$([ -n "$baseline" ] && echo "(baseline $(awk '{ print $9 }' "$work/rounds" | median))")"

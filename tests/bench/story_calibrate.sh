#!/usr/bin/env bash
# Sweeps stories.similarity_threshold (the story model's probability; merge_threshold the shipped
# 0.5901 or the threshold if higher) on labelled pairs: for each threshold, replays the dev
# stream (same-event article pairs, hard different-event pairs) and the multilingual stream
# (neighbouring sections of one manual in ten languages: hard different-event pairs only) and
# prints the share of same-event item pairs in one story and of hard pairs merged.
#
#   tests/bench/story_calibrate.sh [NEWSFLOW] [THRESHOLD...]
#
# The shipped threshold sits inside the plateau of thresholds that keep the most same-event
# pairs together on dev, away from its edge, where the hard merges are fewest. Needs ../shared.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/newsflow}
shift || true
thresholds=("$@")
[ ${#thresholds[@]} -gt 0 ] || thresholds=(0.45 0.5 0.55 0.6)
dev=../shared/data/dedup/dev
ml=tests/data/multilingual
[ -f "$dev/stream.jsonl.gz" ] || { echo "needs $dev (../shared)" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '| threshold | dev same-event together | dev hard merged | multilingual hard merged |\n'
printf '|---|---|---|---|\n'
for t in "${thresholds[@]}"; do
  printf 'stories:\n  similarity_threshold: %s\n  merge_threshold: %s\n' "$t" \
    "$(python3 -c "print(max(0.5901, $t))")" >"$tmp/c.yaml"
  "$bin" replay --config "$tmp/c.yaml" --input "$dev/stream.jsonl.gz" --output "$tmp/d.jsonl" 2>/dev/null
  "$bin" replay --config "$tmp/c.yaml" --input "$ml/stream.jsonl.gz" --output "$tmp/m.jsonl" 2>/dev/null
  d=$(python3 tests/bench/story_pairs.py --labels "$dev/labels.json" --truth "$dev/truth.jsonl.gz" \
    --pred "$tmp/d.jsonl")
  m=$(python3 tests/bench/story_pairs.py --labels "$ml/labels.json" --truth "$ml/truth.jsonl.gz" \
    --pred "$tmp/m.jsonl")
  same=$(sed -E 's/.*one story \(([0-9.]+)\).*/\1/' <<<"$d")
  hard=$(sed -E 's/.*merged \(([0-9.]+)\).*/\1/' <<<"$d")
  mhard=$(sed -E 's/.*merged \(([0-9.]+)\).*/\1/' <<<"$m")
  printf '| %s | %s | %s | %s |\n' "$t" "$same" "$hard" "$mhard"
done

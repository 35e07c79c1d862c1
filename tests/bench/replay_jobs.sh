#!/usr/bin/env bash
# replay on every core against replay on one, on the same stream, in interleaved rounds (this
# machine's speed drifts: a round times both the same minute), checking that the outputs are
# the same byte for byte; then where one run's time goes, per stage.
#
#   tests/bench/replay_jobs.sh [STREAM] [BUILD_DIR] [ROUNDS] [JOBS]
#   (defaults: ../shared/data/dedup/dev/stream.jsonl.gz, build, 5, the machine's cores)
set -euo pipefail
stream=${1:-../shared/data/dedup/dev/stream.jsonl.gz}
build=${2:-build}
rounds=${3:-5}
jobs=${4:-$(nproc)}
bin=$build/newsflow
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {  # run JOBS OUT: prints the seconds it took
  local start end
  start=$(date +%s.%N)
  "$bin" replay --quiet --jobs "$1" --input "$stream" --output "$2" --stories "$2.stories" 2>/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {print b - a}'
}

inputs=$(zcat -f "$stream" | wc -l)
ratios=()
for r in $(seq "$rounds"); do
  one=$(run 1 "$work/one.jsonl")
  many=$(run "$jobs" "$work/many.jsonl")
  for f in "" .stories .dlq.jsonl; do
    cmp -s "$work/one.jsonl$f" "$work/many.jsonl$f" || { echo "FAIL: --jobs $jobs wrote another one.jsonl$f"; exit 1; }
  done
  ratio=$(awk -v a="$one" -v b="$many" 'BEGIN {printf "%.3f", a / b}')
  ratios+=("$ratio")
  printf 'round %d: --jobs 1 %.2f s (%.0f pages/s), --jobs %d %.2f s (%.0f pages/s): %.2fx, same output\n' \
    "$r" "$one" "$(awk -v n="$inputs" -v t="$one" 'BEGIN {print n / t}')" "$jobs" "$many" \
    "$(awk -v n="$inputs" -v t="$many" 'BEGIN {print n / t}')" "$ratio"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
echo "median of $rounds rounds: --jobs $jobs is ${median}x --jobs 1 on $inputs inputs"
"$bin" replay --quiet --jobs 1 --stage-times --input "$stream" --output "$work/t.jsonl" 2>&1 | grep threads

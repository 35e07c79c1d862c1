#!/usr/bin/env bash
# replay of one stream by two builds in interleaved rounds (this machine's speed drifts: a round
# times both the same minute), on one core and on JOBS: wall seconds and CPU seconds (user +
# system) of each run, and the medians.
#
#   tests/bench/replay_against.sh OTHER_BIN [STREAM] [BIN] [ROUNDS] [JOBS]
#   (defaults: the AEB pages, build/newsflow, 5, 2). A build from before `replay --jobs` runs on
#   one thread in both.
set -euo pipefail
other=$1
stream=${2:-../shared/data/extraction/aeb/pages.jsonl.gz}
bin=${3:-build/newsflow}
rounds=${4:-5}
jobs=${5:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
zcat -f "$stream" > "$work/stream.jsonl"  # read from memory by both, not unzipped in the run

run() {  # run BIN JOBS: prints "WALL CPU" (a build without --jobs runs as it can)
  local jobs_flag=()
  "$1" replay --help | grep -q -- --jobs && jobs_flag=(--jobs "$2")
  /usr/bin/time -f "%e %U %S" -o "$work/time" \
    "$1" replay --quiet "${jobs_flag[@]}" --input "$work/stream.jsonl" --output "$work/out.jsonl" \
    2>/dev/null
  awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$work/time"
}

for j in 1 "$jobs"; do
  : > "$work/this.$j"; : > "$work/other.$j"
  for _ in $(seq "$rounds"); do
    run "$bin" "$j" >> "$work/this.$j"
    run "$other" "$j" >> "$work/other.$j"
  done
  median() { sort -n -k"$2" "$1" | awk -v k="$2" '{v[NR]=$k} END {print v[int((NR+1)/2)]}'; }
  echo "jobs $j: this wall $(median "$work/this.$j" 1) s cpu $(median "$work/this.$j" 2) s;" \
    "other wall $(median "$work/other.$j" 1) s cpu $(median "$work/other.$j" 2) s" \
    "(medians of $rounds; this: $(cut -d' ' -f1 "$work/this.$j" | tr '\n' ' ')other: $(cut -d' ' -f1 "$work/other.$j" | tr '\n' ' '))"
done

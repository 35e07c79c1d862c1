#!/usr/bin/env bash
# Copies in ten languages, Chinese and Japanese included, through the real binary: the committed
# multilingual stream (tests/data/multilingual) replayed; in every language copies are found at
# recall >= 0.95 with pairwise precision >= 0.99, the detected `language` names the labelled one
# on >= 95% of the pages, and the article text matches the true text at bag-of-tokens F1 >= 0.95
# on average (>= 0.8 on every page; Chinese and Japanese by characters).
set -euo pipefail
src=$1; work=$2/multilingual; bin=${NEWSFLOW_BIN}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
data=$src/tests/data/multilingual
"$bin" replay --input "$data/stream.jsonl.gz" --output "$work/out.jsonl" > "$work/replay.log" 2>&1 ||
  fail "replay failed: $(tail -3 "$work/replay.log")"
score() {
  python3 "$src/tests/bench/multilingual_eval.py" --labels "$data/labels.json" \
    --truth "$data/truth.jsonl.gz" --pred "$work/out.jsonl" "$@"
}
score | tee "$work/scores.txt"
score --json > "$work/scores.json"
python3 - "$work/scores.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["languages"]
bad = [f"{code}: recall {r['recall']}, precision {r['precision']}, language "
       f"{r['language_accuracy']}, extraction {r['extraction_f1']} (worst {r['extraction_f1_worst']})"
       for code, r in rows.items()
       if r["recall"] < 0.95 or r["precision"] < 0.99 or r["language_accuracy"] < 0.95
       or r["no_article"] > 0 or r["extraction_f1"] < 0.95 or r["extraction_f1_worst"] < 0.8]
if len(rows) < 10:
    bad.append(f"only {len(rows)} languages scored")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
echo "1 passed, 0 failed"

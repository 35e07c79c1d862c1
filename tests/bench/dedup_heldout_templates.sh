#!/usr/bin/env bash
# An honest end-to-end dedup figure on ../shared/data/dedup/dev: the dev stream's page templates
# are the AEB pages the built-in extractor model is trained on, so each item is extracted here by
# a model trained without its template page (5 folds over the AEB pages; the trafilatura
# snippet pages, which share no template with the stream, are in every fold's training as in
# the built-in model's), then scored.
# Usage: tests/bench/dedup_heldout_templates.sh [BUILD_DIR]   (needs ../shared; ~1 minute)
# TRAIN_ARGS="--l2 0.1" passes training options through to train-extractor.
set -euo pipefail
build=${1:-build}; shared=../shared/data; work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$shared" "$work" <<'PY'
import json, sys
shared, work = sys.argv[1], sys.argv[2]
truth = [json.loads(l) for l in open(f"{shared}/extraction/aeb/truth.jsonl")]
ids = sorted(t["id"] for t in truth)
fold = {i: n % 5 for n, i in enumerate(ids)}
json.dump(fold, open(f"{work}/fold.json", "w"))
for f in range(5):
    with open(f"{work}/truth{f}.jsonl", "w") as out:
        for t in truth:
            if fold[t["id"]] != f:
                out.write(json.dumps(t) + "\n")
PY
for f in 0 1 2 3 4; do
  "$build/newsflow" train-extractor --pages "$shared/extraction/aeb/pages.jsonl.gz" \
    --truth "$work/truth$f.jsonl" --pages "$shared/extraction/trafilatura/pages.jsonl.gz" \
    --truth "$shared/extraction/trafilatura/truth.jsonl" --folds 0 --out "$work/model$f.txt" \
    ${TRAIN_ARGS:-} > /dev/null 2>&1
  NEWSFLOW_EXTRACT__MODEL_FILE="$work/model$f.txt" "$build/newsflow" replay \
    --input "$shared/dedup/dev/stream.jsonl.gz" --output "$work/out$f.jsonl" --dlq /dev/null 2>/dev/null
done
# Extraction of each item by the model that did not see its template, then the whole stream
# through dedup again in one process.
python3 - "$shared" "$work" <<'PY'
import json, sys, gzip
shared, work = sys.argv[1], sys.argv[2]
fold = json.load(open(f"{work}/fold.json"))
labels = json.load(open(f"{shared}/dedup/dev/labels.json"))
outs = [{json.loads(l)["id"]: json.loads(l) for l in open(f"{work}/out{f}.jsonl")} for f in range(5)]
with open(f"{work}/texts.jsonl", "w") as w:
    for line in gzip.open(f"{shared}/dedup/dev/stream.jsonl.gz", "rt"):
        item = json.loads(line)
        f = fold[labels["template"][item["id"]].split(":", 1)[1]]
        art = outs[f][item["id"]]
        w.write(json.dumps({"id": item["id"], "url": item["url"], "fetched_at": item["fetched_at"],
                            "text": art["text"], "title": art["title"]}) + "\n")
PY
"$build/newsflow" replay --input "$work/texts.jsonl" --output "$work/final.jsonl" --dlq /dev/null
[ -n "${KEEP:-}" ] && cp "$work/final.jsonl" "$KEEP"
# KEEP_TEXTS=FILE keeps the held-out extractions, e.g. to compare signature schemes:
#   NEWSFLOW_DEDUP__SIGNATURE=spotsigs build/newsflow replay --input FILE --output o.jsonl
[ -n "${KEEP_TEXTS:-}" ] && cp "$work/texts.jsonl" "$KEEP_TEXTS"
python3 ../shared/tools/eval_dedup.py --labels "$shared/dedup/dev/labels.json" \
  --pred "$work/final.jsonl" --window-aware

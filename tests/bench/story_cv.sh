#!/usr/bin/env bash
# The story model's online figures cross-validated by event: for each of the folds of
# `newsflow train-stories` (pairs of one event in one fold), a model fitted without that fold
# replays the whole stream and only that fold's labelled pairs are scored; then the committed
# model (dedup/model/story_model.yaml) on the whole stream, and the stream with whole words and
# the cosine alone (the representation before stems) for comparison. Per language and in all:
# same-event pairs in one story, different-event pairs merged, copies found.
#
#   tests/bench/story_cv.sh [NEWSFLOW] [STREAM LABELS]
#
# Default: ../shared/data/stories/dev (ten languages; needs ../shared).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/newsflow}
dev=../shared/data/stories/dev
stream=${2:-$dev/stream.jsonl.gz}
labels=${3:-$dev/labels.json}
[ -f "$stream" ] || { echo "needs $stream (../shared)" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
folds=5
for k in $(seq 0 $((folds - 1))); do
  "$bin" train-stories --input "$stream" --labels "$labels" --folds $folds --hold-out "$k" \
    --out "$tmp/model$k.yaml" --folds-output "$tmp/folds.json" >/dev/null 2>&1
  "$bin" replay --config "$tmp/model$k.yaml" --input "$stream" --output "$tmp/out$k.jsonl" 2>/dev/null
done
"$bin" replay --config dedup/model/story_model.yaml --input "$stream" --output "$tmp/all.jsonl" 2>/dev/null
python3 - "$labels" "$tmp" $folds <<'PY'
import json, sys, collections
labels, tmp, folds = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
fold = json.load(open(tmp + "/folds.json"))
lang = labels["lang"]
def story(path):
    return {a["id"]: a["story_id"] for a in map(json.loads, open(path))}
runs = [story("%s/out%d.jsonl" % (tmp, k)) for k in range(folds)]
final = story(tmp + "/all.jsonl")
def score(pick):
    rows = collections.defaultdict(lambda: [0, 0, 0, 0])  # pos, together, neg, merged
    for kind, pairs in (("pos", labels["story_pos"]), ("neg", labels["story_neg"])):
        for a, b in pairs:
            sid = pick(a, b)
            if sid is None: continue
            for L in (lang.get(a, "?"), "all"):
                r = rows[L]
                if kind == "pos": r[0] += 1; r[1] += sid
                else: r[2] += 1; r[3] += sid
    return rows
def cv_pick(a, b):
    k = fold.get(min(a, b) + " " + max(a, b))
    if k is None: return None
    return runs[k][a] == runs[k][b]
cv, full = score(cv_pick), score(lambda a, b: final[a] == final[b])
print("| language | same-event pairs | in one story (CV by event) | different-event merged (CV) | in one story (committed model) | merged (committed) |")
print("|---|---|---|---|---|---|")
for L in sorted(cv, key=lambda L: (L == "all", L)):
    c, f = cv[L], full[L]
    print("| %s | %d | %.2f | %d/%d (%.1f%%) | %.2f | %d/%d |" % (L, c[0], c[1] / max(1, c[0]), c[3], c[2],
          100 * c[3] / max(1, c[2]), f[1] / max(1, f[0]), f[3], f[2]))
PY
python3 ../shared/tools/eval_stories.py "$labels" "$tmp/all.jsonl" 2>/dev/null | tail -1 | sed 's/^/committed model, eval_stories.py: /' || true

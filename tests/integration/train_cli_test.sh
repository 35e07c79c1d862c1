#!/usr/bin/env bash
# `newsflow train-extractor` end to end on a small generated set: article-body truth and snippet
# truth (the trafilatura benchmark's format) train one model, cross-validation reports each
# metric, the cross-validated predictions and the model file are usable, and bad usage fails.
set -euo pipefail
src=$1; work=$2/train_cli; bin=${NEWSFLOW_BIN}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 - "$work" <<'PY'
import json, random, sys
work = sys.argv[1]
rng = random.Random(7)
vocab = ("river council bridge vote mayor budget school storm harbour museum election court "
         "farmers price market train station hospital winter festival library report").split()
def sentence():
    words = [rng.choice(vocab) for _ in range(rng.randint(8, 16))]
    return " ".join(words).capitalize() + "."
def page(n):
    paras = [" ".join(sentence() for _ in range(rng.randint(3, 5))) for _ in range(rng.randint(4, 7))]
    nav = "".join(f"<li><a href='/s{k}'>Section {k}</a></li>" for k in range(12))
    foot = "".join(f"<li><a href='/f{k}'>Footer link {k} about us</a></li>" for k in range(8))
    related = "".join(f"<li><a href='/r{n}{k}'>Related story {k} on page {n}</a></li>" for k in range(5))
    html = (f"<html><body><nav><ul>{nav}</ul></nav><main><article><h1>Story {n}</h1>"
            + "".join(f"<p>{p}</p>" for p in paras)
            + f"</article><aside><ul>{related}</ul></aside></main><footer><ul>{foot}</ul>"
            "<p>Copyright 2026 Example News. All rights reserved.</p></footer></body></html>")
    return html, paras
with open(f"{work}/body_pages.jsonl", "w") as bp, open(f"{work}/body_truth.jsonl", "w") as bt, \
     open(f"{work}/snip_pages.jsonl", "w") as sp, open(f"{work}/snip_truth.jsonl", "w") as st:
    for n in range(24):
        html, paras = page(n)
        pid = f"p{n:02d}"
        line = json.dumps({"id": pid, "url": f"https://news.test/{pid}", "html": html})
        if n % 2 == 0:
            bp.write(line + "\n")
            bt.write(json.dumps({"id": pid, "articleBody": "\n".join(paras)}) + "\n")
        else:
            sp.write(line + "\n")
            st.write(json.dumps({"id": pid, "with": [paras[0][:60], paras[-1][-60:]],
                                 "without": ["Copyright 2026 Example News", f"Related story 3 on page {n}"]}) + "\n")
PY

"$bin" train-extractor --pages "$work/body_pages.jsonl" --truth "$work/body_truth.jsonl" \
  --pages "$work/snip_pages.jsonl" --truth "$work/snip_truth.jsonl" --folds 3 \
  --cv-output "$work/cv.jsonl" --out "$work/model.txt" > "$work/report.txt" 2> "$work/log.txt"
cat "$work/report.txt"
grep -q "24 pages (12 with article bodies, 12 with snippets)" "$work/log.txt" || fail "page counts: $(cat "$work/log.txt")"
body_f1=$(sed -n 's/.*pages with article bodies: .* F1 \([0-9.]*\)$/\1/p' "$work/report.txt")
snip_f1=$(sed -n 's/.*pages with snippets: .* F1 \([0-9.]*\)$/\1/p' "$work/report.txt")
[ -n "$body_f1" ] && [ -n "$snip_f1" ] || fail "no cross-validated figure for each kind of truth"
awk -v b="$body_f1" -v s="$snip_f1" 'BEGIN { exit !(b >= 0.9 && s >= 0.9) }' \
  || fail "cross-validated F1 too low on an easy set: bodies $body_f1, snippets $snip_f1"
[ "$(wc -l < "$work/cv.jsonl")" -eq 24 ] || fail "cv output does not hold every page"
head -c 21 "$work/model.txt" | grep -q "newsflow-mss-model 2 " || fail "model header"

# The training options reach the trainer: without averaging, or with another L2, another model.
for opts in "--no-average" "--l2 0.01"; do
  # shellcheck disable=SC2086
  "$bin" train-extractor --pages "$work/body_pages.jsonl" --truth "$work/body_truth.jsonl" \
    --pages "$work/snip_pages.jsonl" --truth "$work/snip_truth.jsonl" --folds 0 $opts \
    --out "$work/model_opts.txt" > /dev/null 2>&1 || fail "training with $opts failed"
  if cmp -s "$work/model.txt" "$work/model_opts.txt"; then fail "$opts changed nothing"; fi
done

# Snippet truth alone trains a model too (a model that learnt nothing keeps the whole page and
# fails the must-not snippets).
"$bin" train-extractor --pages "$work/snip_pages.jsonl" --truth "$work/snip_truth.jsonl" \
  --folds 3 > "$work/snip_report.txt" 2> /dev/null
snip_only=$(sed -n 's/.*pages with snippets: .* F1 \([0-9.]*\)$/\1/p' "$work/snip_report.txt")
awk -v s="$snip_only" 'BEGIN { exit !(s >= 0.9) }' || fail "snippet-only training: F1 $snip_only"

# The same pages in two sets, with body truth in one and snippet truth in the other: each set
# keeps its own truth.
python3 - "$work" <<'PY2'
import json, sys
work = sys.argv[1]
with open(f"{work}/body_as_snippets.jsonl", "w") as out:
    for line in open(f"{work}/body_truth.jsonl"):
        t = json.loads(line)
        paras = t["articleBody"].split("\n")
        out.write(json.dumps({"id": t["id"], "with": [paras[0][:60]], "without": ["Footer link 3"]}) + "\n")
PY2
"$bin" train-extractor --pages "$work/body_pages.jsonl" --truth "$work/body_truth.jsonl" \
  --pages "$work/body_pages.jsonl" --truth "$work/body_as_snippets.jsonl" --folds 3 \
  > "$work/twice.txt" 2> "$work/twice_log.txt"
grep -q "24 pages (12 with article bodies, 12 with snippets)" "$work/twice_log.txt" \
  || fail "a page id in two sets mixed their truth: $(cat "$work/twice_log.txt")"
grep -q "on 12 pages with article bodies" "$work/twice.txt" || fail "body figures: $(cat "$work/twice.txt")"
# Two sets: each is also scored by a model trained on the other alone.
grep -q "leave-one-set-out: trained without set 1 ($work/body_truth.jsonl), its 12 pages with article bodies" \
  "$work/twice.txt" || fail "no leave-one-set-out figure for the body set: $(cat "$work/twice.txt")"
grep -q "its 12 pages with snippets: snippet" "$work/twice.txt" \
  || fail "no leave-one-set-out figure for the snippet set: $(cat "$work/twice.txt")"

# The trained model loads and extracts: the article without the navigation or the footer.
python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['html'])" \
  "$work/body_pages.jsonl" > "$work/page.html"
printf 'extract:\n  model_file: %s\n' "$work/model.txt" > "$work/config.yaml"
"$bin" extract --config "$work/config.yaml" "$work/page.html" > "$work/article.json"
python3 - "$work" <<'PY' || fail "extraction with the trained model"
import json, sys
work = sys.argv[1]
art = json.load(open(f"{work}/article.json"))
truth = json.loads(open(f"{work}/body_truth.jsonl").readline())["articleBody"]
assert truth.split("\n")[0] in art["text"], "first paragraph missing"
assert "Footer link" not in art["text"] and "Section 3" not in art["text"], art["text"][:200]
PY

# Usage errors exit 1 with a message.
if "$bin" train-extractor --pages "$work/body_pages.jsonl" --pages "$work/snip_pages.jsonl" \
     --truth "$work/body_truth.jsonl" 2> "$work/err.txt"; then
  fail "two --pages with one --truth accepted"
fi
grep -q "one --truth per --pages" "$work/err.txt" || fail "no message for unpaired --pages"
echo '{"id":"p00","neither":1}' > "$work/bad_truth.jsonl"
if "$bin" train-extractor --pages "$work/body_pages.jsonl" --truth "$work/bad_truth.jsonl" \
     2> "$work/err.txt"; then
  fail "truth without articleBody or snippets accepted"
fi
grep -q "no truth read" "$work/err.txt" || fail "no message for unusable truth"
echo OK

#!/usr/bin/env python3
"""Per-language scores of a `newsflow replay` run on the multilingual stream.

    multilingual_eval.py --labels tests/data/multilingual/labels.json --pred OUT.jsonl
                         [--truth tests/data/multilingual/truth.jsonl.gz] [--json]

For every language: copy recall and pairwise precision/F1 of the duplicate relation (predicted
groups are the union of `dup.of` links, as ../shared/tools/eval_dedup.py builds them), pages
that produced no article, and language identification: the share of pages whose `language`
field names the labelled language (primary subtag; for Chinese, script too when both say it),
and the share left null (unsure). With --truth, extraction too: the mean and the worst page's
bag-of-tokens F1 of the article text against the true text (words; characters for Chinese and
Japanese, which have no spaces).
"""
import argparse
import gzip
import json
import re
from collections import Counter, defaultdict

UNSPACED = ("ja", "zh")


def bag(text, code):
    text = text.lower()
    if code.startswith(UNSPACED):
        return Counter(c for c in text if not c.isspace())
    return Counter(re.findall(r"\w+", text))


def token_f1(truth, pred, code):
    a, b = bag(truth, code), bag(pred, code)
    common = sum((a & b).values())
    p = common / max(1, sum(b.values()))
    r = common / max(1, sum(a.values()))
    return 2 * p * r / (p + r) if p + r else 0.0


def find(parent, x):
    while parent.setdefault(x, x) != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def pairs_of(groups):
    out = set()
    for g in groups:
        g = sorted(g)
        for a in range(len(g)):
            for b in range(a + 1, len(g)):
                out.add((g[a], g[b]))
    return out


def same_language(predicted, gold):
    if not predicted:
        return False
    p, g = predicted.split("-"), gold.split("-")
    if p[0] != g[0]:
        return False
    if g[0] == "zh" and len(p) > 1 and len(g) > 1:
        return p[1] == g[1]
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", required=True)
    ap.add_argument("--pred", required=True)
    ap.add_argument("--truth", help="truth.jsonl.gz of make_stream.py: score extraction too")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    labels = json.load(open(args.labels))
    lang = labels["language"]
    parent, seen, detected, texts = {}, set(), {}, {}
    for line in open(args.pred):
        a = json.loads(line)
        i = a.get("id")
        if i not in lang:
            continue
        seen.add(i)
        detected[i] = a.get("language")
        texts[i] = a.get("text", "")
        dup = a.get("dup") or {}
        if dup.get("kind", "unique") != "unique" and dup.get("of"):
            parent[find(parent, i)] = find(parent, dup["of"])
    pred_groups = defaultdict(list)
    for i in lang:
        pred_groups[find(parent, i)].append(i)
    pred = pairs_of(pred_groups.values())
    gold = pairs_of(labels["dup_groups"])
    truth = {}
    if args.truth:
        for line in gzip.open(args.truth, "rt", encoding="utf-8"):
            t = json.loads(line)
            truth[t["id"]] = t["text"]
    rows = {}
    for code in sorted(set(lang.values())):
        g = {p for p in gold if lang[p[0]] == code}
        # A predicted pair belongs to the language of its first member's label.
        pr = {p for p in pred if lang[p[0]] == code or lang[p[1]] == code}
        tp = len(g & pr)
        ids = [i for i in lang if lang[i] == code]
        right = sum(same_language(detected.get(i), code) for i in ids)
        unsure = sum(detected.get(i) is None for i in ids if i in seen)
        p = tp / len(pr) if pr else 1.0
        r = tp / len(g) if g else 1.0
        rows[code] = {"pages": len(ids), "no_article": len(ids) - sum(i in seen for i in ids),
                      "gold_pairs": len(g), "precision": round(p, 4), "recall": round(r, 4),
                      "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
                      "language_accuracy": round(right / len(ids), 4),
                      "language_null": round(unsure / len(ids), 4)}
        if truth:
            f1 = [token_f1(truth[i], texts.get(i, ""), code) for i in ids if i in truth]
            rows[code]["extraction_f1"] = round(sum(f1) / len(f1), 4)
            rows[code]["extraction_f1_worst"] = round(min(f1), 4)
    tp = len(gold & pred)
    total = {"precision": round(tp / len(pred), 4) if pred else 1.0,
             "recall": round(tp / len(gold), 4) if gold else 1.0}
    if args.json:
        print(json.dumps({"languages": rows, "all": total}, indent=1))
        return
    print(f"{'language':10} {'pages':>5} {'lost':>4} {'pairs':>5} {'P':>6} {'R':>6} {'F1':>6} "
          f"{'lang ok':>7} {'null':>5}" + (f" {'extr F1':>7} {'worst':>6}" if truth else ""))
    for code, r in rows.items():
        print(f"{code:10} {r['pages']:5} {r['no_article']:4} {r['gold_pairs']:5} "
              f"{r['precision']:6.3f} {r['recall']:6.3f} {r['f1']:6.3f} "
              f"{r['language_accuracy']:7.3f} {r['language_null']:5.3f}" +
              (f" {r['extraction_f1']:7.3f} {r['extraction_f1_worst']:6.3f}" if truth else ""))
    print(f"{'all':10} {len(lang):5} {'':4} {len(gold):5} {total['precision']:6.3f} "
          f"{total['recall']:6.3f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Does the same article extract to the same text on two sites' templates?

    template_consistency.py --labels ../shared/data/dedup/dev/labels.json --pred OUT.jsonl

The pairs are the dev stream's exact pairs (identical article text after normalization) whose
two pages use different templates (re-crawls of one page are left out). Reported: the share of
pairs whose extracted texts are identical after normalization (NFKC, case folded, punctuation
and whitespace folded, as the dedup stage normalizes), and the mean and lowest Jaccard of their
5-word shingle sets.
"""
import argparse
import json
import re
import unicodedata


def normalize(text):
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.findall(r"\w+", text))


def shingles(words, k=5):
    return {tuple(words[i:i + k]) for i in range(max(1, len(words) - k + 1))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", required=True)
    ap.add_argument("--pred", required=True)
    args = ap.parse_args()
    labels = json.load(open(args.labels))
    template = labels.get("template", {})
    text = {}
    for line in open(args.pred):
        a = json.loads(line)
        text[a["id"]] = normalize(a.get("text", ""))
    pairs = [(a, b) for a, b in labels["exact_pairs"]
             if template.get(a) != template.get(b) and a in text and b in text]
    same = sum(text[a] == text[b] for a, b in pairs)
    jac = []
    for a, b in pairs:
        x, y = shingles(text[a].split()), shingles(text[b].split())
        jac.append(len(x & y) / len(x | y) if x | y else 1.0)
    print(f"{len(pairs)} exact-text copies on different templates: {same / len(pairs):.3f} extract "
          f"identically; 5-word shingle Jaccard mean {sum(jac) / len(jac):.3f}, lowest "
          f"{min(jac):.3f}, below 0.9: {sum(j < 0.9 for j in jac)}")


if __name__ == "__main__":
    main()

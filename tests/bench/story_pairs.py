#!/usr/bin/env python3
"""Same-event reports in one story, different events kept apart, on the dev dedup stream.

    story_pairs.py --labels ../shared/data/dedup/dev/labels.json \
                   --truth ../shared/data/dedup/dev/truth.jsonl.gz --pred OUT.jsonl

Same-event pairs: items of one labelled story carrying different base articles (excluded items
left out). Hard different-event pairs: for each base article, the two base articles of other
stories most similar to it by TF-IDF cosine over the true title and text, and every item pair
between them. Reported: the share of same-event item pairs in one predicted story, and the share
of hard different-event item pairs merged.
"""
import argparse
import collections
import gzip
import itertools
import json
import math
import re


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--pred", required=True)
    args = ap.parse_args()
    labels = json.load(open(args.labels))
    pred = {}
    for line in open(args.pred):
        a = json.loads(line)
        pred[a["id"]] = a["story_id"]
    base = labels["base_article"]
    excluded = set(labels.get("story_exclude_ids", []))
    story = {i: k for k, g in enumerate(labels["story_groups"]) for i in g}
    same = []
    for g in labels["story_groups"]:
        g = [i for i in g if i not in excluded and i in pred]
        same += [(a, b) for a, b in itertools.combinations(g, 2) if base[a] != base[b]]
    together = sum(pred[a] == pred[b] for a, b in same)

    truth = {}
    for line in gzip.open(args.truth, "rt", encoding="utf-8"):
        t = json.loads(line)
        truth[t["id"]] = t["title"] + " " + t["text"]
    items = collections.defaultdict(list)
    for i in truth:
        items[base[i]].append(i)
    counts = {b: collections.Counter(re.findall(r"\w{3,}", truth[ids[0]].lower()))
              for b, ids in items.items()}
    df = collections.Counter(w for c in counts.values() for w in c)
    n = len(counts)
    vec = {b: {w: c * math.log(n / df[w]) for w, c in t.items()} for b, t in counts.items()}
    norm = {b: math.sqrt(sum(x * x for x in v.values())) for b, v in vec.items()}

    def cos(a, b):
        if not norm[a] or not norm[b]:
            return 0.0
        return sum(x * vec[b].get(w, 0) for w, x in vec[a].items()) / (norm[a] * norm[b])

    story_of_base = {base[i]: story[i] for i in story}
    hard = set()
    for b in vec:
        others = sorted(((cos(b, o), o) for o in vec
                         if o != b and story_of_base.get(o) != story_of_base.get(b)), reverse=True)
        hard |= {tuple(sorted((b, o))) for _, o in others[:2]}
    different = [(x, y) for a, b in hard for x in items[a] for y in items[b]
                 if x not in excluded and y not in excluded and x in pred and y in pred]
    merged = sum(pred[a] == pred[b] for a, b in different)
    print(f"same-event: {together} of {len(same)} item pairs in one story "
          f"({together / max(1, len(same)):.3f}); hard different-event: {merged} of "
          f"{len(different)} merged ({merged / max(1, len(different)):.4f})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Agreement of two newsflow runs over the same input (article JSON lines; the last line of an
id wins, as under compaction): duplicate groups (union-find over dup.of) by pairwise F1, stories
by B-cubed F1, and the share of articles with the same dup kind and the same duplicate group.
Stories are compared after the merges each run recorded (`story_merged_from` on any line): an
article published again after its story was merged carries the survivor's id, where the run
that published it once still carries the merged one's.

  compare_runs.py REFERENCE.jsonl OTHER.jsonl [--min-dup-f1 F] [--min-bcubed F]
                  [--min-same-verdict F] [--list]

--list prints each article whose story or verdict differs, with its story's members in both runs.

Exit 1 when a figure is below its floor, or when the runs hold different article ids.
"""
import argparse
import collections
import itertools
import json
import sys


def load(path):
    """The last line of each id, and the run's merges (merged story id -> the one it went into)."""
    out, merged_into = {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            a = json.loads(line)
            out[a["id"]] = a
            for victim in a.get("story_merged_from") or []:
                merged_into[victim] = a["story_id"]
    return out, merged_into


def stories(articles, merged_into):
    def resolve(story):
        seen = set()
        while story in merged_into and story not in seen:
            seen.add(story)
            story = merged_into[story]
        return story
    return {i: resolve(a["story_id"]) for i, a in articles.items()}


def dup_groups(articles):
    parent = {i: i for i in articles}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, a in articles.items():
        of = (a.get("dup") or {}).get("of")
        if a["dup"]["kind"] != "unique" and of in parent:
            parent[find(i)] = find(of)
    return {i: find(i) for i in articles}


def members(assignment):
    """{group: set of ids} of an {id: group} assignment."""
    groups = collections.defaultdict(set)
    for i, g in assignment.items():
        groups[g].add(i)
    return groups


def pairs(assignment):
    out = set()
    for group in members(assignment).values():
        for a, b in itertools.combinations(sorted(group), 2):
            out.add((a, b))
    return out


def f1(ref_pairs, other_pairs):
    if not ref_pairs and not other_pairs:
        return 1.0, 1.0, 1.0
    tp = len(ref_pairs & other_pairs)
    p = tp / len(other_pairs) if other_pairs else 1.0
    r = tp / len(ref_pairs) if ref_pairs else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def bcubed(ref, other):
    ref_groups, other_groups = members(ref), members(other)
    p = r = 0.0
    for i in ref:
        a, b = ref_groups[ref[i]], other_groups[other[i]]
        both = len(a & b)
        p += both / len(b)
        r += both / len(a)
    p /= len(ref)
    r /= len(ref)
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reference")
    ap.add_argument("other")
    ap.add_argument("--min-dup-f1", type=float, default=0.0)
    ap.add_argument("--min-bcubed", type=float, default=0.0)
    ap.add_argument("--min-same-verdict", type=float, default=0.0)
    # Identical: the whole verdict (kind, original, similarity) and the story id, as written.
    ap.add_argument("--min-identical", type=float, default=0.0)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    (ref, ref_merges), (other, other_merges) = load(args.reference), load(args.other)
    if set(ref) != set(other):
        print(f"FAIL: ids differ: {len(set(ref) - set(other))} only in the reference, "
              f"{len(set(other) - set(ref))} only in the other run")
        return 1
    ref_dup, other_dup = dup_groups(ref), dup_groups(other)
    dp, dr, df = f1(pairs(ref_dup), pairs(other_dup))
    sp, sr, sf = bcubed(stories(ref, ref_merges), stories(other, other_merges))
    # Same verdict: the same kind, and the same set of fellow duplicates.
    ref_members, other_members = members(ref_dup), members(other_dup)
    same = sum(1 for i in ref if ref[i]["dup"]["kind"] == other[i]["dup"]["kind"]
               and ref_members[ref_dup[i]] == other_members[other_dup[i]])
    identical = sum(1 for i in ref if ref[i]["dup"] == other[i]["dup"]
                    and ref[i].get("story_id") == other[i].get("story_id"))
    dups = [sum(a["dup"]["kind"] != "unique" for a in run.values()) for run in (ref, other)]
    print(f"articles={len(ref)} duplicates_reference={dups[0]} duplicates_other={dups[1]} "
          f"dup_pairwise P={dp:.4f} R={dr:.4f} F1={df:.4f} "
          f"story_bcubed P={sp:.4f} R={sr:.4f} F1={sf:.4f} same_verdict={same / len(ref):.4f} identical={identical / len(ref):.4f}")
    if args.list:
        ref_story, other_story = stories(ref, ref_merges), stories(other, other_merges)
        ref_sm, other_sm = members(ref_story), members(other_story)
        for i in sorted(ref):
            a, b = ref_sm[ref_story[i]], other_sm[other_story[i]]
            if a != b:
                print(f"story {i} published_at={ref[i].get('published_at')} "
                      f"reference: {sorted(a)} other: {sorted(b)}")
            if (ref[i]["dup"]["kind"] != other[i]["dup"]["kind"]
                    or ref_members[ref_dup[i]] != other_members[other_dup[i]]):
                print(f"verdict {i} reference: {ref[i]['dup']} other: {other[i]['dup']}")
            elif ref[i]["dup"] != other[i]["dup"] or ref[i].get("story_id") != other[i].get("story_id"):
                print(f"detail {i} reference: {ref[i]['dup']} {ref[i].get('story_id')} "
                      f"other: {other[i]['dup']} {other[i].get('story_id')}")
    ok = (df >= args.min_dup_f1 and sf >= args.min_bcubed
          and same / len(ref) >= args.min_same_verdict and identical / len(ref) >= args.min_identical)
    if not ok:
        print("FAIL: below the floor")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

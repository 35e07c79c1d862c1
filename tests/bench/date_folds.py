#!/usr/bin/env python3
"""What each date source is worth, on folds of pages split by site.

usage: date_folds.py --pages PAGES.jsonl.gz --truth TRUTH.json [--newsflow build/newsflow]
                     [--folds 5] [--sources url,json_ld,...] [--against OTHER_NEWSFLOW] [--markdown]

The pages (`newsflow replay` input) are split into folds by site: the registrable domain of each
page's URL (news.example.co.uk -> example.co.uk), hashed, so every page of one site is in one fold
and the same site always lands in the same fold. `newsflow replay` runs once with every source on
and once with each source switched off (`--disable-date-sources`, hidden); for each fold and in
all, the table gives accuracy (right day / pages) and precision (right / dated) with every source
on, then for each source the change in both when it is off. A source that helps has a positive
"on - off" in folds of sites other than those it was written for.

--against OTHER: a second binary (say, a build of the previous commit) compared with the same
folds: its figures next to this one's, to see whether a change helps in every fold or in one.

TRUTH.json: {id: {"url", "published": "YYYY-MM-DD", ...}}; a page's date is compared by its day.
"""
import argparse
import collections
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse

SOURCES = ["url", "json_ld", "meta", "itemprop", "time_element", "date_element", "header_text",
           "script_data", "page_text"]

# Second-level labels under which a registrable domain has three labels (a short list: enough to
# keep one site's pages together on the collections measured here).
SECOND_LEVEL = {"co", "com", "org", "net", "ac", "gov", "edu", "or", "ne", "go", "gv", "gob",
                "nic", "info", "ltd", "plc", "sch", "nhs", "police", "mod", "asso", "nom"}


def site_of(url):
    host = (urllib.parse.urlsplit(url).hostname or "").rstrip(".").lower()
    labels = host.split(".")
    if len(labels) >= 3 and labels[-2] in SECOND_LEVEL and len(labels[-1]) == 2:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def fold_of(site, folds):
    return int(hashlib.sha1(site.encode()).hexdigest(), 16) % folds


def replay(newsflow, pages, disabled, workdir):
    out = os.path.join(workdir, "dates-%s-%s.jsonl" % (os.path.basename(newsflow), disabled or "all"))
    cmd = [newsflow, "replay", "--quiet", "--jobs", "1", "--input", pages, "--output", out,
           "--dlq", os.devnull]
    if disabled:
        cmd += ["--disable-date-sources", disabled]
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    given = {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            a = json.loads(line)
            given.setdefault(a.get("id"), a.get("published_at"))
    return given


def score(truth, given, ids):
    right = wrong = 0
    for pid in ids:
        p = given.get(pid)
        if not p:
            continue
        if p[:10] == truth[pid]["published"]:
            right += 1
        else:
            wrong += 1
    n = len(ids)
    return right / max(1, n), right / max(1, right + wrong), right, wrong, n - right - wrong


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--newsflow", default="build/newsflow")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--sources", default=",".join(SOURCES))
    ap.add_argument("--against", help="another newsflow binary to compare with")
    ap.add_argument("--markdown", action="store_true", help="tables in Markdown")
    args = ap.parse_args()

    truth = json.load(open(args.truth))
    folds = collections.defaultdict(list)
    sites = collections.defaultdict(set)
    for pid, t in sorted(truth.items()):
        s = site_of(t["url"])
        k = fold_of(s, args.folds)
        folds[k].append(pid)
        sites[k].add(s)
    groups = [("fold %d" % k, folds[k]) for k in range(args.folds)] + [("all", sorted(truth))]

    def row(cells):
        if args.markdown:
            return "| " + " | ".join(cells) + " |"
        return "  ".join("%-13s" % c for c in cells)

    with tempfile.TemporaryDirectory() as work:
        base = replay(args.newsflow, args.pages, "", work)
        print(row(["fold", "sites", "pages", "accuracy", "precision", "right/wrong/none"]))
        if args.markdown:
            print("|" + "---|" * 6)
        for name, ids in groups:
            acc, prec, r, w, none = score(truth, base, ids)
            n_sites = len(set(site_of(truth[i]["url"]) for i in ids))
            print(row([name, str(n_sites), str(len(ids)), "%.3f" % acc, "%.3f" % prec,
                       "%d/%d/%d" % (r, w, none)]))
        if args.against:
            other = replay(args.against, args.pages, "", work)
            print()
            print(row(["fold", "accuracy", "(against)", "precision", "(against)"]))
            if args.markdown:
                print("|" + "---|" * 5)
            for name, ids in groups:
                a1, p1, *_ = score(truth, base, ids)
                a0, p0, *_ = score(truth, other, ids)
                print(row([name, "%.3f" % a1, "%.3f" % a0, "%.3f" % p1, "%.3f" % p0]))
        print()
        print("Each source switched off: accuracy and precision with it on minus with it off, "
              "per fold (positive: the source helps there).")
        header = ["source"] + [name for name, _ in groups]
        print(row(header))
        if args.markdown:
            print("|" + "---|" * len(header))
        for source in [s for s in args.sources.split(",") if s]:
            off = replay(args.newsflow, args.pages, source, work)
            cells = [source]
            for _, ids in groups:
                a1, p1, *_ = score(truth, base, ids)
                a0, p0, *_ = score(truth, off, ids)
                cells.append("%+.3f / %+.3f" % (a1 - a0, p1 - p0))
            print(row(cells))


if __name__ == "__main__":
    main()

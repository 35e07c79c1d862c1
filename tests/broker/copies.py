#!/usr/bin/env python3
"""COPIES copies of each page of PAGES under new ids and URLs, each copy SPACING seconds of event
time after the last (default 7), in event-time order: a longer stream whose later copies are
duplicates of the first, so an uninterrupted `replay` of it is the reference for every verdict.

  copies.py PAGES.jsonl[.gz] COPIES OUT.jsonl [SPACING]
"""
import datetime
import gzip
import json
import sys


def main(pages_path, copies, out_path, spacing=7):
    opener = gzip.open if pages_path.endswith(".gz") else open
    with opener(pages_path, "rt", encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    out = []
    for k in range(copies):
        for d in lines:
            t = datetime.datetime.fromisoformat(d["fetched_at"].replace("Z", "+00:00"))
            c = dict(d, fetched_at=(t + datetime.timedelta(seconds=spacing * k)).strftime(
                "%Y-%m-%dT%H:%M:%SZ"))
            if k:
                c.update(id=f"{d['id']}-{k}", url=f"{d['url']}#{k}")
            out.append(c)
    out.sort(key=lambda c: c["fetched_at"])
    with open(out_path, "w", encoding="utf-8") as f:
        for c in out:
            f.write(json.dumps(c) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], *map(int, sys.argv[4:5]))

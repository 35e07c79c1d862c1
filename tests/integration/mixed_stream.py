#!/usr/bin/env python3
"""A stream with every input kind, for the tests that compare the daemon with `replay`: the pages
of PAGES, the feeds of FEEDS whose items carry their text (a link-only item would need the web),
and already extracted text items (a news API's, an upstream extractor's) made from every
fifth article of REPLAYED (a replay of PAGES) under new ids and URLs a minute and a half later,
with their titles, so each is a copy that must join its original's story. Ordered by the time
the daemon orders inputs by (published_at, else fetched_at), as replay reads them.

  mixed_stream.py PAGES.jsonl[.gz] FEEDS.jsonl[.gz] REPLAYED.jsonl OUT.jsonl
"""
import datetime
import gzip
import json
import sys


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def when(line):
    return line.get("published_at") or line.get("fetched_at") or ""


def later(stamp, seconds):
    t = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return (t + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def main(pages_path, feeds_path, replayed_path, out_path):
    stream = read(pages_path)
    stream += [f for f in read(feeds_path) if "<content:encoded>" in f.get("feed", "")]
    for k, a in enumerate(read(replayed_path)):
        if k % 5 or not a.get("text") or not a.get("fetched_at") or a.get("feed_url"):
            continue
        item = {"id": a["id"] + "-text", "url": a["url"] + "#text",
                "fetched_at": later(a["fetched_at"], 90), "title": a.get("title", ""),
                "text": a["text"]}
        stream.append(item)
    stream.sort(key=when)
    with open(out_path, "w", encoding="utf-8") as f:
        for line in stream:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])

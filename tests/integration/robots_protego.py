#!/usr/bin/python3
"""The fetcher's robots.txt matcher (`newsflow robots --batch`) against Scrapy's Protego
(Debian python3-protego) on a corpus of robots files and paths (tests/data/robots/corpus.jsonl).

Every answer must agree except where RFC 9309 or common practice says otherwise and Protego
does not follow it (listed below with the reason); prints the agreement.

    robots_protego.py NEWSFLOW_BIN CORPUS
"""
import json
import subprocess
import sys

from protego import Protego

# Where newsflow follows RFC 9309 (or Google's parser) and Protego 0.2 does not.
KNOWN = {
    # 2.2.2: "The /robots.txt URI is implicitly allowed."
    ("*", "/robots.txt"): "RFC 9309 2.2.2: /robots.txt is always allowed",
    # A UTF-8 byte order mark starts many files written on Windows; Protego reads it as part of
    # the first field name and loses the first group.
    ("BOM", "*"): "a leading byte order mark is skipped",
    # "Disallow /x": Protego's second chance compares the field name case-sensitively.
    ("missing colon", "*"): "a field without its colon is read, as Google's parser does",
}


def known(case, path):
    for (c, p), why in KNOWN.items():
        if (c == "*" or c == case) and (p == "*" or p == path):
            return why
    return None


def main():
    binary, corpus = sys.argv[1], sys.argv[2]
    cases = [json.loads(line) for line in open(corpus, encoding="utf-8")]
    run = subprocess.run([binary, "robots", "--batch", "--agent", "newsflow"],
                         input="".join(json.dumps(c) + "\n" for c in cases),
                         capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(answers) == len(cases), "one answer per case"
    agree = total = explained = 0
    failures = []
    for case, ours in zip(cases, answers):
        theirs = Protego.parse(case["robots"])
        for path, allowed in zip(case["paths"], ours["allowed"]):
            total += 1
            expected = theirs.can_fetch("https://example.com" + path, "newsflow")
            if expected == allowed:
                agree += 1
            elif known(case["name"], path):
                explained += 1
            else:
                failures.append(f"{case['name']!r} {path}: newsflow "
                                f"{'allows' if allowed else 'disallows'}, Protego "
                                f"{'allows' if expected else 'disallows'}")
        delay = theirs.crawl_delay("newsflow")
        if delay != ours["crawl_delay"]:
            failures.append(f"{case['name']!r}: crawl delay {ours['crawl_delay']} vs {delay}")
    print(f"robots.txt: {agree} of {total} answers agree with Protego, {explained} differ where "
          f"RFC 9309 says otherwise ({len(cases)} files)")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()

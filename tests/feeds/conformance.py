#!/usr/bin/env python3
"""Runs the feedparser conformance documents through `newsflow parse-feed` and evaluates each
document's `Expect:` expression against a feedparser-shaped view of the result.

usage: conformance.py NEWSFLOW_BINARY CORPUS_DIR [--min-pass FOLDER=N ...]
                      [--min-agree FOLDER=N ...] [--show-failures]

Each document is counted, per top-level folder, as
  pass         the expression holds;
  text         it holds once strings are compared as text: newsflow's titles are plain text
               and only the visible text of summaries and content is used, where feedparser
               returns sanitized, URL-resolved HTML ('Example <b>Atom</b>' agrees with the
               title 'Example Atom');
  fail         it does not (a field we produce has another value);
  unsupported  it names something newsflow does not produce (feed-level metadata, iTunes,
               GeoRSS, sanitizer details, feedparser's exception classes, ...);
  unparsed     the document gave no feed at all (the reason is printed with --show-failures).
The "core" columns count only expressions over the fields the pipeline uses (titles, links,
ids, dates, summaries and content of entries; the feed's title, link and language).
--min-pass FOLDER=N fails the run when FOLDER has fewer than N passes, --min-agree when it has
fewer than N passes and text agreements together (regression guards).
"""
import calendar
import html.parser
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
from collections import defaultdict

CORE_KEYS = {"title", "link", "id", "guid", "description", "summary", "content",
             "published_parsed", "updated_parsed",
             "date_parsed", "issued_parsed", "modified_parsed", "value", "language", "author",
             "entries", "items", "feed", "channel", "bozo", "len", "ord"}


class Missing(Exception):
    pass


class FPDict(dict):
    """feedparser's FeedParserDict: attribute access and the legacy key aliases."""
    ALIASES = {"description": "summary", "guid": "id", "date": "updated", "modified": "updated",
               "issued": "published", "date_parsed": "updated_parsed",
               "modified_parsed": "updated_parsed", "issued_parsed": "published_parsed",
               "url": "href", "channel": "feed", "items": "entries"}

    def __getitem__(self, key):
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        alias = self.ALIASES.get(key)
        if alias and dict.__contains__(self, alias):
            return dict.__getitem__(self, alias)
        if key == "category" and dict.__contains__(self, "tags") and self["tags"]:
            return self["tags"][0]["term"]
        raise Missing(key)

    def __contains__(self, key):
        try:
            self[key]
            return True
        except Missing:
            return False

    def get(self, key, default=None):
        try:
            return self[key]
        except Missing:
            return default

    def __getattr__(self, key):
        try:
            return self[key]
        except Missing:
            raise AttributeError(key)


class _TextOf(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def html_text(value):
    """The visible text of an HTML fragment, whitespace collapsed: what the pipeline keeps."""
    p = _TextOf()
    p.feed(value)
    p.close()
    return " ".join("".join(p.parts).split())


class HtmlValue(str):
    """An HTML string from newsflow (summary, content) that equals an expected value when their
    visible texts agree: the pipeline keeps only the text, where feedparser keeps sanitized,
    URL-resolved HTML."""

    def ours(self):
        return html_text(self)

    def __eq__(self, other):
        if isinstance(other, str):
            return str.__eq__(self, other) or self.ours() == html_text(other)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__


class TextValue(HtmlValue):
    """A plain-text string from newsflow (titles): compared with the text of the expected HTML."""

    def ours(self):
        return " ".join(self.split())


def parsed_time(iso):
    """feedparser's *_parsed: a UTC struct_time."""
    return time.gmtime(calendar.timegm(time.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")))


def view(result, as_text=False):
    text = TextValue if as_text else str
    markup = HtmlValue if as_text else str
    feed = FPDict()
    for k in ("title", "link", "language"):
        if result["feed"].get(k):
            feed[k] = text(result["feed"][k]) if k == "title" else result["feed"][k]
    if feed.get("link"):
        feed["links"] = [FPDict(rel="alternate", href=feed["link"])]
    entries = []
    for e in result["entries"]:
        d = FPDict()
        for k in ("id", "title", "link", "author"):
            if e.get(k):
                d[k] = text(e[k]) if k == "title" else e[k]
        if e.get("summary"):
            d["summary"] = markup(e["summary"])
        elif e.get("content"):
            d["summary"] = markup(e["content"])
        if e.get("content"):
            d["content"] = [FPDict(value=markup(e["content"]))]
        # Dates: newsflow keeps only the instant (normalized to UTC), not the string as written,
        # so only the *_parsed forms compare.
        for k in ("published", "updated"):
            if e.get(k):
                d[k + "_parsed"] = parsed_time(e[k])
        if "updated_parsed" not in d and "published_parsed" in d:  # as feedparser falls back
            d["updated_parsed"] = d["published_parsed"]
        if e.get("categories"):
            d["tags"] = [FPDict(term=c) for c in e["categories"]]
        links = []
        if e.get("link"):
            links.append(FPDict(rel="alternate", href=e["link"]))
        enclosures = [FPDict(href=x["url"], url=x["url"], type=x["type"]) for x in e["enclosures"]]
        for x in enclosures:
            links.append(FPDict(rel="enclosure", href=x["href"], type=x["type"]))
        if enclosures:
            d["enclosures"] = enclosures
        if links:
            d["links"] = links
        entries.append(d)
    return feed, entries


def header_comment(path):
    head = open(path, "rb").read(4096).decode("utf-8", "replace")
    fields, headers = {}, {}
    for m in re.finditer(r"^\s*(Description|Expect|Header):\s*(.*)$", head, re.M):
        if m.group(1) == "Header":
            name, _, value = m.group(2).partition(":")
            headers[name.strip().lower()] = value.strip()
        else:
            fields[m.group(1)] = m.group(2).strip()
    return fields, headers


def core_only(expr):
    names = set(re.findall(r"\[\s*'([a-z_]+)'\s*\]", expr)) | set(re.findall(r"\.([a-z_]+)", expr))
    names |= set(re.findall(r"\b([a-z_]+)\b(?!\s*[\['(])", expr)) & {"bozo", "encoding", "version",
                                                                     "bozo_exception"}
    return names <= CORE_KEYS


def main():
    binary, corpus = sys.argv[1], sys.argv[2]
    minimum, minimum_agree = {}, {}
    show = "--show-failures" in sys.argv
    for i, a in enumerate(sys.argv):
        if a in ("--min-pass", "--min-agree"):
            folder, n = sys.argv[i + 1].split("=")
            (minimum if a == "--min-pass" else minimum_agree)[folder] = int(n)
    docs = []
    for root, _, files in os.walk(corpus):
        for f in sorted(files):
            if f.endswith((".xml", ".rss", ".rdf", ".atom", ".json")) or "." not in f:
                docs.append(os.path.join(root, f))
    docs.sort()
    requests, meta = [], {}
    for path in docs:
        fields, headers = header_comment(path)
        if "Expect" not in fields:
            continue
        meta[path] = (fields, headers)
        # The document URI of feedparser's own test server; an HTTP Content-Location header
        # (as a crawler would pass it on in the url header) takes its place.
        url = "http://127.0.0.1:8097/" + os.path.relpath(path, corpus)
        if headers.get("content-location"):
            url = urllib.parse.urljoin(url, headers["content-location"])
        requests.append(json.dumps({"path": path, "url": url,
                                    "content_type": headers.get("content-type", "")}))
    t0 = time.time()
    proc = subprocess.run([binary, "parse-feed", "--batch"], input="\n".join(requests) + "\n",
                          capture_output=True, text=True)
    seconds = time.time() - t0
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    if len(results) != len(requests):
        print(f"parse-feed answered {len(results)} of {len(requests)} documents "
              f"(exit {proc.returncode}): {proc.stderr[-2000:]}")
        return 1
    counts = defaultdict(lambda: defaultdict(int))
    failures = []
    for r in results:
        path = r["file"]
        fields, _ = meta[path]
        folder = os.path.relpath(path, corpus).split(os.sep)[0]
        expr = fields["Expect"]
        core = core_only(expr)
        c = counts[folder]
        c["total"] += 1
        c["core_total"] += core
        if not r["ok"]:
            c["unparsed"] += 1
            failures.append((path, "unparsed", r.get("reason", "") + ": " + r.get("detail", ""), expr))
            continue
        def holds(as_text):
            feed, entries = view(r, as_text)
            # No `encoding`: newsflow names the decoder it used (WHATWG labels: us-ascii and
            # iso-8859-1 read as windows-1252), not the label the document declared.
            env = {"bozo": r["bozo"], "feed": feed, "channel": feed, "entries": entries,
                   "items": entries, "u": str, "time": time}
            return bool(eval(expr, {"__builtins__": {"len": len, "ord": ord, "str": str,
                                                     "isinstance": isinstance, "dict": dict,
                                                     "list": list, "tuple": tuple}}, env))
        try:
            ok = holds(False)
            if not ok and holds(True):
                c["pass_text"] += 1
                c["core_pass_text"] += core
                continue
        except (Missing, KeyError, IndexError, AttributeError, NameError, TypeError) as e:
            c["unsupported"] += 1
            if core:
                c["core_unsupported"] += 1
                failures.append((path, "core-unsupported", repr(e), expr))
            continue
        if ok:
            c["pass"] += 1
            c["core_pass"] += core
        else:
            c["fail"] += 1
            failures.append((path, "fail", "", expr))
    width = max(len(f) for f in counts)
    print(f"{'folder':<{width}}  docs  pass  text  fail  unsup  unparsed   core: docs  pass  text")
    total = defaultdict(int)
    for folder in sorted(counts):
        c = counts[folder]
        for k, v in c.items():
            total[k] += v
        print(f"{folder:<{width}}  {c['total']:4}  {c['pass']:4}  {c['pass_text']:4}  {c['fail']:4}  "
              f"{c['unsupported']:5}  {c['unparsed']:8}         {c['core_total']:4}  {c['core_pass']:4}"
              f"  {c['core_pass_text']:4}")
    print(f"{'all':<{width}}  {total['total']:4}  {total['pass']:4}  {total['pass_text']:4}  "
          f"{total['fail']:4}  {total['unsupported']:5}  {total['unparsed']:8}         "
          f"{total['core_total']:4}  {total['core_pass']:4}  {total['core_pass_text']:4}")
    print(f"{len(results)} documents parsed in {seconds:.2f} s")
    if show:
        for path, kind, why, expr in failures:
            print(f"{kind}: {os.path.relpath(path, corpus)}: {expr} {why}")
    bad = [f"{f}: {counts[f]['pass']} passes < {n}" for f, n in minimum.items()
           if counts[f]["pass"] < n]
    bad += [f"{f}: {counts[f]['pass'] + counts[f]['pass_text']} passes (exact or as text) < {n}"
            for f, n in minimum_agree.items() if counts[f]["pass"] + counts[f]["pass_text"] < n]
    for b in bad:
        print("REGRESSION:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

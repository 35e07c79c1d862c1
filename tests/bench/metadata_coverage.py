#!/usr/bin/env python3
"""How many pages that declare a lead image, a description or authors get them in newsflow's
article records.

usage: metadata_coverage.py PAGES.jsonl[.gz] OUT.jsonl [--misses]

PAGES: replay input (`id`, `url`, `html` or `html_b64`), e.g. the extraction dev pages.
OUT:   `newsflow replay` output of those pages.

What a page declares is read here independently of newsflow, with Python's html.parser:
  image        og:image, twitter:image, JSON-LD image (string, ImageObject, list) of any object
  description  og:description, meta description, twitter:description, JSON-LD description
  authors      JSON-LD author (Person names, strings, lists) of the article object, else
               meta name=author when it is not a URL
Then, of the pages that declare a field:
  image        the record's image URL is one of the declared ones (resolved against the page)
  description  the record has a description
  authors      every declared name is given: among the record's `authors`, or its `credit` (an
               agency, the site's own name: newsflow keeps what credits no person there), or
               the authors joined by " and " / " und " ("A and B" declared as one string)
and, of all records, how many have an image URL that is not http(s) (should be none).
"""
import base64
import gzip
import html
import html.parser
import json
import re
import sys
import urllib.parse

ARTICLE_TYPES = {"NewsArticle", "Article", "BlogPosting", "ReportageNewsArticle",
                 "AnalysisNewsArticle", "OpinionNewsArticle", "ReviewNewsArticle",
                 "BackgroundNewsArticle", "LiveBlogPosting", "Report", "ScholarlyArticle",
                 "TechArticle", "SocialMediaPosting", "DiscussionForumPosting", "Blog",
                 "PressRelease", "VideoObject", "SatiricalArticle", "AdvertiserContentArticle"}


class Declared(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.metas = []
        self.json_ld = []
        self._in_ld = False
        self._buf = []

    def handle_starttag(self, tag, attrs):
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta":
            key = (a.get("property") or a.get("name") or a.get("itemprop") or "").lower()
            if key and a.get("content", "").strip():
                self.metas.append((key, a["content"].strip()))
        elif tag == "script" and a.get("type", "").lower().strip() == "application/ld+json":
            self._in_ld = True
            self._buf = []

    def handle_endtag(self, tag):
        if tag == "script" and self._in_ld:
            self._in_ld = False
            self.json_ld.append("".join(self._buf))

    def handle_data(self, data):
        if self._in_ld:
            self._buf.append(data)


def objects(j, out, depth=0):
    if depth > 4:
        return
    if isinstance(j, list):
        for v in j:
            objects(v, out, depth + 1)
    elif isinstance(j, dict):
        out.append(j)
        objects(j.get("@graph"), out, depth + 1)


def types(o):
    t = o.get("@type")
    t = t if isinstance(t, list) else [t]
    return {str(x).rsplit("/", 1)[-1].rsplit(":", 1)[-1] for x in t if x}


def image_urls(v, out, depth=0):
    if depth > 3:
        return
    if isinstance(v, str):
        out.append(v.strip())
    elif isinstance(v, list):
        for e in v:
            image_urls(e, out, depth + 1)
    elif isinstance(v, dict):
        for k in ("url", "contentUrl", "@id"):
            if isinstance(v.get(k), str) and v[k].strip():
                out.append(v[k].strip())
                break


def person_names(v, out):
    if isinstance(v, list):
        for e in v:
            person_names(e, out)
    elif isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict) and "Organization" not in types(v):
        if isinstance(v.get("name"), str):
            out.append(v["name"])


def declared(page_html, url):
    p = Declared()
    try:
        p.feed(page_html)
    except Exception:
        pass
    objs = []
    for body in p.json_ld:
        try:
            objects(json.loads(body), objs)
        except Exception:
            pass
    meta = {}
    for k, v in p.metas:
        meta.setdefault(k, v)
    images = [meta[k] for k in ("og:image", "og:image:url", "og:image:secure_url",
                                "twitter:image", "twitter:image:src") if k in meta]
    for o in objs:
        image_urls(o.get("image"), images)
    # Compared resolved and percent-decoded: "ä" and "%C3%A4" are one URL.
    images = [urllib.parse.unquote(urllib.parse.urljoin(url, i)) for i in images if i]
    descriptions = [meta[k] for k in ("og:description", "description", "twitter:description")
                    if k in meta]
    descriptions += [o["description"] for o in objs if isinstance(o.get("description"), str)]
    names = []
    main = next((o for o in objs if types(o) & ARTICLE_TYPES), None)
    if main is not None:
        person_names(main.get("author"), names)
    if not names and "author" in meta and "://" not in meta["author"]:
        names.append(meta["author"])
    people = []
    for n in names:
        person = person_of(html.unescape(n))  # as the page shows it: "H&#233;ctor" is Héctor
        if person:
            people.append(person)
    return images, [d for d in descriptions if d.strip()], people


GENERIC = {"staff", "redaktion", "redacción", "rédaction", "redazione", "redactie", "admin",
           "editor", "editors", "editorial", "newsroom", "red", "team", "author", "autor", "writer",
           "reporter", "correspondent", "columnist"}


def person_of(declared_name):
    """The person a declared author string names: "By Jane Doe, Staff Writer" is Jane Doe;
    nothing for "Staff" and the like."""
    n = re.sub(r"\([^)]*\)", " ", declared_name).replace('"', " ")
    n = " ".join(n.split()).strip("'")
    n = re.sub(r"^(analysis by|opinion by|written by|posted by|by|von|par|por|di|door|av) ", "",
               n, flags=re.I)
    n = re.split(r",| \| | / | - |;", n)[0].strip().rstrip(".")
    words = n.split()
    while words and words[-1].lower().strip(".") in GENERIC:
        words.pop()
    while words and words[0].lower().strip(".") in GENERIC:
        words.pop(0)
    if not words or "://" in n:
        return None
    return " ".join(words)


def read_pages(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            h = p.get("html")
            if h is None and p.get("html_b64"):
                h = base64.b64decode(p["html_b64"]).decode("utf-8", "replace")
            yield p["id"], p["url"], h or ""


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    records = {}
    for line in open(args[1], encoding="utf-8"):
        a = json.loads(line)
        records.setdefault(a.get("id"), a)
    counts = {k: [0, 0] for k in ("image", "description", "authors")}
    bad_scheme = 0
    for pid, url, page_html in read_pages(args[0]):
        a = records.get(pid)
        if a is None:
            continue
        img = (a.get("image") or {}).get("url")
        if img and urllib.parse.urlsplit(img).scheme not in ("http", "https"):
            bad_scheme += 1
        images, descriptions, names = declared(page_html, url)
        if images:
            counts["image"][0] += 1
            ok = img is not None and urllib.parse.unquote(img) in images
            counts["image"][1] += ok
            if not ok and "--misses" in sys.argv:
                print("image      ", url, "declared", images[:2], "given", img)
        if descriptions:
            counts["description"][0] += 1
            counts["description"][1] += bool(a.get("description"))
        if names:
            counts["authors"][0] += 1
            def norm(n):
                return " ".join(n.split()).lower().rstrip(".")
            people = [norm(n) for n in a.get("authors") or []]
            given = set(people) | {norm(c) for c in (a.get("credit") or "").split(", ") if c}
            given |= {" and ".join(people), " und ".join(people)}
            ok = all(norm(n) in given for n in names)
            counts["authors"][1] += ok
            if not ok and "--misses" in sys.argv:
                print("authors    ", url, "declared", names, "given", a.get("authors"),
                      "credit", a.get("credit"))
    for k, (n, ok) in counts.items():
        print("%-12s declared on %4d pages, given on %4d (%.1f%%)" % (k, n, ok, 100.0 * ok / max(1, n)))
    print("image URLs that are not http(s): %d" % bad_scheme)


if __name__ == "__main__":
    main()

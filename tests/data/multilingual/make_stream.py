#!/usr/bin/env python3
"""Builds the multilingual near-duplicate stream from the Debian Reference translations.

Reads the plain-text Debian Reference of each language (Debian packages debian-reference-XX,
GPL-2+, see LICENSE), cuts it into sections of prose (the "articles"), and writes a stream of
HTML pages in the format of `newsflow replay` with labels in the format of the dev dedup set:
each article once on its own page and in 1-3 copies on other sites' templates, the copies
edited as the dev stream's are (verbatim, truncated, inner paragraphs dropped or swapped, word
edits, typography, a new title) plus, for Chinese and Japanese, character edits (a few
characters changed at a few places) and full-width/half-width punctuation swapped.

    make_stream.py --docs DIR --out DIR [--articles 30] [--seed 1]

DIR holds debian-reference.LANG.txt.gz files (`apt-get download debian-reference-LANG` and
`dpkg-deb -x`). Deterministic for a seed. The stream's pages carry no language hint (no
`lang` attribute, no og:locale) unless --hints is given: identification is measured on text.
"""
import argparse
import gzip
import hashlib
import html
import json
import random
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from pathlib import Path

LANGS = ["en", "de", "es", "fr", "it", "pt", "id", "ja", "zh-cn", "zh-tw"]
BCP47 = {"en": "en", "de": "de", "es": "es", "fr": "fr", "it": "it", "pt": "pt", "id": "id",
         "ja": "ja", "zh-cn": "zh-Hans", "zh-tw": "zh-Hant"}
CJK = {"ja", "zh-cn", "zh-tw"}
# Words that mark an untranslated English paragraph in another language's file.
EN_MARKERS = {"the", "and", "of", "to", "is", "are", "you", "with", "this", "that", "for"}
SECTION = re.compile(r"^(\d+(?:\.\d+)+)\.\s+(.+)$")


def cjk_char(ch):
    o = ord(ch)
    return 0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF


def join_lines(lines, lang):
    out = ""
    for line in lines:
        line = line.strip()
        if not out:
            out = line
        elif lang in CJK and (cjk_char(out[-1]) or cjk_char(line[0]) or
                              unicodedata.category(out[-1]).startswith("P")):
            out += line
        else:
            out += " " + line
    return out


def prose(par, lang):
    """True for a paragraph of running text in the file's language."""
    if len(par) < (50 if lang in CJK else 160):
        return False
    if par.count("://") > 1:
        return False  # a list of URLs, a sources.list
    if lang in CJK:
        letters = [c for c in par if c.isalpha()]
        ascii_share = sum(c.isascii() for c in par if not c.isspace()) / len(par)
        return (letters and sum(cjk_char(c) for c in letters) / len(letters) >= 0.6 and
                ascii_share < 0.45)
    tokens = par.split()
    plain = sum(bool(re.fullmatch(r"[(«“\"']?[^\W\d_]+[.,;:!?)»”\"']*", t)) for t in tokens)
    if plain < 0.8 * len(tokens):
        return False  # commands, paths, configuration
    words = re.findall(r"[^\W\d_]+", par.lower())
    if len(words) < 25:
        return False
    en = sum(w in EN_MARKERS for w in words) / len(words)
    return en < 0.06 if lang != "en" else en > 0.08


def sections(path, lang):
    """(title, [paragraph, ...]) of every section with enough prose."""
    text = gzip.open(path, "rt", encoding="utf-8").read()
    out, title, pars, block = [], None, [], []

    def end_block():
        if block:
            if all(l.startswith("    ") and not l.startswith("     ") for l in block[:1]):
                first = block[0].strip()
                if not first.startswith(("*", "|", "+", "$", "#", "表", "Table", "Tabla")):
                    par = join_lines(block, lang)
                    if prose(par, lang):
                        pars.append(par)
            block.clear()

    for line in text.splitlines():
        m = SECTION.match(line)
        if m:
            end_block()
            if title and len(pars) >= 3:
                out.append((title, pars))
            title, pars = m.group(2).strip(), []
            continue
        if not line.strip():
            end_block()
        else:
            block.append(line)
    end_block()
    if title and len(pars) >= 3:
        out.append((title, pars))
    return out


# Typography swaps: Latin quotes and dashes; CJK full-width <-> half-width punctuation.
LATIN_TYPO = [("\"", "\u201c"), ("'", "\u2019"), (" - ", " \u2014 ")]
CJK_TYPO = [("\uff0c", ", "), ("\u3002", ". "), ("\uff1a", ": "), ("\uff08", " ("), ("\uff09", ") "),
            ("\u3001", ", "), ("\uff1b", "; ")]


def typography(pars, lang, rng):
    table = CJK_TYPO if lang in CJK else LATIN_TYPO
    out = []
    for p in pars:
        for a, b in table:
            p = p.replace(a, b) if rng.random() < 0.8 else p
        out.append(p)
    return out


def word_edits(pars, lang, rng):
    """Latin scripts: 1-4.5% of the words deleted or replaced by a neighbour's; CJK: 2-4 places
    with 1-3 characters replaced by characters from elsewhere in the article."""
    pars = list(pars)
    if lang in CJK:
        pool = [c for p in pars for c in p if cjk_char(c)]
        for _ in range(rng.randint(2, 4)):
            i = rng.randrange(len(pars))
            spots = [k for k, c in enumerate(pars[i]) if cjk_char(c)]
            if not spots:
                continue
            k = rng.choice(spots)
            n = rng.randint(1, 3)
            pars[i] = pars[i][:k] + "".join(rng.choice(pool) for _ in range(n)) + pars[i][k + n:]
        return pars, "char_edits"
    words = [p.split(" ") for p in pars]
    total = sum(len(w) for w in words)
    for _ in range(max(1, int(total * rng.uniform(0.01, 0.045)))):
        i = rng.randrange(len(words))
        if len(words[i]) < 3:
            continue
        k = rng.randrange(len(words[i]))
        if rng.random() < 0.5:
            del words[i][k]
        else:
            words[i][k] = words[i][rng.randrange(len(words[i]))]
    return [" ".join(w) for w in words], "word_edits"


def edit(title, pars, lang, rng):
    """A copy: (title, paragraphs, [edit kinds])."""
    if rng.random() < 0.2:
        return title, list(pars), ["exact_text"]
    if rng.random() < 0.2:
        keep = max(2, int(len(pars) * rng.uniform(0.5, 0.95)))
        return title, pars[:keep], ["truncate"]
    kinds, pars = [], list(pars)
    for kind in rng.sample(["word_edits", "drop_middle", "truncate", "reorder", "typography"],
                           rng.randint(1, 3)):
        if kind == "word_edits":
            pars, k = word_edits(pars, lang, rng)
            kinds.append(k)
        elif kind == "drop_middle" and len(pars) >= 5:
            del pars[rng.randrange(1, len(pars) - 1)]
            kinds.append(kind)
        elif kind == "truncate" and len(pars) >= 4:
            pars = pars[:max(3, int(len(pars) * rng.uniform(0.6, 0.95)))]
            kinds.append(kind)
        elif kind == "reorder" and len(pars) >= 4:
            i = rng.randrange(1, len(pars) - 2)
            pars[i], pars[i + 1] = pars[i + 1], pars[i]
            kinds.append(kind)
        elif kind == "typography":
            pars = typography(pars, lang, rng)
            kinds.append(kind)
    if rng.random() < 0.3:
        title = rng.choice(["UPDATE 1-", "", ""]) + title + rng.choice([" | News", " (2)", ""])
        kinds.append("retitle")
    return title, pars, kinds or ["exact_text"]


SITES = [
    ("wire.example", "World Wire", ["Home", "World", "Business", "Tech", "Opinion"]),
    ("courier.example", "The Courier", ["Front page", "Local", "Sport", "Culture", "Weather"]),
    ("tagblatt.example", "Tagblatt", ["Startseite", "Politik", "Wirtschaft", "Kultur"]),
    ("diario.example", "El Diario", ["Portada", "Nacional", "Economía", "Deportes"]),
    ("shimbun.example", "新聞オンライン", ["トップ", "国内", "国際", "経済", "スポーツ"]),
    ("xinwen.example", "新闻网", ["首页", "国内", "国际", "财经", "科技"]),
    ("gazette.example", "La Gazette", ["Accueil", "Monde", "Économie", "Culture"]),
]


def page(site, title, pars, related, lang, hints):
    host, name, nav = site
    lang_attr = f' lang="{BCP47[lang]}"' if hints else ""
    body = "\n".join(f"<p>{html.escape(p)}</p>" for p in pars)
    links = "".join(f'<li><a href="https://{host}/n/{i}">{html.escape(t)}</a></li>'
                    for i, t in enumerate(related))
    menu = "".join(f'<li><a href="https://{host}/{i}">{html.escape(n)}</a></li>'
                   for i, n in enumerate(nav))
    return (f"<!DOCTYPE html><html{lang_attr}><head><meta charset=\"utf-8\"><title>"
            f"{html.escape(title)} - {html.escape(name)}</title></head><body>"
            f"<header><div class=\"logo\">{html.escape(name)}</div><nav><ul>{menu}</ul></nav>"
            f"</header><main><article><h1>{html.escape(title)}</h1>\n{body}\n</article>"
            f"<aside class=\"related\"><h2>Related</h2><ul>{links}</ul></aside></main>"
            f"<footer><p>&copy; {html.escape(name)}. All rights reserved.</p></footer>"
            f"</body></html>")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--articles", type=int, default=30, help="base articles per language")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hints", action="store_true", help="declare the language in <html lang>")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    start = datetime(2026, 3, 2, tzinfo=timezone.utc)
    items, labels = [], {"version": 1, "seed": args.seed, "window_hours": 72, "ids": [],
                         "fetched_at": {}, "dup_groups": [], "story_groups": [],
                         "exact_pairs": [], "contained_pairs": [], "edits": {},
                         "language": {}, "base_article": {}}

    def new_id():
        return "%012x" % rng.getrandbits(48)

    for lang in LANGS:
        secs = sections(Path(args.docs) / f"debian-reference.{lang}.txt.gz", lang)
        # Sections spread over the whole book, a few paragraphs each (news-article length).
        step = max(1, len(secs) // args.articles)
        chosen = secs[::step][:args.articles]
        titles = [t for t, _ in secs]
        for n, (title, pars) in enumerate(chosen):
            pars = pars[:rng.randint(4, 9)]
            if len(pars) < 3:
                continue
            t0 = start + timedelta(seconds=rng.uniform(0, 3 * 86400))
            home = rng.randrange(len(SITES))
            group = []
            versions = [(title, pars, ["native"], home, t0)]
            for _ in range(rng.choice([1, 1, 2, 2, 3])):
                site = rng.choice([s for s in range(len(SITES)) if s != home])
                ct, cp, kinds = edit(title, pars, lang, rng)
                when = t0 + timedelta(minutes=rng.lognormvariate(5.0, 1.0) % (48 * 60))
                versions.append((ct, cp, kinds, site, when))
            for ct, cp, kinds, site, when in versions:
                i = new_id()
                related = rng.sample(titles, 4)
                items.append({"id": i, "url": f"https://{SITES[site][0]}/{lang}/{i}.html",
                              "fetched_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                              "html": page(SITES[site], ct, cp, related, lang, args.hints),
                              "_text": "\n\n".join(cp), "_title": ct})
                labels["edits"][i] = kinds
                labels["language"][i] = BCP47[lang]
                labels["base_article"][i] = f"debian-reference:{lang}:{hashlib.sha1(title.encode()).hexdigest()[:12]}"
                group.append(i)
            labels["dup_groups"].append(group)
            labels["story_groups"].append(group)
    items.sort(key=lambda x: (x["fetched_at"], x["id"]))
    norm, truth = {}, []
    for it in items:
        truth.append({"id": it["id"], "title": it.pop("_title"), "text": it["_text"]})
        t = unicodedata.normalize("NFKC", it.pop("_text")).casefold()
        norm[it["id"]] = " ".join(re.findall(r"\w+", t))
        labels["ids"].append(it["id"])
        labels["fetched_at"][it["id"]] = it["fetched_at"]
    order = {i: k for k, i in enumerate(labels["ids"])}
    for g in labels["dup_groups"]:
        g.sort(key=order.get)
        for a in range(len(g)):
            for b in range(a + 1, len(g)):
                x, y = g[a], g[b]
                if norm[x] == norm[y]:
                    labels["exact_pairs"].append([x, y])
                elif norm[x] in norm[y]:
                    labels["contained_pairs"].append([x, y])
                elif norm[y] in norm[x]:
                    labels["contained_pairs"].append([y, x])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(out / "stream.jsonl.gz", "wb", mtime=0) as f:
        for it in items:
            f.write((json.dumps(it, ensure_ascii=False) + "\n").encode())
    with gzip.GzipFile(out / "truth.jsonl.gz", "wb", mtime=0) as f:
        for t in truth:
            f.write((json.dumps(t, ensure_ascii=False) + "\n").encode())
    (out / "labels.json").write_text(json.dumps(labels, ensure_ascii=False, indent=0) + "\n")
    per = {}
    for i, l in labels["language"].items():
        per[l] = per.get(l, 0) + 1
    print(json.dumps({"pages": len(items), "groups": len(labels["dup_groups"]), "per_language": per}))


if __name__ == "__main__":
    main()

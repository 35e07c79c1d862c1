#!/usr/bin/env python3
"""Writes large crafted inputs (1-2 MB each) for one fuzz target into a folder: the shapes that
made a parser quadratic (tests/fuzz/CMakeLists.txt runs each once under a per-input time limit,
then fuzzes from them). Usage: make_large_inputs.py TARGET OUTDIR"""
import gzip
import json
import os
import sys

MB = 1 << 20


def rep(piece, size=2 * MB):
    return piece * (size // len(piece))


def html_pages():
    pieces = ["<script>", "<style>", "<title>", "<textarea>", "<noscript>", "<iframe>", "<svg>",
              "<xmp>", "<noembed>", "<", "<a", "<a b", "<p x=", "</", "<title><p>", "<!--x-->",
              "<div>", "<b><i>", "<a>", "<table><tr><td>", "&amp;", "<p a=1 b=2 c=3>",
              "<frameset><noframes>", "<li>word ", "<a href='x'>link</a> "]
    for i, p in enumerate(pieces):
        yield f"page{i}.html", ("<html><body><p>" + rep(p) + "</p></body></html>").encode()
    # What the date sources read: a script's data (keys that almost match, many scripts), ISO
    # titles kept by the pre-pass, two-digit years.
    yield "script_keys.html", ("<html><head><script>" + rep('"datePublished":"x",\\"publishedAt\\": 2')
                               + "</script></head><body><p>words</p></body></html>").encode()
    yield "many_scripts.html", ("<html><head>" + rep('<script>"createdAt":"2020-01-01"</script>')
                                + "</head><body><p>words</p></body></html>").encode()
    yield "iso_titles.html", ("<html><body>" + rep("<span class=date title='2020-06-07T1'>x</span>", MB)
                              + "</body></html>").encode()
    yield "short_years.html", ("<html><body><p>" + rep("28.09.19.", MB // 4) + "</p></body></html>").encode()
    # Issue 52: glued runs of numbers and month names, a date's start at every token and no date
    # (the text, and an element whose class names a date).
    for name, piece in [("dotted", "28.09.2019."), ("iso", "2019-09-28"), ("slashes", "28/09/2019"),
                        ("dots", "1.2.3.4.5."), ("month_names", "28Juni2019"),
                        ("iso_dashes", "2019-09-28-")]:
        yield f"glued_{name}.html", ("<html><body><h1>H</h1><p>" + rep(piece, MB) + "</p></body></html>").encode()
    yield "glued_date_element.html", ("<html><body><h1>H</h1><span class=date>" + rep("28.09.2019.", MB)
                                      + "</span><p>words</p></body></html>").encode()
    # Issue 53: stray end tags under open elements (Gumbo walks the open elements for each), JSON-LD
    # nested 100,000 deep (a recursive copy overflowed the stack) and a long author list.
    for name, piece in [("stray_i", "<i></x>"), ("stray_div", "<div></b>"),
                        ("span_div", "<span><div></span>"), ("reopened", "<div><b class=c>x</div>")]:
        yield f"{name}.html", ("<html><body>" + rep(piece) + "</body></html>").encode()
    yield "deep_then_stray.html", ("<html><body>" + "<i>" * 4000 + rep("</x>") + "</body></html>").encode()
    ld = lambda body: ('<html><head><script type="application/ld+json">' + body
                       + "</script></head><body><p>words of the page</p></body></html>").encode()
    yield "jsonld_objects.html", ld('{"@type":"NewsArticle","a":' + '{"a":' * 100000 + "1" + "}" * 100001)
    yield "jsonld_arrays.html", ld('{"author":' + "[" * 200000 + "]" * 200000 + "}")
    yield "jsonld_authors.html", ld('{"@type":"NewsArticle","author":['
                                    + ",".join('{"name":"A %d"}' % i for i in range(100000)) + "]}")


def feeds():
    attrs = "".join(f' a{i}=""' for i in range(60000))
    entries = rep('<entry><link href="p"/></entry>', MB)
    yield "atom_attrs.xml", (f'<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://a.test/"{attrs}>'
                             + entries + "</feed>").encode()
    yield "rss_items.xml", ("<rss><channel>" + rep("<item><title>t</title><link>https://a.test/x</link></item>")
                            + "</channel></rss>").encode()
    yield "unclosed_items.xml", ("<rss><channel>" + rep("<item ") + "</item>").encode()
    yield "deep.xml", ("<rss>" + "<a>" * 200000).encode()
    yield "deep_json_feed.json", ('{"version":"https://jsonfeed.org/version/1.1","items":[{"x":'
                                  + '{"a":' * 200000 + "1" + "}" * 200001 + "]}").encode()
    yield "entities.xml", ("<rss><channel><item><description>" + rep("&nbsp;&#x41;&bogus;")
                           + "</description></item></channel></rss>").encode()
    yield "cdata.xml", ("<rss><channel>" + rep("<![CDATA[") + "</channel></rss>").encode()


def robots():
    yield "stars.txt", ("User-agent: *\nDisallow: /" + rep("*a", 40000) + "b\n" + "/" + "a" * 16000).encode()
    yield "many_rules.txt", ("User-agent: *\n" + "".join(f"Disallow: /*r{i}*x$\n" for i in range(20000))
                             + "/r1/" + "y" * 8000).encode()
    yield "long_line.txt", ("User-agent: *\nAllow: " + rep("%41", MB) + "\n").encode()


def replay_lines():
    yield "quotes.jsonl", json.dumps({"url": "https://a.test/q", "text": rep('"\\', MB)}).encode()
    yield "html.jsonl", json.dumps({"url": "https://a.test/h", "html": "<p>" + rep("<script>", MB)}).encode()
    yield "feed.jsonl", json.dumps({"url": "https://a.test/f", "feed": "<rss><channel>"
                                    + rep("<item><title>t</title><description>words words</description></item>", MB)
                                    + "</channel></rss>"}).encode()
    # A line nested deeper than simdjson reads (1024): read the nlohmann way, which must not recurse.
    yield "deep.jsonl", ('{"url":"https://a.test/d","html":"<p>x</p>","x":' + "[" * 300000
                         + "]" * 300000 + "}").encode()


def warcs():
    record = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://a.test/x\r\n"
              b"Content-Type: application/http; msgtype=response\r\n")
    http = b"HTTP/1.1 200 OK\r\n" + b"X-H: v\r\n" * 60000 + b"Content-Type: text/html\r\n\r\n<p>x</p>"
    yield "many_headers.warc", record + b"Content-Length: " + str(len(http)).encode() + b"\r\n\r\n" + http + b"\r\n\r\n"
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n" + b"1\r\nx\r\n" * 200000 + b"0\r\n\r\n"
    yield "chunks.warc", record + b"Content-Length: " + str(len(chunked)).encode() + b"\r\n\r\n" + chunked + b"\r\n\r\n"
    yield "headers_only.warc", b"WARC/1.0\r\n" + b"WARC-X: y\r\n" * 150000
    # ARC (fuzz_warc reads every input as ARC too): a header line that never ends, lines that
    # are no headers, a record whose length runs past the end, and many small records.
    arc = b"filedesc://x.arc 127.0.0.1 20190218120000 text/plain 0\n\n"
    yield "endless_header.arc", arc + b"http://a.test/ " + b"x" * (2 * MB)
    yield "bad_headers.arc", arc + b"not a header\n" * 150000
    yield "past_the_end.arc", arc + b"http://a.test/ 1.2.3.4 20190218120000 text/html 999999999999\n" + b"<p>" * MB
    page = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>x</p>"
    arc_page = b"http://a.test/p 1.2.3.4 20190218120000 text/html %d\n" % len(page) + page + b"\n"
    yield "many_records.arc", arc + arc_page * 20000
    # Resynchronising after a bad record or junk (fuzz_warc's limit is 4096 bytes): lengths past
    # the good records after them, held and skipped through, or past the end of the file; runs
    # of version lines, of header fields that never end, of junk lines; over-long ARC header
    # lines; a length that is not a number; many bad records each one line long.
    warc_page = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://a.test/p\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(page) + page + b"\r\n\r\n")
    liar = lambda n: record + b"Content-Length: %d\r\n\r\n" % n + page + b"\r\n\r\n"
    yield "long_length.warc", liar(MB) + warc_page * (2 * MB // len(warc_page))
    yield "lengths_past_the_end.warc", (liar(10 << 30) + warc_page) * (MB // 300)
    yield "held_lengths.warc", (liar(3000) + warc_page * 20) * (MB // 3000)
    yield "version_lines.warc", b"WARC/1.0\r\n" * (2 * MB // 10)
    yield "fields_without_end.warc", (b"WARC/1.0\r\n" + b"WARC-X: y\r\n" * 6000) * 30
    yield "junk_lines.warc", warc_page + b"junk\r\n" * (MB // 6) + warc_page
    yield "bad_records.warc", b"WARC/1.0\r\nWARC-Type: response\r\n\r\n" * (MB // 30)
    yield "long_length.arc", arc + arc_page.replace(b" %d\n" % len(page), b" %d\n" % MB, 1) + arc_page * (2 * MB // len(arc_page))
    yield "lengths_past_the_end.arc", arc + (arc_page.replace(b" %d\n" % len(page), b" 99999999999\n", 1) + arc_page) * (MB // 200)
    yield "long_lines.arc", arc + (b"<p>" + b"x" * (20 << 10) + b"\n" + arc_page) * 60
    yield "bad_lengths.arc", arc + (arc_page.replace(b" %d\n" % len(page), b" 12x\n", 1) + page + b"\n") * (MB // 100)
    yield "short_lengths.arc", arc + arc_page.replace(b" %d\n" % len(page), b" 3\n", 1) * (MB // 100)


def input_files():
    yield "lines.jsonl.gz", gzip.compress(rep(b'{"url":"https://a.test/","text":"x"}\n'))
    yield "one_line.jsonl", rep(b"a")


def states():
    yield "junk.bin", bytes(range(256)) * (MB // 256)
    yield "varints.bin", b"\xff" * MB


def extracted_records():
    def record(**article):
        a = {"id": "a", "url": "https://a.test/", "canonical_url": "", "source": "a.test",
             "title": "t", "text": "words", "lang": "", "language": "", "byline": ""}
        a.update(article)
        return {"article": a, "fetch_url": "", "input": {"id": "", "url": "", "title": ""}}
    yield "escapes.json", json.dumps(record(text=rep('"\\\u00e9\n', MB))).encode()
    yield "authors.json", json.dumps(record(authors=["x"] * (MB // 4), tags=[1] * (MB // 4))).encode()
    yield "nested.json", (json.dumps(record())[:-1] + ',"deep":' + "[" * 100000 + "]" * 100000 + "}").encode()
    yield "keys.json", (json.dumps(record())[:-1] + "".join(f',"k{i}":{i}' for i in range(100000)) + "}").encode()
    yield "repeated.json", ("{" + '"fetch_url":"x",' * 100000 + json.dumps(record())[1:]).encode()


TARGETS = {"extract": html_pages, "feed": feeds, "robots": robots, "replay_line": replay_lines,
           "warc": warcs, "input_file": input_files, "state": states,
           "extracted": extracted_records}

if __name__ == "__main__":
    target, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for name, data in TARGETS[target]():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

#!/usr/bin/python3
"""Helpers of warc_test.sh (the standard library only).

    warc_check.py jsonl CONTENT_TYPE BASE_URL SITE_DIR NAME... > IN.jsonl
        the pages as replay lines: html_b64 of the same bytes, the same URLs and Content-Type
    warc_check.py break CRAWL.warc.gz OUT_DIR
        broken.warc.gz (one gzip member per record) and broken.warc (plain) from a wget crawl,
        with broken records put between good ones; OUT_DIR/expected.json says which records
        must become which dead letters, at which offsets, and which page is lost
    warc_check.py same WARC_OUT.jsonl JSONL_OUT.jsonl [--without URL]
        the same articles (id, url, title, text, duplicate kind) in the same order
    warc_check.py dead-letters DLQ.jsonl EXPECTED.json plain|gzip
        every expected dead letter with its reason, input_offset and the offsets in its detail
"""
import base64
import gzip
import json
import sys
import zlib


def members(data):
    """The gzip members of `data` as (compressed bytes, decompressed bytes)."""
    out, pos = [], 0
    while pos < len(data):
        d = zlib.decompressobj(31)
        plain = d.decompress(data[pos:]) + d.flush()
        used = len(data) - pos - len(d.unused_data)
        out.append((data[pos:pos + used], plain))
        pos += used
    return out


def record(warc_type, block, fields=b"", length=None):
    return (b"WARC/1.1\r\nWARC-Type: " + warc_type + b"\r\nWARC-Date: 2026-01-02T03:04:05Z\r\n" +
            fields + b"Content-Length: " + str(len(block) if length is None else length).encode() +
            b"\r\n\r\n" + block + b"\r\n\r\n")


def target(rec):
    for line in rec.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"warc-target-uri:"):
            return line.split(b":", 1)[1].strip().strip(b"<>").decode()  # wget writes <URI>
    return None


def is_page_response(rec):
    head, _, block = rec.partition(b"\r\n\r\n")
    return b"WARC-Type: response" in head and block.startswith(b"HTTP/1.0 200") and \
        b"text/html" in block.split(b"\r\n\r\n", 1)[0]


def cmd_jsonl(content_type, base, site, *names):
    for name in names:
        raw = open(f"{site}/{name}", "rb").read()
        print(json.dumps({"url": f"{base}/{name}", "content_type": content_type,
                          "html_b64": base64.b64encode(raw).decode()}))


def cmd_break(crawl, out_dir):
    recs = [plain for _, plain in members(open(crawl, "rb").read())]
    pages = [i for i, r in enumerate(recs) if is_page_response(r)]
    assert len(pages) >= 4, f"only {len(pages)} page responses in {crawl}"
    first, wrong_length, after_damage = pages[0], pages[1], pages[2]
    bad_chunks = record(b"response",
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked"
                        b"\r\n\r\n5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n",
                        b"WARC-Target-URI: http://broken.test/chunks\r\n")
    garbage = b"this is not a WARC record\r\n\r\n"
    # The page's own record with a Content-Length 10 short: the page is lost.
    head, _, rest = recs[wrong_length].partition(b"\r\n\r\n")
    block = rest[:-4]
    head = b"\r\n".join(l if not l.startswith(b"Content-Length:") else
                        b"Content-Length: " + str(len(block) - 10).encode()
                        for l in head.split(b"\r\n"))
    short = head + b"\r\n\r\n" + block + b"\r\n\r\n"
    cut = recs[first][:len(recs[first]) // 2]  # at the end of the file

    # (record bytes, expected reason or None, gzip-only: the member's bytes are corrupted)
    plan = []
    for i, r in enumerate(recs):
        if i == first:
            plan.append((bad_chunks, "http_bad_chunking", False))
            plan.append((garbage, "warc_bad_header", False))
        if i == wrong_length:
            plan.append((short, "warc_bad_length", False))
            continue
        plan.append((r, None, False))
        if i == after_damage:
            plan.append((recs[first], "warc_gzip_error", True))  # a copy of a page, damaged
    plan.append((cut, "warc_truncated", False))

    # Offsets: in the plain file, and in broken.warc.gz the member's and the decompressed
    # stream's (a damaged member gives nothing to it).
    expected = {"lost": target(recs[wrong_length]), "plain": [], "gzip": []}
    gz, plain = b"", b""
    for rec, reason, damaged in plan:
        member = gzip.compress(rec, mtime=0)
        if damaged:
            member = bytearray(member)
            for k in range(len(member) // 3, len(member) // 3 + 8):
                member[k] ^= 0x5A
            member = bytes(member)
        if reason:
            expected["gzip"].append({"reason": reason, "offset": len(plain),
                                     "member_offset": len(gz)})
            if not damaged:
                expected["plain"].append({"reason": reason, "offset": len(plain)})
        gz += member
        if not damaged:
            plain += rec
    open(f"{out_dir}/broken.warc.gz", "wb").write(gz)
    open(f"{out_dir}/broken.warc", "wb").write(plain)
    json.dump(expected, open(f"{out_dir}/expected.json", "w"), indent=1)
    for e in expected["plain"]:
        assert plain[e["offset"]:e["offset"] + 7] in (b"WARC/1.", b"this is"), e


def load(path):
    return [json.loads(l) for l in open(path, encoding="utf-8")]


def cmd_same(warc_out, jsonl_out, *rest):
    without = rest[1] if len(rest) == 2 and rest[0] == "--without" else None
    a = load(warc_out)
    b = [x for x in load(jsonl_out) if x["url"] != without]
    key = lambda x: (x["id"], x["url"], x["title"], x["text"], x["dup"]["kind"])
    if [key(x) for x in a] != [key(x) for x in b]:
        for x, y in zip(a, b):
            if key(x) != key(y):
                sys.exit(f"differ: {key(x)[:3]} vs {key(y)[:3]}")
        sys.exit(f"{len(a)} articles from WARC, {len(b)} from JSONL")
    print(f"{len(a)} articles alike")


def cmd_dead_letters(dlq, expected_path, kind):
    letters = load(dlq)
    expected = json.load(open(expected_path))[kind]
    problems = []
    for e in expected:
        where = f"record at offset {e['offset']}"
        if kind == "gzip":
            where += f" (gzip member at file offset {e['member_offset']})"
        found = [d for d in letters if d["reason"] == e["reason"] and
                 d.get("input_offset") == e["offset"] and d["detail"].startswith(where)]
        if not found:
            problems.append(f"no {e['reason']} dead letter with '{where}'")
    if len(letters) != len(expected):
        problems.append(f"{len(letters)} dead letters, {len(expected)} expected")
    if problems:
        sys.exit("; ".join(problems) + "\n" + "\n".join(json.dumps(d) for d in letters))
    print(f"{len(letters)} dead letters as expected")


if __name__ == "__main__":
    {"jsonl": cmd_jsonl, "break": cmd_break, "same": cmd_same,
     "dead-letters": cmd_dead_letters}[sys.argv[1]](*sys.argv[2:])

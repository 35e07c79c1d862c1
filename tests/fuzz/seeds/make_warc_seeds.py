#!/usr/bin/python3
"""Writes the fuzz_warc seeds into warc/ beside this file (run it again after changing it)."""
import gzip
import os
import zlib

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "warc")


def record(warc_type, block, fields=b"", length=None):
    return (b"WARC/1.1\r\nWARC-Type: " + warc_type + b"\r\nWARC-Date: 2026-01-02T03:04:05Z\r\n" +
            fields + b"Content-Length: " + str(len(block) if length is None else length).encode() +
            b"\r\n\r\n" + block + b"\r\n\r\n")


page = b"<html><head><title>T</title></head><body><p>Some words of a page.</p></body></html>"
body = gzip.compress(page, mtime=0)
chunked = b"".join(b"%x\r\n" % len(body[i:i + 16]) + body[i:i + 16] + b"\r\n"
                   for i in range(0, len(body), 16)) + b"0\r\n\r\n"
uri = b"WARC-Target-URI: <http://a.test/p>\r\n"
response = record(b"response", b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                  b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked, uri)
deflated = zlib.compress(page)
other = record(b"response", b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
               b"Content-Encoding: deflate\r\n\r\n" + deflated, uri)
open(f"{here}/response.warc", "wb").write(response)
members = [record(b"warcinfo", b"software: hand\r\n"),
           record(b"request", b"GET /p HTTP/1.1\r\nHost: a.test\r\n\r\n", uri), other]
open(f"{here}/per_record.warc.gz", "wb").write(b"".join(gzip.compress(m, mtime=0) for m in members))
wrong = record(b"resource", page, b"WARC-Target-URI: file:///p.html\r\nContent-Type: text/html\r\n",
               len(page) + 7)
open(f"{here}/wrong_length.warc", "wb").write(wrong + response)

# An ARC file (version 1): the file description, a DNS record and an HTML response.
def arc_record(url, ctype, content):
    return b"%s 93.184.216.119 20190218120000 %s %d\n" % (url.encode(), ctype.encode(), len(content)) + content + b"\n"
desc = b"1 0 newsflow seed\nURL IP-address Archive-date Content-type Archive-length\n"
page = b"<html><head><title>Seed</title></head><body><p>An ARC record of a page.</p></body></html>"
open(f"{here}/example.arc", "wb").write(
    b"filedesc://seed.arc 127.0.0.1 20190218120000 text/plain %d\n" % len(desc) + desc + b"\n" +
    arc_record("dns:example.com", "text/dns", b"20190218120000\nexample.com. 60 IN A 1.2.3.4") +
    arc_record("http://example.com/", "text/html", b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + page))

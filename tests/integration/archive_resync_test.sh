#!/usr/bin/env bash
# WARC and ARC files with a bad record or junk between good records, through `replay`: the bad
# record (a length past the good records after it or past the end of the file, a header line
# of more than 16 KiB, a length that is not a number) or the run of junk is one dead letter
# naming the bytes it covers, and every good record after it is read; each file in seconds.
set -euo pipefail
src=$1; work=$2/archive_resync; bin=${NEWSFLOW_BIN}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
# A 1 MiB page limit, so that lengths past it are reached with small files.
export NEWSFLOW_FETCH__ENABLED=false NEWSFLOW_EXTRACT__MAX_HTML_BYTES=1048576
good=600

/usr/bin/python3 - "$work" "$good" <<'PY'
import random, sys
work, good = sys.argv[1], int(sys.argv[2])
MiB = 1 << 20
WORDS = ("river council budget school teacher harbour minister election weather storm bridge "
         "railway station museum festival market farmer village hospital doctor nurse police "
         "court judge theatre library garden park street mayor citizen report").split()
def page(i):
    rnd = random.Random(i)
    text = "".join("<p>" + " ".join(rnd.choice(WORDS) for _ in range(70)) + f" number {i}.</p>"
                   for _ in range(5))
    return (f"<html><head><title>Story {i} of the day</title></head><body><article>"
            f"<h1>Story {i}</h1>{text}</article></body></html>").encode()
def http(body):
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + body
def warc(i, length=None):
    block = http(page(i))
    return (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Date: 2024-05-01T10:00:00Z\r\n"
            b"WARC-Target-URI: http://good.test/%d\r\n"
            b"Content-Type: application/http; msgtype=response\r\n"
            b"Content-Length: %d\r\n\r\n" % (i, len(block) if length is None else length)
            + block + b"\r\n\r\n")
def arc(i, length=None, length_text=None):
    block = http(page(i))
    n = length_text or b"%d" % (len(block) if length is None else length)
    return b"http://good.test/%d 93.184.216.119 20240501100000 text/html %s\n" % (i, n) + block + b"\n"
desc = b"1 0 test\nURL IP-address Archive-date Content-type Archive-length\n"
arc_desc = b"filedesc://t.arc 127.0.0.1 20240501100000 text/plain %d\n" % len(desc) + desc + b"\n"
goods = lambda record: b"".join(record(i) for i in range(1, good + 1))
files = {
    # A length past the limit (so skipped through) that ends inside the good records, and one
    # past the end of the file.
    "warc_long.warc": warc(0, 3 * MiB // 2) + goods(warc),
    "warc_past_end.warc": warc(0, 10 << 30) + goods(warc),
    # Junk: 1 MB of version lines, then of text lines, between good records.
    "warc_junk.warc": warc(0) + b"WARC/1.0\r\n" * (MiB // 10) + warc(1) + b"junk line\r\n" * (MiB // 11) + warc(2),
    # A header line of 20 KiB (minified HTML); a length past the good records, held (under the
    # limit + 1 MiB) and skipped through (10 GiB, past the end of the file); a bad length.
    "arc_long_line.arc": arc_desc + b"<html>" + b"x" * (20 << 10) + b"</html>\n" + goods(arc),
    "arc_long.arc": arc_desc + arc(0, 3 * MiB // 2) + goods(arc),
    "arc_past_end.arc": arc_desc + arc(0, 10 << 30) + goods(arc),
    "arc_bad_length.arc": arc_desc + arc(0, length_text=b"12x") + arc(1),
    "arc_junk.arc": arc_desc + arc(0) + b"".join(b"junk line %d\n" % i for i in range(MiB // 14)) + arc(1),
}
for name, data in files.items():
    open(f"{work}/{name}", "wb").write(data)
PY

# check FILE RECORDS ARTICLES REASON [SECONDS]: the summary counts RECORDS records, ARTICLES
# articles and one dead letter of REASON, whose detail names the bytes it covers.
check() {
  local f=$1 records=$2 articles=$3 reason=$4 seconds=${5:-20} start end
  start=$(date +%s%N)
  "$bin" replay --quiet --input "$work/$f" --output "$work/$f.out" 2> "$work/$f.err" ||
    fail "replay of $f failed: $(cat "$work/$f.err")"
  end=$(date +%s%N)
  grep -q "^replay: $records WARC records -> $articles articles (.*) + 1 dead letters ( $reason=1 )" \
    "$work/$f.err" || fail "$f: $(cat "$work/$f.err")"
  [ "$(wc -l < "$work/$f.out.dlq.jsonl")" = 1 ] || fail "$f: not one dead letter"
  grep -q "\"reason\":\"$reason\".*bytes skipped from offset [0-9]* to the next record header, at offset [0-9]*" \
    "$work/$f.out.dlq.jsonl" || fail "$f: the dead letter names no byte range: $(cat "$work/$f.out.dlq.jsonl")"
  (( (end - start) / 1000000 < seconds * 1000 )) || fail "$f took $(( (end - start) / 1000000 )) ms"
  echo "$f: $(tail -n 1 "$work/$f.err") in $(( (end - start) / 1000000 )) ms"
}
check warc_long.warc $((good + 1)) "$good" warc_bad_length
check warc_past_end.warc $((good + 1)) "$good" warc_truncated
check arc_long_line.arc $((good + 2)) "$good" arc_bad_header
check arc_long.arc $((good + 2)) "$good" arc_bad_length
check arc_past_end.arc $((good + 2)) "$good" arc_truncated
check arc_bad_length.arc 3 1 arc_bad_header 2
check arc_junk.arc 4 2 arc_bad_header 2
# Two runs of junk in the WARC: one dead letter each.
f=warc_junk.warc
"$bin" replay --quiet --input "$work/$f" --output "$work/$f.out" 2> "$work/$f.err" || fail "replay of $f failed"
grep -q "^replay: 5 WARC records -> 3 articles (.*) + 2 dead letters ( warc_bad_header=2 )" \
  "$work/$f.err" || fail "$f: $(cat "$work/$f.err")"
echo "$f: $(tail -n 1 "$work/$f.err")"
echo "1 passed, 0 failed"

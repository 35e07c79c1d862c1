#!/usr/bin/env bash
# replay over many inputs and on several threads, through the real binary:
#   - --jobs 1, 2 and 3 write the same bytes (articles, stories, dead letters);
#   - two inputs in one run give what their concatenation gives, and so do a directory of them
#     (its files in name order) and a glob; a dead letter names its file;
#   - ARC files (version 1 as the Internet Archive writes them; plain and gzip per record) give
#     their pages as the same pages in JSONL do, and a broken record is a dead letter;
#   - a missing file, a glob that matches nothing and an empty directory are refused.
set -euo pipefail
src=$1; work=$2/replay_inputs; bin=${NEWSFLOW_BIN}
rm -rf "$work"; mkdir -p "$work/dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$src/tests/integration/lib.sh"
export NEWSFLOW_FETCH__ENABLED=false
same() {  # same A B: the two runs' articles, stories and dead letters are the same bytes
  for f in .jsonl .stories; do
    cmp -s "$work/$1$f" "$work/$2$f" || fail "$1$f and $2$f differ"
  done
}
replay() {  # replay NAME ARGS...: articles to NAME.jsonl, stories to NAME.stories
  local name=$1; shift
  "$bin" replay --quiet "$@" --output "$work/$name.jsonl" --stories "$work/$name.stories" \
    2> "$work/$name.err" || fail "replay $name: $(cat "$work/$name.err")"
}

# The samples, with a line that is not JSON in the second half.
zcat "$src/samples/pages.jsonl.gz" > "$work/all.jsonl"
bad_line=$(($(wc -l < "$work/all.jsonl") + 1))
echo 'this is not json' >> "$work/all.jsonl"
zcat "$src/samples/feeds.jsonl.gz" >> "$work/all.jsonl"
total=$(wc -l < "$work/all.jsonl")
head -n 20 "$work/all.jsonl" > "$work/dir/a.jsonl"
tail -n +21 "$work/all.jsonl" | gzip -c > "$work/dir/b.jsonl.gz"
touch "$work/dir/.hidden"

# 1. Any number of threads: the same bytes.
replay whole1 --jobs 1 --input "$work/all.jsonl"
for j in 2 3; do
  replay "whole$j" --jobs "$j" --input "$work/all.jsonl"
  same whole1 "whole$j"
  cmp -s "$work/whole1.jsonl.dlq.jsonl" "$work/whole$j.jsonl.dlq.jsonl" || fail "--jobs $j: other dead letters"
done

# 2. Two inputs, a directory, a glob: what the concatenation gives.
replay two --jobs 2 --input "$work/dir/a.jsonl" --input "$work/dir/b.jsonl.gz"
same whole1 two
replay dir --input "$work/dir"
same whole1 dir
replay glob --input "$work/dir/*.jsonl*"
same whole1 glob
grep -q "$total lines from 2 files" "$work/two.err" || fail "the summary does not count both files: $(cat "$work/two.err")"
grep -q "\"input_file\":\"$work/dir/b.jsonl.gz\",\"input_line\":$((bad_line - 20))," "$work/two.jsonl.dlq.jsonl" \
  || fail "the dead letter does not name its file and line: $(cat "$work/two.jsonl.dlq.jsonl")"

# 3. ARC: the sample pages as a crawler of 1996 would have written them, with the records
# ARC files also hold (the file description, a DNS lookup, an image, a redirect).
python3 - "$src/samples/pages.jsonl.gz" "$work" <<'PY'
import base64, gzip, json, sys
lines = [json.loads(l) for l in gzip.open(sys.argv[1], "rt")][:5]
work = sys.argv[2]
def record(url, ctype, content):
    return b"%s 93.184.216.119 20190218120000 %s %d\n" % (url.encode(), ctype.encode(), len(content)) + content + b"\n"
desc = b"1 0 newsflow test\nURL IP-address Archive-date Content-type Archive-length\n"
records = [b"filedesc://test.arc 127.0.0.1 20190218120000 text/plain %d\n" % len(desc) + desc + b"\n",
           record("dns:example.com", "text/dns", b"20190218120000\nexample.com. 60 IN A 1.2.3.4"),
           record("http://example.com/logo.png", "image/png", b"HTTP/1.0 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG"),
           record("http://example.com/old", "text/html", b"HTTP/1.0 301 Moved\r\nLocation: /\r\n\r\n")]
jsonl = []
for p in lines:
    body = p["html"].encode()
    records.append(record(p["url"], "text/html", b"HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + body))
    jsonl.append(json.dumps({"url": p["url"], "fetched_at": "2019-02-18T12:00:00Z", "content_type": "text/html; charset=utf-8", "html_b64": base64.b64encode(body).decode()}))
open(work + "/pages.arc", "wb").write(b"".join(records))
with open(work + "/pages.arc.gz", "wb") as f:
    for r in records:
        f.write(gzip.compress(r))
open(work + "/pages_of_arc.jsonl", "w").write("\n".join(jsonl) + "\n")
broken = records[:2] + [b"not an arc header\n"] + records[4:6]
open(work + "/broken.arc", "wb").write(b"".join(broken)[:-40])
PY
replay arc --input "$work/pages.arc"
replay arcgz --jobs 2 --input "$work/pages.arc.gz"
replay arcjsonl --input "$work/pages_of_arc.jsonl"
same arc arcgz
same arc arcjsonl
grep -q "9 WARC records -> 5 articles" "$work/arc.err" || fail "ARC summary: $(cat "$work/arc.err")"
grep -q "skipped ( filedesc=1 http_3xx=1 not_html=1 not_http=1 )" "$work/arc.err" || fail "ARC skips: $(cat "$work/arc.err")"
replay broken --input "$work/broken.arc"
grep -q '"reason":"arc_bad_header"' "$work/broken.jsonl.dlq.jsonl" || fail "no arc_bad_header: $(cat "$work/broken.jsonl.dlq.jsonl")"
grep -q '"reason":"arc_truncated"' "$work/broken.jsonl.dlq.jsonl" || fail "no arc_truncated: $(cat "$work/broken.jsonl.dlq.jsonl")"
[ "$(wc -l < "$work/broken.jsonl")" -eq 1 ] || fail "the whole record after the bad header line was not read"

# produce sends an ARC file's pages as it sends a WARC file's.
if command -v kcat >/dev/null; then
  start_dev_broker --partitions 1
  produced=$(NEWSFLOW_KAFKA__BROKERS=$broker "$bin" produce --input "$work/pages.arc.gz" 2> "$work/produce.log")
  [ "$produced" = 5 ] || fail "produce sent $produced pages of the ARC file: $(cat "$work/produce.log")"
  grep -q "9 WARC records -> 5 pages" "$work/produce.log" || fail "produce's ARC summary: $(cat "$work/produce.log")"
fi

# --stage-times says where the time went.
"$bin" replay --quiet --jobs 2 --stage-times --input "$work/all.jsonl" --output "$work/t.jsonl" \
  2> "$work/stages.err"
grep -q "^replay: 2 threads; reading .* parsing and extracting .* judging and writing in order" \
  "$work/stages.err" || fail "no stage times: $(cat "$work/stages.err")"

# 4. What cannot be read is refused before anything is written.
mkdir -p "$work/empty"
for bad in "$work/missing.jsonl" "$work/dir/*.warc" "$work/empty"; do
  if "$bin" replay --quiet --input "$bad" --output "$work/x.jsonl" 2> "$work/bad.err"; then
    fail "replay accepted $bad"
  fi
done
echo "replay inputs: --jobs 1/2/3 alike; 2 files, a directory and a glob as their concatenation; ARC plain and gzip as JSONL"
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# WARC input end to end. Pages served from 127.0.0.1 and recorded with `wget --warc-file` replay
# into the same articles as the same bytes given as html_b64 replay lines; what is not a page
# is skipped with its reason; broken records (bad chunking, a bad header, a wrong
# Content-Length, a damaged gzip member, a record cut by the end of the file) end as dead
# letters naming their offsets while the good records after them still come out, in a
# per-record gzip file and a plain one; `produce` sends the pages of a WARC file.
set -euo pipefail
src=$1; work=$2/warc; bin=${NEWSFLOW_BIN}
rm -rf "$work"; mkdir -p "$work/site"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$src/tests/integration/lib.sh"
command -v wget >/dev/null || fail "wget is not installed (deploy/install-deps.sh installs it)"
check=("$src/tests/integration/warc_check.py")
export NEWSFLOW_FETCH__ENABLED=false NEWSFLOW_LOG__LEVEL=warn

# The site: golden pages (one in Latin-1, which only its <meta> declares, one in Chinese), some
# sample pages (copies among them, so duplicates are judged), a text file.
pages=()
for c in french_article german_news latin1_declared chinese_news short_article live_blog; do
  cp "$src/tests/golden/cases/$c/input.html" "$work/site/$c.html"; pages+=("$c.html")
done
/usr/bin/python3 -c '
import gzip, json, sys
for n, line in zip(range(8), gzip.open(sys.argv[1], "rt", encoding="utf-8")):
    open(f"{sys.argv[2]}/sample{n}.html", "w", encoding="utf-8").write(json.loads(line)["html"])
' "$src/samples/pages.jsonl.gz" "$work/site"
for n in $(seq 0 7); do pages+=("sample$n.html"); done
printf 'not a page\n' > "$work/site/notes.txt"

port=$(free_port)
/usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/site" \
  > "$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
base=http://127.0.0.1:$port
{ printf "$base/%s\n" "${pages[@]}"; echo "$base/notes.txt"; echo "$base/missing.html"; } \
  > "$work/urls.txt"
# wget exits 8 for the 404; the WARC records it all the same.
(cd "$work" && wget -q --warc-file=crawl -i urls.txt -O /dev/null) || true
[ -s "$work/crawl.warc.gz" ] || fail "wget wrote no WARC file"
content_type=$(grep -a -m1 -i '^Content-Type: text/html' <(zcat "$work/crawl.warc.gz") |
  cut -d' ' -f2- | tr -d '\r')

# The same pages as replay lines: html_b64 of the same bytes, the same URLs and Content-Type.
/usr/bin/python3 "${check[@]}" jsonl "$content_type" "$base" "$work/site" "${pages[@]}" \
  > "$work/pages.jsonl"
"$bin" replay --input "$work/pages.jsonl" --output "$work/jsonl.out" --dlq "$work/jsonl.dlq" \
  2> "$work/jsonl.log" || fail "replay of the JSONL failed: $(cat "$work/jsonl.log")"
"$bin" replay --input "$work/crawl.warc.gz" --output "$work/warc.out" --dlq "$work/warc.dlq" \
  2> "$work/warc.log" || fail "replay of the WARC failed: $(cat "$work/warc.log")"
/usr/bin/python3 "${check[@]}" same "$work/warc.out" "$work/jsonl.out" ||
  fail "the WARC gave other articles than the JSONL"
[ ! -s "$work/warc.dlq" ] || fail "dead letters from a clean crawl: $(cat "$work/warc.dlq")"
n=${#pages[@]}
summary=$(tail -n 1 "$work/warc.log")
# Per URL a request and a response, a warcinfo record first, wget's own metadata and resource
# records last: all skipped but the pages' responses, and every record counted. (A request wget
# retried, when the server was slow on a loaded machine, is one more request record.)
for want in " http_4xx=1 " " warcinfo=1 " " not_html="; do
  [[ $summary == *"$want"* ]] || fail "the summary lacks '$want': $summary"
done
requests=$(sed -nE 's/.* request=([0-9]+) .*/\1/p' <<< "$summary")
[ "${requests:-0}" -ge $((n + 2)) ] || fail "fewer than $((n + 2)) request records: $summary"
records=$(sed -E 's/^replay: ([0-9]+) WARC records.*/\1/' <<< "$summary")
skipped=$(sed -E 's/.* ([0-9]+) skipped .*/\1/' <<< "$summary")
[ "$records" -eq $((n + skipped)) ] || fail "$records records are not $n pages + $skipped skipped"
# Plain and whole-file gzip read alike.
zcat "$work/crawl.warc.gz" > "$work/crawl.warc"
gzip -c "$work/crawl.warc" > "$work/whole.warc.gz"
for f in crawl.warc whole.warc.gz; do
  "$bin" replay --input "$work/$f" --output "$work/$f.out" --dlq /dev/null 2> /dev/null
  cmp -s "$work/warc.out" "$work/$f.out" || fail "$f gave other articles than crawl.warc.gz"
done
# Standard input too.
"$bin" replay --input - --output - --dlq /dev/null < "$work/crawl.warc.gz" > "$work/stdin.out" \
  2> /dev/null
cmp -s "$work/warc.out" "$work/stdin.out" || fail "a WARC on stdin gave other articles"

# Broken records between good ones.
/usr/bin/python3 "${check[@]}" break "$work/crawl.warc.gz" "$work"
lost=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["lost"])' \
  "$work/expected.json")
for kind in gzip plain; do
  in=$work/broken.warc; [ $kind = gzip ] && in=$work/broken.warc.gz
  "$bin" replay --input "$in" --output "$work/broken_$kind.out" --dlq "$work/broken_$kind.dlq" \
    2> "$work/broken_$kind.log" || fail "replay of a broken $kind WARC failed"
  /usr/bin/python3 "${check[@]}" dead-letters "$work/broken_$kind.dlq" "$work/expected.json" \
    $kind || fail "dead letters of the broken $kind WARC"
  # Every page but the one whose record was broken, as the JSONL gave them.
  /usr/bin/python3 "${check[@]}" same "$work/broken_$kind.out" "$work/jsonl.out" --without "$lost" ||
    fail "the broken $kind WARC lost good records"
done
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
  /usr/bin/python3 "$src/tests/integration/schemas_check.py" "$src/deploy/schemas" replay \
    "$work/broken_gzip.out" "$work/broken_gzip.dlq" > /dev/null ||
    fail "WARC dead letters do not hold to the schema"
fi

# produce: the pages of the WARC to a broker's pages topic, with their Content-Type.
if command -v kcat >/dev/null; then
  start_dev_broker --partitions 1
  produced=$(NEWSFLOW_KAFKA__BROKERS=$broker "$bin" produce --input "$work/crawl.warc.gz" \
    2> "$work/produce.log")
  [ "$produced" = "$n" ] || fail "produce sent $produced messages for $n pages: $(cat "$work/produce.log")"
  grep -q "$records WARC records -> $n pages + 0 ( ) dead letters + $skipped (" "$work/produce.log" ||
    fail "produce did not sum up the WARC: $(cat "$work/produce.log")"
  kcat -b "$broker" -C -t newsflow.pages -e -q -f '%h\n' > "$work/headers.txt" 2>/dev/null
  [ "$(grep -c "content_type=$content_type" "$work/headers.txt")" = "$n" ] ||
    fail "produced pages lack their Content-Type: $(head -3 "$work/headers.txt")"
fi
echo "WARC: $n pages alike; broken records as dead letters with their offsets"
echo "1 passed, 0 failed"

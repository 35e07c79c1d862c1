#!/usr/bin/env bash
# A page's memory is a few times its bytes whatever they are (issue 53): `newsflow extract` on
# 4 MB pages of NULs, of other control characters, of U+FFFD, of one word, of one-letter words,
# of ideographs beside a date and of ordinary sentences, each within PAGE_MEMORY_FACTOR times
# its size above the peak of a small page (0: not checked, as under sanitizers, which multiply
# memory), and within PAGE_SECONDS. Before the bound a page of NULs took about 100 times its
# size and 6 s (its U+FFFDs tokenized whole for dates, 72 bytes a token), the others 30-60 times.
set -euo pipefail
bin=${NEWSFLOW_BIN}; work=$2/page_memory
factor=${PAGE_MEMORY_FACTOR:-8}
seconds=${PAGE_SECONDS:-3}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x /usr/bin/time ] || fail "/usr/bin/time is not installed (Debian package time)"

python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
size = 4 << 20
head = b"<html><head><title>A page</title></head><body><p>" + b"Some words here. " * 180
tail = b"</p></body></html>"
def page(name, unit):
    body = unit * ((size - len(head) - len(tail)) // len(unit))
    with open(f"{work}/{name}.html", "wb") as f:
        f.write(head + body + tail)
page("nuls", b"\0")
page("controls", b"\x01\x02")
page("fffd", "\ufffd".encode())
page("one_word", b"x")
page("letters", b"a ")
page("ideographs", "中文 2020年6月7日 ".encode())
page("sentences", b"Ordinary words of a long text, written on 7 June 2020. ")
with open(f"{work}/small.html", "wb") as f:
    f.write(head + tail)
PY

peak_kb() {  # peak resident KB of `newsflow extract $1`; its seconds in $work/seconds
  /usr/bin/time -f "%M %e" -o "$work/time" "$bin" extract "$1" > "$work/out.json" ||
    fail "extract $1 failed"
  read -r kb s < "$work/time"
  echo "$s" > "$work/seconds"
  echo "$kb"
}
base=$(peak_kb "$work/small.html")
echo "a small page: ${base} KB"
for name in nuls controls fffd one_word letters ideographs sentences; do
  f=$work/$name.html
  bytes=$(stat -c %s "$f")
  kb=$(peak_kb "$f")
  s=$(cat "$work/seconds")
  over=$(( (kb - base) * 1024 ))
  echo "$name: $bytes bytes, peak ${kb} KB (${over} bytes above a small page's), ${s} s"
  [ "$factor" = 0 ] || [ "$over" -le $(( factor * bytes )) ] ||
    fail "$name: ${over} bytes above a small page's peak, more than $factor times its $bytes"
  awk -v s="$s" -v limit="$seconds" 'BEGIN { exit !(s <= limit) }' ||
    fail "$name: ${s} s, limit ${seconds} s"
done
# The page of one-letter words says its words were cut.
grep -q words_beyond_limit_not_read <("$bin" extract "$work/letters.html") ||
  fail "no words_beyond_limit_not_read warning on 2 million words"
echo "PASS"

#!/usr/bin/env bash
# A page's memory is a few times its bytes whatever they are (issue 53): `newsflow extract` on
# 4 MB pages of NULs, of other control characters, of U+FFFD, of one word, of one-letter words,
# of ideographs beside a date, of ordinary sentences and of tiny elements (refused past
# extract.max_elements: an element costs about 1 KB to hold), each within PAGE_MEMORY_FACTOR times
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
page("list_items", b"<li>w ")
page("divs", b"<div>x</div>")
with open(f"{work}/small.html", "wb") as f:
    f.write(head + tail)
PY

peak_kb() {  # peak resident KB of `newsflow extract $1`; its seconds in $work/seconds
  # An article (0) or a refusal (1: a page of more elements than extract.max_elements); never
  # a signal.
  local rc=0
  /usr/bin/time -f "%M %e" -o "$work/time" "$bin" extract "$1" > "$work/out.json" || rc=$?
  [ "$rc" -le 1 ] || fail "extract $1 exited $rc"
  read -r kb s < <(tail -1 "$work/time")
  echo "$s" > "$work/seconds"
  echo "$kb"
}
base=$(peak_kb "$work/small.html")
echo "a small page: ${base} KB"
for name in nuls controls fffd one_word letters ideographs sentences list_items divs; do
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

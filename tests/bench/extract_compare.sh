#!/usr/bin/env bash
# Extraction speed against the usual open-source extractors, one core each (taskset -c 0), the
# same pages, one run: readability-lxml (Debian python3-readability), @mozilla/readability on
# linkedom (npm), boilerpipe's ArticleExtractor (Debian libboilerpipe-java), and newsflow's MSS
# and Finn extraction (build/tests/bench_extract), and `newsflow replay` end to end (reading the
# JSONL, JSON decoding, dedup and stories included). Each other tool reads all pages into memory first
# and times only extraction; the JVM and node get one untimed warm-up pass.
# Usage: tests/bench/extract_compare.sh [PAGES.jsonl.gz] [BUILD_DIR]  (installs what it needs;
# ~2 minutes on the AEB pages)
set -euo pipefail
pages=${1:-../shared/data/extraction/aeb/pages.jsonl.gz}; build=${2:-build}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
pin() { if command -v taskset > /dev/null; then taskset -c 0 "$@"; else "$@"; fi; }

if ! /usr/bin/python3 -c "import readability" 2> /dev/null || [ ! -f /usr/share/java/boilerpipe.jar ]; then
  apt-get install -y -qq python3-readability libboilerpipe-java > /dev/null
fi
python3 - "$pages" "$work" <<'PY'
import gzip, json, sys
pages, work = sys.argv[1], sys.argv[2]
opener = gzip.open if pages.endswith(".gz") else open
with opener(pages, "rt", encoding="utf-8") as f, open(f"{work}/pages.txt", "w") as out:
    n = 0
    for line in f:
        html = json.loads(line).get("html")
        if html:
            # One page per line, newlines escaped, for the Java and node readers.
            out.write(html.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "") + "\n")
            n += 1
print(f"{n} pages from {pages}")
PY

# readability-lxml (Debian's python3, where the package lives)
cat > "$work/rl.py" <<'PY'
import sys, time
from readability import Document
pages = [l.rstrip("\n").replace("\\n", "\n").replace("\\\\", "\\") for l in open(sys.argv[1])]
t = time.perf_counter()
chars = sum(len(Document(p).summary()) for p in pages)
dt = time.perf_counter() - t
print(f"readability-lxml          {1000 * dt / len(pages):7.2f} ms/page  {len(pages) / dt:7.1f} pages/s")
PY
pin /usr/bin/python3 "$work/rl.py" "$work/pages.txt" 2> /dev/null

# @mozilla/readability + linkedom
mkdir -p "$work/js" && (cd "$work/js" && npm init -y > /dev/null &&
  npm install --silent @mozilla/readability linkedom@0.18.5 > /dev/null 2>&1)
cat > "$work/js/run.js" <<'JS'
const fs = require("fs");
const { Readability } = require("@mozilla/readability");
const { parseHTML } = require("linkedom");
const pages = fs.readFileSync(process.argv[2], "utf8").split("\n").filter((l) => l.length)
  .map((l) => l.replace(/\\n/g, "\n").replace(/\\\\/g, "\\"));
const pass = () => { let n = 0; for (const p of pages) { const { document } = parseHTML(p);
  const a = new Readability(document).parse(); n += a && a.textContent ? a.textContent.length : 0; }
  return n; };
pass();  // warm-up
const t = process.hrtime.bigint(); pass(); const ms = Number(process.hrtime.bigint() - t) / 1e6;
console.log(`@mozilla/readability+linkedom ${(ms / pages.length).toFixed(2).padStart(4)} ms/page  ${(1000 * pages.length / ms).toFixed(1).padStart(7)} pages/s`);
JS
pin node "$work/js/run.js" "$work/pages.txt"

# boilerpipe ArticleExtractor
cat > "$work/Bp.java" <<'JAVA'
import de.l3s.boilerpipe.extractors.ArticleExtractor;
import java.nio.file.*;
import java.util.*;
public class Bp {
  public static void main(String[] a) throws Exception {
    List<String> pages = new ArrayList<>();
    for (String l : Files.readAllLines(Paths.get(a[0]))) {
      if (!l.isEmpty()) pages.add(l.replace("\\n", "\n").replace("\\\\", "\\"));
    }
    int failed = 0;
    for (int pass = 0; pass < 2; ++pass) {
      long t = System.nanoTime();
      failed = 0;
      for (String p : pages) {
        try { ArticleExtractor.INSTANCE.getText(p); } catch (Exception e) { ++failed; }
      }
      double ms = (System.nanoTime() - t) / 1e6;
      if (pass == 1) System.out.printf("boilerpipe ArticleExtractor %7.2f ms/page  %7.1f pages/s  (%d failed)%n",
                                       ms / pages.size(), 1000 * pages.size() / ms, failed);
    }
  }
}
JAVA
cp=/usr/share/java/boilerpipe.jar:/usr/share/java/nekohtml.jar:/usr/share/java/xercesImpl.jar:/usr/share/java/xml-apis.jar
javac -cp "$cp" -d "$work" "$work/Bp.java"
pin java -XX:ActiveProcessorCount=1 -cp "$cp:$work" Bp "$work/pages.txt"

# newsflow (Google Benchmark over the same pages file)
NEWSFLOW_BENCH_PAGES="$pages" pin "$build/tests/bench_extract" \
  --benchmark_filter='BM_GumboParseStripped|BM_Extract' 2> /dev/null |
  awk '/^BM_/ { for (i = 1; i <= NF; ++i) if ($i ~ /^pages\/s=/) { split($i, v, "="); r = v[2] + 0;
        printf "newsflow %-24s %7.2f ms/page  %7.1f pages/s\n", $1, 1000 / r, r } }'

# newsflow replay end to end on the same pages (read, decode JSON, extract, dedup, stories, write
# article JSON), one core: the path users run.
n=$(wc -l < "$work/pages.txt")
start=$(date +%s.%N)
pin "$build/newsflow" replay --jobs 1 --input "$pages" --output "$work/replay.jsonl" > /dev/null 2>&1
end=$(date +%s.%N)
awk -v n="$n" -v s="$start" -v e="$end" \
  'BEGIN { printf "newsflow replay (end to end)   %7.2f ms/page  %7.1f pages/s\n", 1000 * (e - s) / n, n / (e - s) }'

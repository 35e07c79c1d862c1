#!/usr/bin/env bash
# stories.related_across_languages on labelled cross-language pairs of the ten-language dev
# stream (tests/bench/related_stories_pairs.json: ids only, the texts stay in ../shared): for
# each related_threshold, replays the stream with the links on and prints the share of
# same-event pairs (translations of one article, reports of one event) whose stories link (one
# story, or one lists the other in related_stories as of its last update), and of hard and
# random different-event pairs linked.
#
#   tests/bench/related_stories.sh [NEWSFLOW] [THRESHOLD...]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/newsflow}
shift || true
thresholds=("$@")
[ ${#thresholds[@]} -gt 0 ] || thresholds=(0.05 0.1 0.15 0.2 0.3)
stream=../shared/data/stories/dev/stream.jsonl.gz
[ -f "$stream" ] || { echo "needs $stream (../shared)" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '| related_threshold | same-event pairs linked | hard different-event linked | random different-event linked |\n'
printf '|---|---|---|---|\n'
for t in "${thresholds[@]}"; do
  printf 'stories:\n  related_across_languages: true\n  related_threshold: %s\n' "$t" >"$tmp/c.yaml"
  "$bin" replay --quiet --config "$tmp/c.yaml" --input "$stream" --output "$tmp/a.jsonl" \
    --stories "$tmp/s.jsonl" 2>/dev/null
  python3 - "$t" "$tmp" tests/bench/related_stories_pairs.json <<'PY'
import json, sys
t, tmp, pairs = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
story = {a["id"]: a["story_id"] for a in map(json.loads, open(tmp + "/a.jsonl"))}
related = {}
for s in map(json.loads, open(tmp + "/s.jsonl")):
    related[s["story_id"]] = set(s.get("related_stories", []))
def linked(a, b):
    sa, sb = story.get(a), story.get(b)
    return sa is not None and sb is not None and (
        sa == sb or sb in related.get(sa, ()) or sa in related.get(sb, ()))
cells = []
for kind in ("same_event", "different_hard", "different_random"):
    ps = pairs[kind]
    n = sum(linked(a, b) for a, b in ps)
    cells.append("%d/%d (%.2f)" % (n, len(ps), n / len(ps)))
print("| %s | %s |" % (t, " | ".join(cells)))
PY
done

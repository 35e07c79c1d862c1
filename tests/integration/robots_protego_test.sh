#!/usr/bin/env bash
# The robots.txt matcher against Scrapy's Protego (Debian python3-protego): see
# robots_protego.py.
set -euo pipefail
src=$1
/usr/bin/python3 -c 'import protego' 2>/dev/null ||
  { echo "FAIL: python3-protego is not installed (deploy/install-deps.sh installs it)" >&2; exit 1; }
exec /usr/bin/python3 "$src/tests/integration/robots_protego.py" "$NEWSFLOW_BIN" \
  "$src/tests/data/robots/corpus.jsonl"

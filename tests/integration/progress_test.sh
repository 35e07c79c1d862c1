#!/usr/bin/env bash
# replay's progress on a terminal (a pty) and off one, and --quiet: see progress_test.py.
set -euo pipefail
src=$1; work=$2/progress
rm -rf "$work"; mkdir -p "$work"
exec /usr/bin/python3 "$src/tests/integration/progress_test.py" "$NEWSFLOW_BIN" "$src" "$work"

#!/usr/bin/env bash
# `newsflow produce` stamps each record with the time it is sent, so a topic's time retention
# does not delete a backfill of old pages before the daemon reads them; with --event-timestamps
# it stamps each with its event time (the sample pages are years old).
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/produce_timestamps
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -5 "$work"/*.log >&2 || true; exit 1; }
source "$src/tests/integration/lib.sh"
command -v kcat > /dev/null || fail "kcat is not installed (deploy/install-deps.sh installs it)"
start_dev_broker --brokers 1 --partitions 2
export NEWSFLOW_KAFKA__BROKERS=$broker

# The oldest and the newest record timestamp of a topic, in Unix seconds.
span() {
  kcat -b "$broker" -C -t "$1" -e -q -f '%T\n' 2>/dev/null |
    awk 'NR == 1 {lo = $1; hi = $1} {if ($1 < lo) lo = $1; if ($1 > hi) hi = $1} END {print int(lo / 1000), int(hi / 1000), NR}'
}
before=$(date +%s)
sent=$("$bin" produce --input "$src/samples/pages.jsonl.gz" --quiet)
read -r sent_lo sent_hi n <<< "$(span newsflow.pages)"
[ "$n" -eq "$sent" ] || fail "read $n records of $sent"
[ "$sent_lo" -ge $((before - 5)) ] || fail "a record is stamped $sent_lo, before it was sent ($before)"

NEWSFLOW_TOPICS__PAGES=backfill.pages \
  "$bin" produce --input "$src/samples/pages.jsonl.gz" --event-timestamps --quiet > /dev/null
read -r lo hi n <<< "$(span backfill.pages)"
[ "$n" -eq "$sent" ] || fail "read $n backfill records of $sent"
[ "$hi" -lt $((before - 86400)) ] || fail "--event-timestamps stamped a record $hi (sent at $before)"
echo "records=$sent stamped $sent_lo..$sent_hi by default, $lo..$hi with --event-timestamps (sent at $before)"
echo "1 passed, 0 failed"

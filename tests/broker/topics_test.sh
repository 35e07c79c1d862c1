#!/usr/bin/env bash
# Topics as a user meets them on a real Apache Kafka with auto-creation off: `newsflow
# create-topics --check` finds them missing, `create-topics` creates them (the changelog and the
# stories compacted, the extracted topic a partition per input partition, the lease one), a
# second run finds them as they should be; a changelog that deletes by retention is named by
# --check and refused by `newsflow run` at start with a clear error, as is a missing stories
# topic.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; build=$2; work=$2/broker_topics
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; tail -n 20 "$work"/*.txt "$work"/*.log >&2 || true; exit 1; }
source "$src/tests/broker/lib.sh"
export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$(free_port)

status=0; "$bin" create-topics --check > "$work/check0.txt" || status=$?
[ "$status" -eq 1 ] || fail "--check of missing topics exited $status, not 1"
[ "$(grep -c ' missing ' "$work/check0.txt")" -eq 9 ] || fail "--check did not find 9 topics missing"

"$bin" create-topics --partitions 3 > "$work/create.txt" || fail "create-topics failed"
cat "$work/create.txt"
grep -q "9 topics, 9 created, 0 with problems" "$work/create.txt" || fail "not every topic created"
line() { grep "^$(topic "$1") " "$work/create.txt"; }
line state | grep -q "created .* 3 partitions  cleanup.policy=compact  ok" || fail "state: $(line state)"
line stories | grep -q "cleanup.policy=compact  ok" || fail "stories: $(line stories)"
line pages | grep -q "cleanup.policy=delete  ok" || fail "pages: $(line pages)"
line extracted | grep -q " 6 partitions" || fail "extracted: $(line extracted)"
line dedup-lease | grep -q " 1 partitions" || fail "lease: $(line dedup-lease)"

"$bin" create-topics --partitions 3 > "$work/again.txt" || fail "create-topics over existing topics failed"
grep -q "9 topics, 0 created, 0 with problems" "$work/again.txt" || fail "second run: $(tail -n 1 "$work/again.txt")"
"$bin" create-topics --check > "$work/check1.txt" || fail "--check of good topics failed"

# A changelog that deletes by retention: made as a dead-letter topic (delete), then named as the
# changelog.
bad=$(topic bad-state)
NEWSFLOW_TOPICS__DLQ=$bad "$bin" create-topics --partitions 1 > "$work/bad.txt" || fail "making $bad"
status=0; NEWSFLOW_TOPICS__STATE=$bad "$bin" create-topics --check > "$work/check2.txt" || status=$?
[ "$status" -eq 1 ] || fail "--check of a deleting changelog exited $status, not 1"
grep -q "^$bad .*cleanup.policy=delete  PROBLEM: not compacted" "$work/check2.txt" ||
  fail "--check did not name the changelog as not compacted"

t0=$(date +%s.%N)
status=0; NEWSFLOW_TOPICS__STATE=$bad timeout 60 "$bin" run > "$work/refused.log" 2>&1 || status=$?
took=$(since "$t0")
[ "$status" -eq 2 ] || fail "run on a deleting changelog exited $status, not 2"
grep '"config_error"' "$work/refused.log" | grep '"topics.state"' | grep -q "is not compacted (cleanup.policy=delete" ||
  fail "run did not say the changelog is not compacted: $(tail -n 3 "$work/refused.log")"
grep -q '"daemon_ready"' "$work/refused.log" && fail "the daemon got ready on a deleting changelog"

status=0; NEWSFLOW_TOPICS__STORIES=$(topic no-stories) timeout 60 "$bin" run > "$work/refused2.log" 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "run without its stories topic exited $status, not 2"
grep '"config_error"' "$work/refused2.log" | grep '"topics.stories"' | grep -q "does not exist" ||
  fail "run did not say the stories topic is missing: $(tail -n 3 "$work/refused2.log")"
echo "refused a deleting changelog in ${took} s"
echo "1 passed, 0 failed"

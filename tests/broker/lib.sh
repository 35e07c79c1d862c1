# Shared by the broker tests (ctest -L broker), which run the real binary on the Apache Kafka of
# the broker fixture (start-broker.sh). Source it after setting `bin`, `src`, `work` and `build`
# (the tests' build directory) and defining `fail`. It sources tests/integration/lib.sh and sets:
#   broker   the fixture's bootstrap address
#   prefix   this test's own topic names, consumer group and transactional id (exported as
#            NEWSFLOW_* variables), so tests share the broker without meeting
# Use `topic NAME` for this test's topic NAME (pages, articles, ...).
source "$src/tests/integration/lib.sh"
broker_dir=$build/kafka-broker
[ -s "$broker_dir/bootstrap" ] ||
  fail "no broker in $broker_dir: run the broker tests with their fixture (ctest -L broker)"
broker=$(cat "$broker_dir/bootstrap")
prefix=$(basename "$work")-$(date +%s)
topic() { echo "$prefix.$1"; }
export NEWSFLOW_KAFKA__BROKERS=$broker
export NEWSFLOW_TOPICS__PAGES=$(topic pages) NEWSFLOW_TOPICS__FEEDS=$(topic feeds)
export NEWSFLOW_TOPICS__ARTICLES=$(topic articles) NEWSFLOW_TOPICS__STORIES=$(topic stories)
export NEWSFLOW_TOPICS__DLQ=$(topic dlq) NEWSFLOW_TOPICS__STATE=$(topic state)
export NEWSFLOW_TOPICS__EXTRACTED=$(topic extracted)
export NEWSFLOW_TOPICS__DEDUP_LEASE=$(topic dedup-lease)
export NEWSFLOW_TOPICS__FETCH_RETRIES=$(topic fetch-retries)
export NEWSFLOW_KAFKA__GROUP_ID=$prefix NEWSFLOW_KAFKA__TRANSACTIONAL_ID=$prefix
export NEWSFLOW_LOG__LEVEL=info NEWSFLOW_LOG__FORMAT=json

# Records of this test's topic NAME as committed (read_committed), one line each: `keys NAME`
# their keys, `values NAME` their values.
keys() {
  kcat -b "$broker" -C -t "$(topic "$1")" -e -q -X isolation.level=read_committed -f '%k\n' \
    2>/dev/null
}
values() {
  kcat -b "$broker" -C -t "$(topic "$1")" -e -q -X isolation.level=read_committed -f '%s\n' \
    2>/dev/null
}
distinct() { keys "$1" | sort -u | wc -l; }
records() { keys "$1" | wc -l; }

# The sum of the samples of metric $1 whose labels hold the text $2 (e.g. topic="x"), on the
# daemon's /metrics at $port.
metric() {
  curl -s "http://127.0.0.1:$port/metrics" 2>/dev/null |
    awk -v m="$1" -v l="${2:-}" '($1 == m || index($1, m "{") == 1) && index($1, l) {s += $NF}
                                 END {print s + 0}'
}

# Seconds since the Unix time $1 (with decimals).
since() { python3 -c "import time; print(f'{time.time() - $1:.1f}')"; }

# Waits up to $1 seconds for `newsflow run` (pid $2, log $3) to log daemon_ready.
wait_ready() {
  for _ in $(seq $(($1 * 20))); do
    grep -q '"daemon_ready"' "$3" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || fail "the daemon exited before it was ready: $(tail -n 3 "$3")"
    sleep 0.05
  done
  fail "the daemon was not ready within $1 s"
}

# The stream of $1 (replay lines) with every input kind (mixed_stream.py: its pages, the sample
# feed's full-text items, text items copying every fifth article) in $work/stream.jsonl and its
# uninterrupted replay in $work/replay.jsonl; sets `expected` (the replay's articles) and checks
# that replay publishes each article id once, so a second record of an id in Kafka is a double.
reference_stream() {
  "$bin" replay --input "$1" --output "$work/pages.jsonl" --dlq "$work/pages.dlq.jsonl" --quiet
  python3 "$src/tests/integration/mixed_stream.py" "$1" "$src/samples/feeds.jsonl.gz" \
    "$work/pages.jsonl" "$work/stream.jsonl"
  "$bin" replay --input "$work/stream.jsonl" --output "$work/replay.jsonl" \
    --dlq "$work/replay.dlq.jsonl" --quiet
  expected=$(wc -l < "$work/replay.jsonl")
  local ids
  ids=$(python3 -c 'import json, sys; print(len({json.loads(l)["id"] for l in open(sys.argv[1])}))' \
    "$work/replay.jsonl")
  [ "$ids" -eq "$expected" ] || fail "replay published $expected articles under $ids ids"
}

# Verdicts of the articles topic against the replay (the last record of an id wins).
compare_with_replay() {
  values articles > "$work/kafka.jsonl"
  python3 "$src/tests/integration/compare_runs.py" "$work/replay.jsonl" "$work/kafka.jsonl" \
    --min-dup-f1 1.0 --min-bcubed 0.99 --min-same-verdict 1.0 ||
    fail "the verdicts differ from an uninterrupted replay"
}

# A restart with nothing left to do consumes nothing: every input offset was committed. Starts
# `newsflow run`, waits until it is ready and for 3 s more, then stops it.
check_nothing_left() {
  "$bin" run > "$work/idle.log" 2>&1 &
  local pid=$!
  pids+=($pid)
  wait_ready 30 $pid "$work/idle.log"
  sleep 3
  local consumed
  consumed=$(($(metric newsflow_messages_consumed_total "topic=\"$(topic pages)\"") +
    $(metric newsflow_messages_consumed_total "topic=\"$(topic feeds)\"")))
  kill -TERM $pid
  wait $pid || fail "the idle daemon did not exit cleanly"
  [ "$consumed" -eq 0 ] || fail "a restart with every input done consumed $consumed inputs again"
}

# Sets configurations (KEY=VALUE ...) of this test's topic NAME through the Admin API
# (TopicConfig.java, run by the JRE from source; the kafka-tools jar with kafka-configs.sh is not
# fetched) and prints them as the broker now has them: `topic_config NAME KEY=VALUE...`.
topic_config() {
  local name=$1
  shift
  java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$("$src/tests/broker/fetch-kafka.sh")/*" \
    "$src/tests/broker/TopicConfig.java" "$broker" "$(topic "$name")" "$@" ||
    fail "the broker did not take $* for $(topic "$name")"
}

# What the broker holds of this test's topic NAME, transaction data aborted or not and
# tombstones included: "RECORDS TOMBSTONES KEYS" (KEYS: distinct keys).
stored() {
  kcat -b "$broker" -C -t "$(topic "$1")" -e -q -X isolation.level=read_uncommitted \
    -f '%S %k\n' 2>/dev/null |
    awk '{n++; if ($1 == -1) t++; k[$2] = 1} END {print n + 0, t + 0, length(k)}'
}

# The broker stopped (SIGTERM, its data kept) and, with `broker_up`, started again on the same
# data and port. A test that stops it has `broker_up` run on exit too, so the tests after it
# find their broker.
broker_down() {
  "$src/tests/broker/stop-broker.sh" --keep-data "$broker_dir" > /dev/null
  trap 'broker_up; cleanup' EXIT
}
broker_up() {
  [ -f "$broker_dir/pid" ] || "$src/tests/broker/start-broker.sh" --again "$broker_dir"
}

# The value of KEY in the JSON log line LINE (a string value).
value_of() { grep -o "\"$2\":\"[^\"]*\"" <<< "$1" | head -n 1 | cut -d'"' -f4; }

# The changelog compacted by the broker's log cleaner, for a test that made its segments roll at
# once (`topic_config state segment.ms=100 min.cleanable.dirty.ratio=0 ...`); the changelog has
# `state_partitions` partitions (default 2). The last segment of each partition is active and
# never cleaned: one more record (`roll`: a tombstone of a key of no article, which a restore
# passes over) rolls it. What the cleaner leaves: one record a key (the roll key's in each
# partition, and up to one roll record more a partition in the active segments). `cleaned`
# waits until it has cleaned that far and, with `tombstones`, until only the roll records are
# tombstones; it prints what the changelog holds then.
roll() {
  for p in $(seq 0 $((${state_partitions:-2} - 1))); do
    printf 'compaction-test-roll:\n' |
      kcat -b "$broker" -P -t "$(topic state)" -p $p -Z -K: 2>/dev/null || fail "kcat could not write"
  done
}
cleaned() {
  local t0 n t k parts=${state_partitions:-2}
  t0=$(date +%s.%N)
  sleep 0.2; roll
  for _ in $(seq 120); do
    read -r n t k <<< "$(stored state)"
    if [ "$n" -le $((k + 2 * parts - 1)) ]; then
      [ "${1:-}" != tombstones ] || [ "$t" -le $((2 * parts)) ] && break
      # A cleaning sets the deletion time of the tombstones it keeps; a later one removes them,
      # once something is dirty again.
      roll
    fi
    sleep 0.5
  done
  echo "$n records ($t tombstones, $k keys) after $(since "$t0") s"
  [ "$n" -le $((k + 2 * parts - 1)) ] ||
    fail "the log cleaner did not compact the changelog: $n records of $k keys"
  [ "${1:-}" != tombstones ] || [ "$t" -le $((2 * parts)) ] || fail "the cleaner kept $t tombstones"
}

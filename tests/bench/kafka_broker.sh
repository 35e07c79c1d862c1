#!/usr/bin/env bash
# The daemon through a real Apache Kafka (the broker tests' pinned 4.x, one KRaft node started
# here by tests/broker/start-broker.sh on the same machine), on the dev stream. Prints:
#   replay:   `newsflow replay --jobs 1` and `--jobs 2` of the stream, pages/s (the reference).
#   backlog:  the stream produced to the pages topic (PARTITIONS partitions, `create-topics`),
#             then one `newsflow run` (`role: all`) starts; pages/s from its first input consumed
#             to its last article (or dead letter) acknowledged, and from its start (the group
#             join and the changelog restore included; a phase ends once every input has its
#             output, or nothing more came for 10 s past 99% of them), the cores the daemon used meanwhile and the broker's
#             JVM beside it. Once with kafka.delivery at_least_once, once exactly_once.
#   restart:  one `newsflow run` with static membership (kafka.group_instance_id, the default)
#             SIGKILLed RESTARTS times while it judges the stream, each time a second after it
#             is ready, and restarted at once: seconds from the restart to ready (partitions
#             assigned, `daemon_ready`) and to its first article acknowledged, against the
#             consumer's session.timeout.ms (6 s). Then once without static membership
#             (group_instance_id none) for comparison: its partitions wait out the session.
# Usage: tests/bench/kafka_broker.sh [STREAM] [BUILD_DIR] [PARTITIONS] [RESTARTS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
stream=${1:-$src/../shared/data/dedup/dev/stream.jsonl.gz}
bin=$(cd "${2:-$src/build}" && pwd)/newsflow
partitions=${3:-8}
restarts=${4:-3}
build=$(mktemp -d)  # the broker's directory and the phases' work directories
fail() { echo "FAIL $*" >&2; tail -n 5 "$work"/*.log >&2 || true; exit 1; }
"$src/tests/broker/start-broker.sh" "$build/kafka-broker"
broker_pid=$(cat "$build/kafka-broker/pid")
trap '"$src/tests/broker/stop-broker.sh" "$build/kafka-broker" > /dev/null; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$build"' EXIT
now() { date +%s.%N; }
rate_of() { python3 -c "print(f'{$1 / ($3 - $2):.0f}')"; }

# phase NAME: a work directory and topics of their own (lib.sh names them after the directory),
# created with PARTITIONS partitions.
phase() {
  work=$build/$1
  mkdir -p "$work"
  # lib.sh's cleanup (integration/lib.sh) kills what a phase left, then the broker goes.
  source "$src/tests/broker/lib.sh"
  trap 'cleanup; "$src/tests/broker/stop-broker.sh" "$build/kafka-broker" > /dev/null; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$build"' EXIT
  export NEWSFLOW_LOG__LEVEL=info
  "$bin" create-topics --partitions "$partitions" > "$work/topics.txt" ||
    fail "create-topics: $(cat "$work/topics.txt")"
}

# The CPU seconds (utime + stime) of process $1.
cpu_of() {
  python3 -c "import os, sys; f = open(f'/proc/{sys.argv[1]}/stat').read().rsplit(')', 1)[1].split()
print((int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK'))" "$1"
}

# until_done PID N: polls the daemon (pid PID, metrics on $port) every 20 ms until its first
# input is consumed, then until N articles and dead letters are acknowledged; sets t_first, t_last, and the CPU seconds of the daemon and of the broker at
# both.
until_done() {
  local out
  out=$(python3 - "$1" "$broker_pid" "$port" "$2" "$(topic articles)" "$(topic dlq)" <<'EOF'
import os, sys, time, urllib.request
pid, broker, port, want, articles, dlq = sys.argv[1:]
tick = os.sysconf("SC_CLK_TCK")
def cpu(p):
    f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
def scrape():
    try:
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()
    except Exception:
        return []
    return [l.split() for l in body.decode().splitlines() if l and l[0] != "#"]
def total(samples, prefix):
    return sum(float(s[-1]) for s in samples if s[0].startswith(prefix))
acked = [f'newsflow_messages_produced_total{{topic="{t}"}}' for t in (articles, dlq)]
first = None
last = (0, None)  # the count acknowledged and when it last grew
deadline = time.time() + float(os.environ.get("BENCH_DEADLINE", "300"))
while time.time() < deadline:
    s = scrape()
    if first is None and total(s, "newsflow_messages_consumed_total") > 0:
        first = (time.time(), cpu(pid), cpu(broker))
    done = sum(total(s, a) for a in acked)
    if first is not None and done > last[0]:
        last = (done, (time.time(), cpu(pid), cpu(broker)))
    if first is not None and done >= float(want):
        print(*first, *last[1], int(done))
        sys.exit(0)
    # Fewer than N at all (an input the broker refused to take): done once nothing more came
    # for 10 s.
    if last[1] and done >= 0.99 * float(want) and time.time() - last[1][0] > 10:
        print(*first, *last[1], int(done))
        sys.exit(0)
    time.sleep(0.02)
print("timeout", sum(total(scrape(), a) for a in acked))
sys.exit(1)
EOF
) || fail "only ${out#timeout } of $2 articles and dead letters acknowledged"
  read -r t_first cpu_first broker_first t_last cpu_last broker_last acked <<< "$out"
}

# Replay on one and two cores: the reference.
t0=$(now)
"$bin" replay --jobs 1 --input "$stream" --output "$build/replay.jsonl" --quiet > /dev/null
t1=$(now)
n=$(wc -l < "$build/replay.jsonl")
replay1=$(rate_of "$n" "$t0" "$t1")
t0=$(now)
"$bin" replay --jobs 2 --input "$stream" --output "$build/replay2.jsonl" --quiet > /dev/null
t1=$(now)
replay2=$(rate_of "$n" "$t0" "$t1")
echo "replay: $n articles; --jobs 1 $replay1 pages/s, --jobs 2 $replay2 pages/s"

# Backlog, in both delivery modes.
for delivery in at_least_once exactly_once; do
  phase "backlog-${delivery//_/-}"
  export NEWSFLOW_KAFKA__DELIVERY=$delivery
  # The broker's message.max.bytes (1 MiB) refuses the dev stream's 3 pages over it: produce
  # says so and exits 1, and prints how many it delivered.
  pages=$("$bin" produce --input "$stream" --quiet 2> "$work/produce.txt") || true
  port=$(free_port); export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
  t_start=$(now)
  "$bin" run > "$work/run.log" 2>&1 &
  pid=$!; pids+=($pid)
  until_done "$pid" "$pages"
  kill -TERM "$pid"; wait "$pid" || fail "the daemon did not exit cleanly"
  pids=()
  # The articles as committed (read_committed): each once.
  distinct_keys=$(distinct articles); all=$(records articles)
  echo "backlog $delivery ($pages pages, $partitions partitions, $acked articles and dead" \
    "letters acknowledged): $(rate_of "$acked" "$t_first" "$t_last") pages/s from the first" \
    "input consumed to the last article acknowledged, $(rate_of "$acked" "$t_start" "$t_last")" \
    "pages/s from the start;" \
    "daemon $(python3 -c "print(f'{($cpu_last - $cpu_first) / ($t_last - $t_first):.2f}')") cores," \
    "broker $(python3 -c "print(f'{($broker_last - $broker_first) / ($t_last - $t_first):.2f}')") cores;" \
    "$distinct_keys distinct article keys in $all records, $(records dlq) dead letters"
done
unset NEWSFLOW_KAFKA__DELIVERY

# restart_round LOG: starts `newsflow run` (log LOG), waits until it is ready; sets pid, ready
# (seconds from the start), first (to its first article acknowledged, "-" if none in 30 s).
restart_round() {
  local t0 log=$1
  t0=$(now)
  "$bin" run > "$log" 2>&1 &
  pid=$!; pids+=($pid)
  wait_ready 60 $pid "$log"
  ready=$(since "$t0")
  first=-
  for _ in $(seq 600); do
    if [ "$(metric newsflow_messages_produced_total "topic=\"$(topic articles)\"")" -gt 0 ]; then
      first=$(since "$t0"); break
    fi
    sleep 0.05
  done
}

for membership in static dynamic; do
  phase "restart-$membership"
  if [ "$membership" = static ]; then
    export NEWSFLOW_KAFKA__GROUP_INSTANCE_ID=bench-host rounds=$restarts
  else
    export NEWSFLOW_KAFKA__GROUP_INSTANCE_ID=none rounds=1
  fi
  # Four times over (repeats are judged again and published): work left for every restart.
  "$bin" produce --input "$stream" --repeat 4 --quiet > /dev/null 2>&1 || true
  port=$(free_port); export NEWSFLOW_HTTP__LISTEN=127.0.0.1:$port
  restart_round "$work/run0.log"
  times=()
  for round in $(seq "$rounds"); do
    sleep 1
    kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
    restart_round "$work/run$round.log"
    times+=("ready ${ready} s, first article ${first} s")
  done
  kill -TERM "$pid"; wait "$pid" || true
  pids=()
  echo "restart after SIGKILL, $membership membership: $(IFS=';'; echo "${times[*]}")"
done
unset NEWSFLOW_KAFKA__GROUP_INSTANCE_ID

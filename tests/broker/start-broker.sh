#!/usr/bin/env bash
# Starts a single-node Apache Kafka 4.x in KRaft mode (broker and controller in one JVM) for the
# broker tests, in work directory DIR, on free loopback ports of its own, and returns once it
# answers metadata requests. Writes DIR/bootstrap (host:port), DIR/pid and the broker's log to
# DIR/server.log. A broker left running in DIR by an earlier run is stopped first.
#   start-broker.sh DIR
#   start-broker.sh --again DIR   the broker of DIR stopped with `stop-broker.sh --keep-data DIR`
#                                 started again on its data and ports (a broker restart)
# The jars come from fetch-kafka.sh (fetched once into a cache). Stop it with stop-broker.sh DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
again=""
[ "${1:-}" = "--again" ] && { again=1; shift; }
dir=${1:?usage: start-broker.sh [--again] DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
fail() { echo "start-broker: $*" >&2; [ -f "$dir/server.log" ] && tail -n 20 "$dir/server.log" >&2; exit 1; }

[ -z "$again" ] && "$here/stop-broker.sh" "$dir"
command -v java >/dev/null || fail "java not found (deploy/install-deps.sh installs default-jre-headless)"
command -v kcat >/dev/null || fail "kcat not found (deploy/install-deps.sh installs it)"
libs=$("$here/fetch-kafka.sh")

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cat > "$dir/log4j2.properties" <<LOG
rootLogger.level=INFO
rootLogger.appenderRef.file.ref=file
appender.file.type=File
appender.file.name=file
appender.file.fileName=$dir/server.log
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
# The state changes of every partition and the request log are noise here.
logger.state.name=state.change.logger
logger.state.level=WARN
logger.request.name=kafka.request.logger
logger.request.level=WARN
LOG

# Starts the broker of $dir/server.properties (listening on $port) and waits until it answers:
# 0 then, 1 when it exited (a port taken meanwhile) or did not answer within 60 s (then stopped).
launch() {
  # Its own session, output to files: ctest does not wait on it, and the cleanup stops it by pid.
  setsid java -Xms128m -Xmx512m -XX:+UseSerialGC -cp "$libs/*" \
    -Dlog4j2.configurationFile="$dir/log4j2.properties" -Dkafka.logs.dir="$dir" \
    kafka.Kafka "$dir/server.properties" < /dev/null >> "$dir/stdout.log" 2>&1 &
  pid=$!
  echo "$pid" > "$dir/pid"
  for _ in $(seq 600); do
    kill -0 "$pid" 2>/dev/null || return 1
    if kcat -b "127.0.0.1:$port" -L -m 2 2>/dev/null | grep -q "broker 1 at 127.0.0.1:$port"; then
      echo "127.0.0.1:$port" > "$dir/bootstrap"
      ready=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
      version=$(basename "$(dirname "$libs")")
      echo "start-broker: $version (KRaft, one node, pid $pid) at 127.0.0.1:$port, ready in $ready s"
      return 0
    fi
    sleep 0.1
  done
  "$here/stop-broker.sh" "$dir"
  fail "the broker did not answer within 60 s"
}

t0=$(date +%s.%N)
if [ -n "$again" ]; then
  [ -d "$dir/data" ] && [ ! -f "$dir/pid" ] ||
    fail "no stopped broker in $dir (stop it with stop-broker.sh --keep-data)"
  port=$(sed -n 's|^listeners=PLAINTEXT://127.0.0.1:\([0-9]*\),.*|\1|p' "$dir/server.properties")
  # Something answering there already would pass for the broker started.
  ! kcat -b "127.0.0.1:$port" -L -m 2 > /dev/null 2>&1 || fail "a broker still answers at 127.0.0.1:$port"
  launch || fail "the broker exited: $(tail -n 3 "$dir/stdout.log")"
  exit 0
fi

# A port picked free a moment ago may be taken before the JVM binds it: a few attempts.
for attempt in 1 2 3; do
  port=$(free_port); controller=$(free_port)
  [ "$port" != "$controller" ] || continue
  rm -rf "$dir/data" "$dir/server.log" "$dir/stdout.log" "$dir/bootstrap"
  cat > "$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
# One node: every internal topic with one replica, and few partitions (created on first use).
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# A group's first member gets its partitions at once; topics exist only when created, as on
# managed clusters.
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
num.partitions=1
num.network.threads=2
num.io.threads=2
# The tests produce pages of 2023 with their event time as the record timestamp, as "newsflow
# produce" does: under the default 7-day retention the broker's retention check (every 5
# minutes) deletes a rolled segment of them at once, whichever test is running then. (No
# backquotes in this here-document: they would run.)
log.retention.ms=-1
# The log cleaner looks for work every second, not every 15 s: a test that compacts a topic waits
# seconds for it.
log.cleaner.backoff.ms=1000
PROPS
  # A cluster id as StorageTool random-uuid makes one, without a JVM start for it; none starting
  # with "-", which the tool's argument parser takes for an option (1 start in 64 failed so).
  cluster_id=$(python3 -c 'import base64, uuid
while (i := base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")).startswith("-"): pass
print(i)')
  java -Xmx256m -XX:+UseSerialGC -cp "$libs/*" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    kafka.tools.StorageTool format --cluster-id "$cluster_id" --config "$dir/server.properties" \
    > "$dir/format.log" 2>&1 || fail "format failed: $(tail -n 5 "$dir/format.log")"
  launch && exit 0
  echo "start-broker: attempt $attempt: the broker exited: $(tail -n 3 "$dir/stdout.log")" >&2
done
fail "the broker did not start"

#!/usr/bin/env bash
# Stops the broker start-broker.sh started in DIR (SIGTERM, then SIGKILL after 20 s) and removes
# its data; its logs stay. Nothing to do when none runs there.
#   stop-broker.sh DIR
#   stop-broker.sh --keep-data DIR   stops it and keeps its data and ports, for
#                                    `start-broker.sh --again DIR` (a broker restart)
set -euo pipefail
keep=""
[ "${1:-}" = "--keep-data" ] && { keep=1; shift; }
dir=${1:?usage: stop-broker.sh [--keep-data] DIR}
[ -f "$dir/pid" ] || exit 0
dir=$(cd "$dir" && pwd -P)
pid=$(cat "$dir/pid")
# Only the broker of this directory: a pid reused by another process is left alone.
if grep -qa "kafka.Kafka" "/proc/$pid/cmdline" 2>/dev/null &&
   grep -qa "$dir" "/proc/$pid/cmdline" 2>/dev/null; then
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  echo "stop-broker: stopped the broker (pid $pid)"
fi
rm -f "$dir/pid" "$dir/bootstrap"
[ -n "$keep" ] || rm -rf "$dir/data"

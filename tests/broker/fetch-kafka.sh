#!/usr/bin/env bash
# Fetches the Apache Kafka broker the broker tests run: the jars of org.apache.kafka:kafka_2.13
# at the version pinned in pom.xml with their runtime dependencies, copied by Maven from Maven
# Central into a cache outside the source tree, once (later runs reuse it). Prints the directory
# that holds the jars.
#   fetch-kafka.sh            fetch if absent, print the libs directory
# NEWSFLOW_KAFKA_CACHE overrides the cache root (default ${XDG_CACHE_HOME:-~/.cache}/newsflow).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pom=$here/pom.xml
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
[ -n "$version" ] || { echo "fetch-kafka: no kafka.version in $pom" >&2; exit 1; }
cache=${NEWSFLOW_KAFKA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/newsflow}
dir=$cache/kafka-$version
libs=$dir/libs
# The pom's digest: a change to its dependencies fetches again.
digest=$(sha256sum "$pom" | cut -c1-16)
if [ -f "$dir/complete" ] && [ "$(cat "$dir/complete")" = "$digest" ]; then
  echo "$libs"
  exit 0
fi
command -v mvn >/dev/null || { echo "fetch-kafka: mvn not found (deploy/install-deps.sh installs maven)" >&2; exit 1; }
mkdir -p "$dir"
# One fetch at a time (two test runs starting together); the second finds the first's jars.
exec 9> "$dir/.lock"
flock 9
if [ -f "$dir/complete" ] && [ "$(cat "$dir/complete")" = "$digest" ]; then
  echo "$libs"
  exit 0
fi
echo "fetch-kafka: fetching org.apache.kafka:kafka_2.13:$version and its runtime dependencies into $libs" >&2
rm -rf "$libs" "$libs.tmp"
# Maven writes target/ beside the pom it is given: a copy of the pom in the cache keeps the
# source tree clean.
cp "$pom" "$dir/pom.xml"
mvn -B -q -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
  -DoutputDirectory="$libs.tmp" >&2
ls "$libs.tmp"/kafka_2.13-"$version".jar >/dev/null
mv "$libs.tmp" "$libs"
rm -rf "$dir/target"
echo "$digest" > "$dir/complete"
echo "$libs"

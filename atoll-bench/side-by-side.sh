#!/usr/bin/env bash
# Atoll and Pekko Cluster Sharding side by side, in one run: per pair the loopback floor, then
# Atoll's load generator, then Pekko's (fresh JVMs, A B A B ...), then the side-by-side table of
# docs/benchmarks.md is rewritten between its markers. Run from anywhere; 11–16 minutes with
# the defaults on a 2-core machine.
#
#   atoll-bench/side-by-side.sh [--no-build] [--pairs 3] [--seconds 3] [--warmup 2] [--idle 100000]
#
# Needs JDK 25 (JAVA_HOME, or /usr/lib/jvm/temurin-25-jdk-amd64) and, unless --no-build, Maven.
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
args=()
for a in "$@"; do
  if [[ "$a" == "--no-build" ]]; then build=0; else args+=("$a"); fi
done
java="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
if (( build )); then
  "${MVN:-mvn}" -B -q -pl atoll-bench -am package -DskipTests
fi
exec "$java" --sun-misc-unsafe-memory-access=allow --enable-native-access=ALL-UNNAMED \
  -cp atoll-bench/target/benchmarks.jar io.atoll.bench.sidebyside.SideBySide --doc docs/benchmarks.md "${args[@]}"

#!/usr/bin/env bash
# Leader change time per store (docs/benchmarks.md, "Leader change"): runs `atoll demo --store S`
# ROUNDS times per store (default 3) — two managers on the store, three pods and a client under
# load (400 deposits/s), kill -9 of the leading manager 3 s into the load — and prints, per run,
# the time from the kill to the standby leading, and to the new leader's first rebalance (which
# gives shards to a pod started once the standby leads; it includes that pod's JVM start, printed
# apart; the demo waits up to 60 s past its duration for that rebalance). The
# demo starts redis-server / etcd itself. Build the jar first:
#   mvn -B -q -pl atoll-server -am package -DskipTests
# JAR picks another build of atoll.jar (e.g. a copy of an older commit's, to compare).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
STORES=${STORES:-"file redis etcd"}
JAVA=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
JAR=${JAR:-atoll-server/target/atoll.jar}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
uptime
for store in $STORES; do
  for round in $(seq 1 "$ROUNDS"); do
    "$JAVA" -Xmx256m -jar "$JAR" demo --store "$store" --duration 30s --pods 3 \
      --shards 60 --accounts 200 --rate 400 --concurrency 2000 --lease 3s --dir "$D/$store-$round" \
      > "$D/$store-$round.out" 2>&1 || echo "$store run $round: FAILED (see the demo's output)"
    led=$(sed -n 's/.*the standby leads on .*, \([0-9]*\) ms after the kill.*/\1/p' "$D/$store-$round.out")
    first=$(sed -n 's/^leader change .*: \([0-9]*\) ms$/\1/p' "$D/$store-$round.out")
    pod=$(sed -n 's/.*first rebalance gave .* took \([0-9]*\) ms from its start to listening.*/\1/p' "$D/$store-$round.out")
    result=$(grep -c '^result: OK' "$D/$store-$round.out" || true)
    echo "$store run $round: standby leads ${led:-?} ms, first rebalance ${first:-?} ms after the kill" \
      "(the added pod's start to listening ${pod:-?} ms), audit ok=$result"
  done
done
uptime

#!/usr/bin/env bash
# How soon a standby hears that a killed leader is gone, per backend (docs/benchmarks.md, "Leader change").
# Starts a redis-server (AOF, fsync always) and a single-member etcd on free loopback ports with
# temporary data, then runs LeaderWatchBench (the store's leader watch and a poll every tenth of the lease,
# on the same kill -9 of a lease holder) against the file store, etcd and Redis, ROUNDS times
# each (default 5; TTL, the lease, default 3s). Build the jar first: mvn -B -q -pl atoll-bench -am package -DskipTests
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-5}
JAVA=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
D=$(mktemp -d)
read -r RP EP PP < <(python3 -c 'import socket
ss=[socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
mkdir -p "$D/redis" "$D/etcd"
redis-server --port "$RP" --bind 127.0.0.1 --dir "$D/redis" --appendonly yes --appendfsync always --save '' \
  --daemonize no > "$D/redis.log" 2>&1 & R=$!
etcd --name bench --data-dir "$D/etcd/data" \
  --listen-client-urls "http://127.0.0.1:$EP" --advertise-client-urls "http://127.0.0.1:$EP" \
  --listen-peer-urls "http://127.0.0.1:$PP" --initial-advertise-peer-urls "http://127.0.0.1:$PP" \
  --initial-cluster "bench=http://127.0.0.1:$PP" > "$D/etcd.log" 2>&1 & E=$!
trap 'kill $R $E 2>/dev/null; wait $R $E 2>/dev/null || true; rm -rf "$D"' EXIT
for _ in $(seq 1 150); do
  if redis-cli -p "$RP" ping >/dev/null 2>&1 && curl -s "http://127.0.0.1:$EP/health" | grep -q true; then
    break
  fi
  sleep 0.2
done
uptime
for store in "file:$D/file" "etcd://127.0.0.1:$EP/bench" "redis://127.0.0.1:$RP?prefix=bench"; do
  "$JAVA" -Xmx256m -cp atoll-bench/target/benchmarks.jar io.atoll.bench.store.LeaderWatchBench \
    --rounds "$ROUNDS" --ttl "${TTL:-3s}" --store "$store" 2>>"$D/bench.err"
done
uptime

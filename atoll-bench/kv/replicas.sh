#!/usr/bin/env bash
# Atoll KV with a replica beside Redis 7 with a replica, on this machine and in the same run: a
# primary owning all 16384 slots and one replica of it (CLUSTER REPLICATE), for each server; ops/s
# and p50/p99 latency of redis-benchmark -t set against the primary at -P 1 and -P 16, alternated ROUNDS times, the
# replica keeping up (its offset is printed after each round). Both asynchronous, as in Redis;
# ACKS=1 starts the Atoll primary with --min-replicas-to-ack 1 (each reply waits for the replica).
# Needs redis-server, redis-cli, redis-benchmark and the packaged atoll.jar
# (mvn -B -q -pl atoll-server -am package -DskipTests). Loopback only; everything it starts is
# stopped on exit.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
JAVA="${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}"
JAR="$here/atoll-server/target/atoll.jar"
N="${N:-200000}"          # requests per redis-benchmark run
ROUNDS="${ROUNDS:-3}"
ACKS="${ACKS:-0}"
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

start_atoll() { # port
  "$JAVA" -Xmx1g -XX:+UseParallelGC --sun-misc-unsafe-memory-access=allow -jar "$JAR" kv --port "$1" \
    --data-dir "$work/atoll-$1" --event-loops 2 --appendonly no --min-replicas-to-ack "${2:-0}" \
    > "$work/atoll-$1.log" 2>&1 &
  pids+=($!)
}
start_redis() { # port
  redis-server --port "$1" --cluster-enabled yes --cluster-config-file "$work/redis-$1.conf" --save "" \
    --appendonly no --dir "$work" --daemonize no > "$work/redis-$1.log" 2>&1 &
  pids+=($!)
}
wait_port() { for _ in $(seq 1 150); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.2; done; echo "port $1 did not answer" >&2; exit 1; }
pair() { # primary replica: the primary owns every slot, the replica follows it
  redis-cli -p "$1" cluster addslotsrange 0 16383 > /dev/null
  redis-cli -p "$2" cluster meet 127.0.0.1 "$1" > /dev/null
  local id; id="$(redis-cli -p "$1" cluster myid)"
  for _ in $(seq 1 100); do # until the replica knows the primary (a handshake first, in Redis)
    [ "$(redis-cli -p "$2" cluster replicate "$id")" = OK ] && break; sleep 0.2
  done
  for _ in $(seq 1 100); do redis-cli -p "$2" role | grep -q connected && return 0; sleep 0.2; done
  echo "replica $2 did not connect" >&2; exit 1
}
offsets() { # primary replica -> "primary-offset replica-offset"
  echo "$(redis-cli -p "$1" info replication | tr -d '\r' | sed -n 's/^master_repl_offset://p')" \
    "$(redis-cli -p "$2" info replication | tr -d '\r' | sed -n 's/^slave_repl_offset://p')"
}

start_atoll 7401 "$ACKS"; start_atoll 7402; start_redis 7411; start_redis 7412
for p in 7401 7402 7411 7412; do wait_port $p; done
pair 7401 7402
pair 7411 7412
bench() { # port pipeline -> "ops/s p50 p99" of SET (latencies in ms, as redis-benchmark measures them)
  redis-benchmark -h 127.0.0.1 -p "$1" -t set -n "$N" -c 50 -P "$2" -r 100000 --csv 2>/dev/null \
    | tr -d '"' | awk -F, '$1 == "SET" {print $2, $5, $7}'
}
for _ in 1 2 3; do bench 7401 16 > /dev/null; bench 7411 16 > /dev/null; done # the JIT's warm-up, both alike
echo "| round | pipeline | Atoll KV SET ops/s | p50 / p99 ms | Redis SET ops/s | p50 / p99 ms | ratio |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  for P in 1 16; do
    read -r a ap50 ap99 < <(bench 7401 $P); read -r r rp50 rp99 < <(bench 7411 $P)
    echo "| $round | -P $P | $a | $ap50 / $ap99 | $r | $rp50 / $rp99 | $(awk -v a="$a" -v r="$r" 'BEGIN{printf "%.2f", a/r}') |"
  done
done
sleep 1
echo "offsets after the runs (primary, replica): Atoll $(offsets 7401 7402), Redis $(offsets 7411 7412)"
echo "keys (primary, replica): Atoll $(redis-cli -p 7401 dbsize) $(redis-cli -p 7402 dbsize)," \
  "Redis $(redis-cli -p 7411 dbsize) $(redis-cli -p 7412 dbsize)"

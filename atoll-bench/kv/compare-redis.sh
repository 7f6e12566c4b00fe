#!/usr/bin/env bash
# Atoll KV beside a real Redis Cluster of the same size on this machine, in the same run:
# ops/s of redis-benchmark --cluster -t set,get at -P 1 and -P 16, and bytes per small key for
# 1 M keys (one node owning every slot; Redis' used_memory delta beside the Atoll JVM's heap delta
# after a full GC). Needs redis-server, redis-cli, redis-benchmark and the packaged atoll.jar
# (mvn -B -q -pl atoll-server -am package -DskipTests). Loopback only; everything it starts is
# stopped on exit.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
JAVA="${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}"
JCMD="$(dirname "$JAVA")/jcmd"
JAR="$here/atoll-server/target/atoll.jar"
N="${N:-200000}"          # requests per redis-benchmark run
KEYS="${KEYS:-1000000}"   # keys for the memory figure
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

start_atoll() { # port
  "$JAVA" -Xmx2g -XX:+UseParallelGC --sun-misc-unsafe-memory-access=allow -jar "$JAR" kv --port "$1" \
    --data-dir "$work/atoll-$1" --event-loops 2 > "$work/atoll-$1.log" 2>&1 &
  pids+=($!)
}
start_redis() { # port
  redis-server --port "$1" --cluster-enabled yes --cluster-config-file "$work/redis-$1.conf" --save "" \
    --appendonly no --dir "$work" --daemonize no > "$work/redis-$1.log" 2>&1 &
  pids+=($!)
}
wait_port() { for _ in $(seq 1 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.2; done; echo "port $1 did not answer" >&2; exit 1; }

for p in 7201 7202 7203; do start_atoll $p; done
for p in 7301 7302 7303; do start_redis $p; done
for p in 7201 7202 7203 7301 7302 7303; do wait_port $p; done
redis-cli --cluster create 127.0.0.1:7201 127.0.0.1:7202 127.0.0.1:7203 --cluster-yes > /dev/null
redis-cli --cluster create 127.0.0.1:7301 127.0.0.1:7302 127.0.0.1:7303 --cluster-yes > /dev/null
for p in 7201 7301; do
  for _ in $(seq 1 50); do redis-cli -p $p cluster info | grep -q cluster_state:ok && break; sleep 0.2; done
done

bench() { # port pipeline -> "set get"
  redis-benchmark --cluster -h 127.0.0.1 -p "$1" -t set,get -n "$N" -c 50 -P "$2" -q 2>/dev/null \
    | tr '\r' '\n' | awk '/^SET:/{s=$2} /^GET:/{g=$2} END{print s, g}'
}
# Warm-up (the JVM's JIT needs a few hundred thousand requests), the same for both.
for _ in 1 2 3; do bench 7201 16 > /dev/null; bench 7301 16 > /dev/null; done
bench 7201 1 > /dev/null; bench 7301 1 > /dev/null
echo "| pipeline | Atoll KV SET | Redis SET | Atoll KV GET | Redis GET |"
echo "|---|---|---|---|---|"
for P in 1 16; do
  read -r as ag < <(bench 7201 $P)
  read -r rs rg < <(bench 7301 $P)
  echo "| -P $P | $as | $rs | $ag | $rg |"
done

# Memory: one more node of each owning all slots, KEYS small keys (key:NNNNNNNNNN -> 'value').
start_atoll 7204; start_redis 7304; wait_port 7204; wait_port 7304
redis-cli -p 7204 cluster addslotsrange 0 16383 > /dev/null
redis-cli -p 7304 cluster addslotsrange 0 16383 > /dev/null
apid="${pids[6]}"
heap() { "$JCMD" "$apid" GC.run > /dev/null; "$JCMD" "$apid" GC.heap_info | awk '/PSYoungGen|ParOldGen/ {for(i=1;i<=NF;i++) if($i=="used") {v=$(i+1); sub("K,?","",v); s+=v}} END{print s*1024}'; }
redis_used() { redis-cli -p 7304 info memory | tr -d '\r' | awk -F: '$1=="used_memory"{print $2}'; }
a0=$(heap); r0=$(redis_used)
gen() { awk -v n="$KEYS" 'BEGIN{for(i=0;i<n;i++) printf "*3\r\n$3\r\nSET\r\n$14\r\nkey:%010d\r\n$5\r\nvalue\r\n", i}'; }
gen | redis-cli -p 7204 --pipe > /dev/null
gen | redis-cli -p 7304 --pipe > /dev/null
a1=$(heap); r1=$(redis_used)
echo
echo "| $KEYS keys (14-byte key, 5-byte value) | bytes per key |"
echo "|---|---|"
echo "| Atoll KV (JVM heap after full GC, delta) | $(( (a1 - a0) / KEYS )) |"
echo "| Redis (used_memory delta) | $(( (r1 - r0) / KEYS )) |"
echo "| Atoll KV keys: $(redis-cli -p 7204 dbsize), Redis keys: $(redis-cli -p 7304 dbsize) | |"

#!/usr/bin/env bash
# Atoll KV's append-only file beside Redis 7's on the same disk, in one run (issue 31's figures):
#  1. redis-benchmark -t set,get at -P 1 and -P 16 with appendfsync everysec, then always: one node
#     of each owning every slot, ROUNDS rounds alternating Atoll and Redis; prints every round.
#  2. KEYS keys loaded by redis-cli --pipe (appendfsync everysec): the files' size, then each node
#     restarted on its files: the load time it reports, and the wall time until it answers DBSIZE
#     with every key (for Atoll this includes the JVM's start).
#  3. The pause BGREWRITEAOF causes: a client's latency (redis-benchmark -t set -P 1, 50 clients)
#     while a rewrite of the KEYS keys runs, beside the same client without one: p99 and max.
# Needs redis-server, redis-cli, redis-benchmark and the packaged atoll.jar
# (mvn -B -q -pl atoll-server -am package -DskipTests). Loopback only; everything it starts is
# stopped on exit.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
JAVA="${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}"
JAR="$here/atoll-server/target/atoll.jar"
N="${N:-100000}"          # requests per redis-benchmark run
KEYS="${KEYS:-1000000}"   # keys for the size, load and rewrite figures
ROUNDS="${ROUNDS:-3}"
AP=7211; RP=7311
work="$(mktemp -d -p "${WORKDIR:-/tmp}")"
apid=""; rpid=""
stop() { for p in $apid $rpid; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; apid=""; rpid=""; }
cleanup() { stop; rm -rf "$work"; }
trap cleanup EXIT

start_atoll() { # policy
  "$JAVA" -Xmx3g -XX:+UseParallelGC --sun-misc-unsafe-memory-access=allow -jar "$JAR" kv --port $AP \
    --data-dir "$work/atoll" --appendonly yes --appendfsync "$1" --event-loops 2 >> "$work/atoll.log" 2>&1 &
  apid=$!
}
start_redis() { # policy
  redis-server --port $RP --cluster-enabled yes --cluster-config-file "$work/redis/nodes.conf" --save "" \
    --appendonly yes --appendfsync "$1" --dir "$work/redis" --daemonize no >> "$work/redis.log" 2>&1 &
  rpid=$!
}
wait_port() { for _ in $(seq 1 300); do redis-cli -p "$1" ping 2>/dev/null | grep -q PONG && return 0; sleep 0.1; done
  echo "port $1 did not answer" >&2; exit 1; }
fresh() { # policy: empty nodes of each, every slot owned
  stop; rm -rf "$work/atoll" "$work/redis"; mkdir -p "$work/atoll" "$work/redis"
  start_atoll "$1"; start_redis "$1"; wait_port $AP; wait_port $RP
  redis-cli -p $AP cluster addslotsrange 0 16383 > /dev/null
  redis-cli -p $RP cluster addslotsrange 0 16383 > /dev/null
}
bench() { # port pipeline -> "set get"
  redis-benchmark -h 127.0.0.1 -p "$1" -t set,get -n "$N" -c 50 -P "$2" -r 100000 -q 2>/dev/null \
    | tr '\r' '\n' | awk '/^SET:/{s=$2} /^GET:/{g=$2} END{print s, g}'
}

echo "machine: $(nproc) cores, $(uname -r), $(redis-server --version | awk '{print $3}'), java $("$JAVA" -version 2>&1 | head -1)"
for policy in everysec always; do
  fresh "$policy"
  bench $AP 16 > /dev/null; bench $RP 16 > /dev/null   # warm-up: the JVM's JIT, both alike
  echo
  echo "appendfsync $policy: | round | pipeline | Atoll SET | Redis SET | Atoll GET | Redis GET |"
  for r in $(seq 1 "$ROUNDS"); do
    for P in 1 16; do
      read -r as ag < <(bench $AP $P)
      read -r rs rg < <(bench $RP $P)
      echo "| $r | -P $P | $as | $rs | $ag | $rg |"
    done
  done
done

gen() { awk -v n="$KEYS" 'BEGIN{for(i=0;i<n;i++) printf "*3\r\n$3\r\nSET\r\n$14\r\nkey:%010d\r\n$5\r\nvalue\r\n", i}'; }
fresh everysec
gen | redis-cli -p $AP --pipe > /dev/null
gen | redis-cli -p $RP --pipe > /dev/null
sleep 2 # everysec: the last second synced
echo
echo "$KEYS keys (14-byte key, 5-byte value), appendfsync everysec:"
echo "  files: Atoll $(du -sb "$work/atoll/appendonlydir" | cut -f1) bytes, Redis $(du -sb "$work/redis/appendonlydir" | cut -f1) bytes"

loaded() { # port -> waits until DBSIZE is KEYS
  for _ in $(seq 1 1200); do [ "$(redis-cli -p "$1" dbsize 2>/dev/null)" = "$KEYS" ] && return 0; sleep 0.05; done
  echo "port $1 did not load $KEYS keys" >&2; exit 1; }
stop
: > "$work/atoll.log"; : > "$work/redis.log"
t0=$(date +%s%N); start_atoll everysec; loaded $AP; ta=$(( ($(date +%s%N) - t0) / 1000000 ))
t0=$(date +%s%N); start_redis everysec; loaded $RP; tr=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "  restart until DBSIZE = $KEYS: Atoll $ta ms (JVM start included), Redis $tr ms"
echo "  load as each reports it: Atoll: $(grep -o 'DB loaded from append only file.*' "$work/atoll.log" | head -1);" \
  "Redis: $(grep -o 'DB loaded from append only file.*' "$work/redis.log" | head -1)"

latency() { # port rewrite? -> "p99 max" of a SET client, with a BGREWRITEAOF 0.5 s in if asked
  local out="$work/lat-$1-$2"
  redis-benchmark -h 127.0.0.1 -p "$1" -t set -n 300000 -c 50 -P 1 -r 1000000 --precision 3 > "$out" 2>/dev/null &
  local b=$!
  if [ "$2" = yes ]; then sleep 0.5; redis-cli -p "$1" bgrewriteaof > /dev/null; fi
  wait $b
  tr '\r' '\n' < "$out" | awk '/avg +min +p50 +p95 +p99 +max/{getline; print $5, $6}'
  if [ "$2" = yes ]; then
    for _ in $(seq 1 600); do redis-cli -p "$1" info persistence | grep -q 'aof_rewrite_in_progress:0' && break; sleep 0.1; done
  fi
}
echo
echo "BGREWRITEAOF of $KEYS keys under a SET client (-P 1, 50 clients; ms):"
echo "| server | p99 without | max without | p99 during the rewrite | max during |"
echo "|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  read -r a99 amax < <(latency $AP no); read -r ar99 armax < <(latency $AP yes)
  read -r r99 rmax < <(latency $RP no); read -r rr99 rrmax < <(latency $RP yes)
  echo "| Atoll (round $r) | $a99 | $amax | $ar99 | $armax |"
  echo "| Redis (round $r) | $r99 | $rmax | $rr99 | $rrmax |"
done
echo "  rewrites as each logged them: Atoll: $(grep -o 'rewrite finished successfully in [0-9]* ms' "$work/atoll.log" | tr '\n' ';')"
echo "  Redis: $(grep -o 'Background AOF rewrite finished successfully' "$work/redis.log" | wc -l) finished"

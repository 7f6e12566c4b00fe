#!/usr/bin/env bash
# Failover time, Atoll KV managed replicas beside Redis 7 Cluster, on this machine and in the same
# run: from SIGKILL of a primary to the first SET acknowledged in one of its slots, asked through
# another node with redis-cli -c every 20 ms. Atoll: a shard manager with --replicas 1, --lease 3s,
# --lease-margin 500ms and four `atoll kv --manager` nodes (two primaries, two replicas; writes
# acknowledged once the replica holds them, the default). Redis: three primaries and three replicas
# (redis-cli --cluster create --cluster-replicas 1), cluster-node-timeout 3000. ROUNDS kills of
# each, alternated; each killed node is started again on its data and the run waits until every
# primary has a replica again. Needs redis-server, redis-cli and the packaged atoll.jar
# (mvn -B -q -pl atoll-server -am package -DskipTests). Loopback only; everything it starts is
# stopped on exit.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
JAVA="${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}"
JAR="$here/atoll-server/target/atoll.jar"
ROUNDS="${ROUNDS:-5}"
work="$(mktemp -d)"
declare -A pid
cleanup() { for p in "${pid[@]}"; do kill -9 "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

MANAGER=7590
ATOLL=(7501 7502 7503 7504)
REDIS=(7511 7512 7513 7514 7515 7516)
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
wait_port() { for _ in $(seq 1 300); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "port $1 did not answer" >&2; exit 1; }

start_manager() {
  "$JAVA" -Xmx256m -jar "$JAR" manager --port "$MANAGER" --data-dir "$work/manager" --shards 16384 \
    --new-space-shards 0 --replicas 1 --lease 3s --lease-margin 500ms --max-moves 16384 \
    --max-moves-fraction 1 --termination-timeout 4s > "$work/manager.log" 2>&1 &
  pid[manager]=$!
}
start_atoll() { # port
  "$JAVA" -Xmx256m -XX:+UseParallelGC --sun-misc-unsafe-memory-access=allow -jar "$JAR" kv --port "$1" \
    --manager "127.0.0.1:$MANAGER" --data-dir "$work/atoll-$1" --event-loops 1 >> "$work/atoll-$1.log" 2>&1 &
  pid[$1]=$!
}
start_redis() { # port
  redis-server --port "$1" --cluster-enabled yes --cluster-config-file "$work/redis-$1.conf" --save "" \
    --appendonly no --dir "$work" --cluster-node-timeout 3000 --daemonize no >> "$work/redis-$1.log" 2>&1 &
  pid[$1]=$!
}
# The port of the primary owning key $2, asked at port $1 (it answers, or redirects with MOVED).
owner() {
  local r; r="$(redis-cli -p "$1" set "$2" x 2>&1 || true)"
  if [ "$r" = OK ]; then echo "$1"; else echo "$r" | sed -n 's/.*MOVED [0-9]* [^:]*:\([0-9]*\).*/\1/p'; fi
}
# Every primary has a replica that is connected and synced: $1 a port, $2 how many replicas.
wait_pairs() {
  for _ in $(seq 1 600); do
    local n; n="$(redis-cli -p "$1" cluster nodes 2>/dev/null | awk '$3 ~ /slave/ && $3 !~ /fail/ {c++} END{print c+0}')"
    if [ "$n" = "$2" ]; then
      local ok=1
      for p in "${@:3}"; do
        if redis-cli -p "$p" role 2>/dev/null | head -1 | grep -q slave \
            && ! redis-cli -p "$p" role 2>/dev/null | grep -q '^connected$'; then ok=0; fi
      done
      [ $ok = 1 ] && return 0
    fi
    sleep 0.1
  done
  echo "the pairs did not form again ($1)" >&2; exit 1
}
# Kills the primary of key $2 (asked at port $1; another node answers the probe) and sets
# `took` to the milliseconds until a SET of that key is acknowledged; $3 restarts the node killed.
# Not in a subshell: the restarted node's pid must reach the next round.
failover() {
  local ask="$1" key="$2" restart="$3" victim other t0 t1
  victim="$(owner "$ask" "$key")"
  [ -n "$victim" ] || { echo "no owner of $key at $ask" >&2; exit 1; }
  for p in "${@:4}"; do if [ "$p" != "$victim" ]; then other="$p"; break; fi; done
  kill -9 "${pid[$victim]}"; wait "${pid[$victim]}" 2>/dev/null || true
  t0="$(now_ms)"
  until [ "$(redis-cli -c -p "$other" set "$key" v 2>/dev/null)" = OK ]; do sleep 0.02; done
  t1="$(now_ms)"
  "$restart" "$victim"
  wait_port "$victim"
  took=$((t1 - t0))
}
any_up() { for p in "$@"; do if redis-cli -p "$p" ping >/dev/null 2>&1; then echo "$p"; return; fi; done; }

start_manager
for _ in $(seq 1 300); do grep -q "listening" "$work/manager.log" && break; sleep 0.1; done
for p in "${ATOLL[@]}"; do start_atoll "$p"; wait_port "$p"; sleep 1; done
for p in "${REDIS[@]}"; do start_redis "$p"; wait_port "$p"; done
redis-cli --cluster create $(for p in "${REDIS[@]}"; do printf '127.0.0.1:%s ' "$p"; done) \
  --cluster-replicas 1 --cluster-yes > "$work/create.log" 2>&1
wait_pairs 7501 2 "${ATOLL[@]}"
wait_pairs 7511 3 "${REDIS[@]}"

echo "| round | Atoll KV failover (ms) | Redis failover (ms) |"
echo "|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  failover "$(any_up "${ATOLL[@]}")" "fo:a:$round" start_atoll "${ATOLL[@]}"; a=$took
  wait_pairs "$(any_up "${ATOLL[@]}")" 2 "${ATOLL[@]}"
  failover "$(any_up "${REDIS[@]}")" "fo:r:$round" start_redis "${REDIS[@]}"; r=$took
  wait_pairs "$(any_up "${REDIS[@]}")" 3 "${REDIS[@]}"
  echo "| $round | $a | $r |"
done

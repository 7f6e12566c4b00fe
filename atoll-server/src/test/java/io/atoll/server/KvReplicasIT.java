package io.atoll.server;

import static io.atoll.server.KvProbes.indexOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.net.Ports;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Six {@code atoll kv} processes formed into three primaries with a replica each by the real
 * {@code redis-cli --cluster create --cluster-replicas 1}; while a Lettuce cluster client writes,
 * {@code CLUSTER FAILOVER} is sent to a replica of each shard in turn (and back again, for more
 * rounds: {@code -Datoll.kv.failovers=N}). Every acknowledged write is read back at its last value,
 * {@code redis-cli --cluster check} is clean after each round, each replica ends with its primary's
 * keys, and a replica serves READONLY reads and refuses writes as Redis' replicas do.
 */
class KvReplicasIT {
  static final int ROUNDS = Integer.getInteger("atoll.kv.failovers", 3);
  static final int KEYS = 3000;

  @TempDir
  Path dir;
  ProcessCluster processes;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir, () -> processes);

  @Test
  void manualFailoversUnderAWritingClientLoseNoAcknowledgedWrite() throws Exception {
    Assumptions.assumeTrue(RedisCliRun.installed(),
        "redis-cli is not installed on this machine: apt-get install redis-tools (CI's .ci/run installs it)");
    int[] ports = new int[6];
    int[] bus = new int[6];
    processes = new ProcessCluster(dir, Duration.ofSeconds(10));
    try {
      startAll(ports, bus, "--cluster-node-timeout", "3000");
      RedisClusterClient client = formWithReplicas(ports);
      Map<Integer, String> acked = new ConcurrentHashMap<>();
      Map<Integer, Boolean> unsure = new ConcurrentHashMap<>();
      AtomicBoolean writing = new AtomicBoolean(true);
      AtomicLong writes = new AtomicLong();
      AtomicLong refused = new AtomicLong();
      AtomicReference<Throwable> writerFailure = new AtomicReference<>();
      try (StatefulRedisClusterConnection<String, String> conn = client.connect()) {
        conn.setTimeout(Duration.ofSeconds(20));
        RedisAdvancedClusterCommands<String, String> r = conn.sync();
        Thread writer = Thread.ofPlatform().name("writer").start(() -> {
          long seq = 0;
          java.util.Random random = new java.util.Random(5);
          try {
            while (writing.get()) {
              int k = random.nextInt(KEYS);
              String value = "v" + (++seq);
              try {
                r.set("k:" + k, value);
                acked.put(k, value);
                unsure.remove(k, false); // a key with a write in limbo stays unsure
                writes.incrementAndGet();
              } catch (RuntimeException e) {
                // Refused with an error reply: not applied, or applied and then acknowledged by
                // nobody; a later acknowledged write settles the key. Without a reply (a timeout,
                // a broken connection) the client may still deliver it later: Lettuce sends what it
                // buffered when it reconnects, and follows a MOVED, even for a command it gave up
                // on, so it can land after a later acknowledged write. Such a key is never checked.
                unsure.merge(k, !(e instanceof io.lettuce.core.RedisCommandExecutionException), Boolean::logicalOr);
                if (refused.incrementAndGet() % 5000 == 1) {
                  System.out.printf("writers: %d acknowledged, %d not; %s%n", writes.get(), refused.get(), e);
                }
              }
            }
          } catch (Throwable t) {
            writerFailure.set(t);
          }
        });
        processes.await("some writes acknowledged", Duration.ofSeconds(30), () -> writes.get() > 500);

        for (int round = 1; round <= ROUNDS; round++) {
          int shard = (round - 1) % 3;
          int replica = replicaOfShard(ports, shard);
          long before = writes.get();
          assertThat(cli(replica, "CLUSTER", "FAILOVER").trim()).isEqualTo("OK");
          processes.await("round " + round + ": node " + replica + " is a primary", Duration.ofSeconds(20),
              () -> cli(replica, "ROLE").startsWith("master"));
          processes.await("round " + round + ": writes go on after the failover", Duration.ofSeconds(30),
              () -> writes.get() > before + 300);
          awaitCheckClean(ports[0], "after round " + round);
        }
        writing.set(false);
        writer.join(30_000);
        assertThat(writerFailure.get()).isNull();
        for (int k = 0; k < KEYS; k++) {
          String got = r.get("k:" + k);
          if (unsure.containsKey(k)) {
            continue; // either outcome is right for a write whose reply never came
          }
          assertThat(got).as("k:%d, after %d failovers", k, ROUNDS).isEqualTo(acked.get(k));
        }
        System.out.printf("replica failovers: %d rounds, %d writes acknowledged, %d refused or unanswered%n", ROUNDS,
            writes.get(), refused.get());
      } finally {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      }

      // Each replica ends with its primary's keys, and serves them to READONLY reads.
      RedisClient plain = RedisClient.create();
      try {
        for (int port : ports) {
          String role = cli(port, "ROLE");
          if (!role.startsWith("slave")) {
            continue;
          }
          int primary = Integer.parseInt(role.split("\n")[2].trim());
          processes.await("replica " + port + " has all of " + primary, Duration.ofSeconds(20),
              () -> cli(port, "DBSIZE").equals(cli(primary, "DBSIZE")));
          try (StatefulRedisConnection<String, String> rep = plain.connect(uri(port));
              StatefulRedisConnection<String, String> pri = plain.connect(uri(primary))) {
            rep.sync().readOnly();
            int checked = 0;
            for (int k = 0; k < KEYS; k++) {
              String key = "k:" + k;
              String value;
              try {
                value = pri.sync().get(key);
              } catch (io.lettuce.core.RedisCommandExecutionException moved) {
                continue; // another primary's slot
              }
              assertThat(rep.sync().get(key)).as("%s on replica %d", key, port).isEqualTo(value);
              checked++;
            }
            assertThat(checked).as("keys compared on replica %d", port).isPositive();
            assertThat(cli(port, "SET", "k:1", "x")).startsWith("MOVED");
            assertThat(cli(port, "FLUSHALL")).startsWith("READONLY You can't write against a read only replica.");
          }
          assertThat(cli(primary, "WAIT", "1", "5000").trim()).isEqualTo("1");
        }
      } finally {
        plain.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      }
    } finally {
      processes.close();
    }
  }

  static final int KILLS = Integer.getInteger("atoll.kv.primaryKills", 2);
  static final int WRITERS = 8;

  /**
   * With {@code --min-replicas-to-ack 1}, a primary killed with SIGKILL under a writing client and
   * replaced by its replica ({@code CLUSTER FAILOVER FORCE}, as an operator does once the cluster
   * marks it failed) loses no acknowledged write; restarted on its data directory, it becomes the
   * new primary's replica (what it logged but never had acknowledged is dropped by the copy). More
   * rounds: {@code -Datoll.kv.primaryKills=N}.
   */
  @Test
  void aPrimaryKilledAndReplacedByItsReplicaLosesNoWriteItsReplicaAcknowledged() throws Exception {
    Assumptions.assumeTrue(RedisCliRun.installed(),
        "redis-cli is not installed on this machine: apt-get install redis-tools (CI's .ci/run installs it)");
    int[] ports = new int[6];
    int[] bus = new int[6];
    processes = new ProcessCluster(dir, Duration.ofSeconds(10));
    try {
      ManagedProcess[] nodes = startAll(ports, bus, ACKING);
      RedisClusterClient client = formWithReplicas(ports);
      Map<Integer, String> acked = new ConcurrentHashMap<>();
      Map<Integer, Boolean> unsure = new ConcurrentHashMap<>();
      AtomicBoolean writing = new AtomicBoolean(true);
      AtomicLong writes = new AtomicLong();
      AtomicLong refused = new AtomicLong();
      try (StatefulRedisClusterConnection<String, String> conn = client.connect()) {
        // A write to the killed node fails after a second, not after Lettuce's minute: the writers
        // (one connection) reach the other nodes meanwhile, and learn the new primary sooner.
        conn.setTimeout(Duration.ofSeconds(1));
        RedisAdvancedClusterCommands<String, String> r = conn.sync();
        // Writers in parallel, each with keys of its own (so each key's writes are in one order): a
        // kill then finds writes acknowledged and still on their way to the replica, which only the
        // replica's acks keep from being lost.
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < WRITERS; t++) {
          int me = t;
          writers.add(Thread.ofPlatform().name("writer-" + t).start(() -> {
            long seq = 0;
            java.util.Random random = new java.util.Random(9 + me);
            while (writing.get()) {
              int k = random.nextInt(KEYS / WRITERS) * WRITERS + me;
              String value = me + "." + (++seq);
              try {
                r.set("k:" + k, value);
                acked.put(k, value);
                unsure.remove(k, false); // a key with a write in limbo stays unsure
                writes.incrementAndGet();
              } catch (RuntimeException e) {
                // Refused with an error reply: not applied, or applied and then acknowledged by
                // nobody; a later acknowledged write settles the key. Without a reply (a timeout,
                // a broken connection) the client may still deliver it later: Lettuce sends what it
                // buffered when it reconnects, and follows a MOVED, even for a command it gave up
                // on, so it can land after a later acknowledged write. Such a key is never checked.
                unsure.merge(k, !(e instanceof io.lettuce.core.RedisCommandExecutionException), Boolean::logicalOr);
                if (refused.incrementAndGet() % 5000 == 1) {
                  System.out.printf("writers: %d acknowledged, %d not; %s%n", writes.get(), refused.get(), e);
                }
              }
            }
          }));
        }
        processes.await("some writes acknowledged", Duration.ofSeconds(30), () -> writes.get() > 500);
        for (int round = 1; round <= KILLS; round++) {
          int shard = (round - 1) % 3;
          int replica = replicaOfShard(ports, shard);
          String primaryId = cli(replica, "CLUSTER", "NODES").lines().filter(l -> l.contains("myself"))
              .findFirst().orElseThrow().split(" ")[3];
          int primaryPort = portOf(cli(replica, "CLUSTER", "NODES"), primaryId);
          int victim = indexOf(ports, primaryPort);
          nodes[victim].kill();
          nodes[victim].awaitExit(Duration.ofSeconds(10));
          int r0 = round;
          processes.await("round " + r0 + ": the replica sees its primary failed", Duration.ofSeconds(30),
              () -> cli(replica, "CLUSTER", "NODES").lines().anyMatch(l -> l.startsWith(primaryId) && l.contains("fail")
                  && !l.contains("fail?")));
          assertThat(cli(replica, "CLUSTER", "FAILOVER", "FORCE")).isEqualTo("OK");
          processes.await("round " + r0 + ": node " + replica + " is a primary", Duration.ofSeconds(20),
              () -> cli(replica, "ROLE").startsWith("master"));
          long before = writes.get();
          processes.await("round " + r0 + ": writes go on", Duration.ofSeconds(60), () -> writes.get() > before + 300);
          nodes[victim] = start(victim, ports, bus, round, ACKING);
          nodes[victim].awaitAddress(Duration.ofSeconds(60));
          processes.await("round " + r0 + ": the old primary follows its replica", Duration.ofSeconds(60),
              () -> cli(primaryPort, "ROLE").startsWith("slave") && cli(primaryPort, "ROLE").contains("connected"));
          awaitCheckClean(ports[0], "after round " + round);
        }
        writing.set(false);
        for (Thread w : writers) {
          w.join(30_000);
        }
        conn.setTimeout(Duration.ofSeconds(10));
        int checked = 0;
        for (int k = 0; k < KEYS; k++) {
          if (!unsure.containsKey(k)) {
            assertThat(read(r, "k:" + k)).as("k:%d after %d primaries killed", k, KILLS).isEqualTo(acked.get(k));
            checked++;
          }
        }
        assertThat(checked).as("keys checked").isGreaterThan(KEYS / 3);
        System.out.printf("primary kills with acks from a replica: %d rounds, %d writes acknowledged, %d refused or"
            + " unanswered; %d of %d keys checked (the others' last write got no reply, or was refused)%n", KILLS,
            writes.get(), refused.get(), checked, KEYS);
      } finally {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      }
    } finally {
      processes.close();
    }
  }

  /**
   * GET, tried again within 30 s if the client cannot reach a node: Lettuce may still be waiting to
   * reconnect to a node killed and restarted in the last round, whose slots it has not yet seen move.
   */
  private static String read(RedisAdvancedClusterCommands<String, String> r, String key) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      try {
        return r.get(key);
      } catch (io.lettuce.core.RedisCommandTimeoutException | io.lettuce.core.RedisConnectionException e) {
        if (System.nanoTime() - deadline > 0) {
          throw e;
        }
      }
    }
  }

  /** The options of the nodes whose writes a replica acknowledges. */
  private static final String[] ACKING = {"--cluster-node-timeout", "2000", "--min-replicas-to-ack", "1",
      "--replica-ack-timeout", "2000"};

  /** Six nodes on free ports (filled in {@code ports} and {@code bus}), with {@code options}, each listening. */
  private ManagedProcess[] startAll(int[] ports, int[] bus, String... options) {
    ManagedProcess[] nodes = new ManagedProcess[6];
    for (int i = 0; i < 6; i++) {
      ports[i] = Ports.free();
      bus[i] = Ports.free();
      nodes[i] = start(i, ports, bus, 0, options);
    }
    for (ManagedProcess p : nodes) {
      p.awaitAddress(Duration.ofSeconds(60));
    }
    return nodes;
  }

  /** Node {@code i} (its data directory kept across rounds) with {@code options}. */
  private ManagedProcess start(int i, int[] ports, int[] bus, int round, String... options) {
    List<String> args = new ArrayList<>(List.of("kv", "--port", String.valueOf(ports[i]), "--bus-port",
        String.valueOf(bus[i]), "--data-dir", dir.resolve("kv" + i).toString(), "--event-loops", "1"));
    args.addAll(List.of(options));
    return processes.start(AtollProcesses.atoll("kv" + i + "-" + round, args));
  }

  /**
   * Forms the six nodes at {@code ports} into three primaries with a replica each (redis-cli
   * --cluster create --cluster-replicas 1), waits until every replica took its full copy (a failover
   * is refused before), and returns a Lettuce cluster client for them that follows topology changes.
   */
  private RedisClusterClient formWithReplicas(int[] ports) {
    List<String> create = new ArrayList<>(List.of("--cluster", "create"));
    for (int port : ports) {
      create.add("127.0.0.1:" + port);
    }
    create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
    assertThat(redisCli(create.toArray(String[]::new))).contains("[OK] All 16384 slots covered.");
    awaitCheckClean(ports[0], "after create");
    for (int port : ports) {
      processes.await("node " + port + " has its role settled", Duration.ofSeconds(30), () -> {
        String role = cli(port, "ROLE");
        return role.startsWith("master") || role.contains("connected");
      });
    }
    RedisClusterClient client = RedisClusterClient.create(List.of(uri(ports[0]), uri(ports[1]), uri(ports[2])));
    client.setOptions(ClusterClientOptions.builder().maxRedirects(10).validateClusterNodeMembership(false)
        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
            .enablePeriodicRefresh(Duration.ofMillis(500)).enableAllAdaptiveRefreshTriggers().build()).build());
    return client;
  }

  private static int portOf(String nodes, String id) {
    for (String line : nodes.split("\n")) {
      if (line.startsWith(id)) {
        String addr = line.split(" ")[1];
        addr = addr.substring(0, addr.indexOf('@'));
        return Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
      }
    }
    throw new AssertionError("no node " + id + " in:\n" + nodes);
  }

  /** The client port of the node that replicates the primary serving slot 0, 5461 or 10923. */
  private static int replicaOfShard(int[] ports, int shard) {
    int slot = new int[] {0, 5461, 10923}[shard];
    String nodes = cli(ports[0], "CLUSTER", "NODES");
    String primaryId = null;
    for (String line : nodes.split("\n")) {
      String[] f = line.trim().split(" ");
      for (int i = 8; i < f.length; i++) {
        String[] range = f[i].split("-");
        int lo = Integer.parseInt(range[0]);
        int hi = range.length > 1 ? Integer.parseInt(range[1]) : lo;
        if (slot >= lo && slot <= hi) {
          primaryId = f[0];
        }
      }
    }
    for (String line : nodes.split("\n")) {
      String[] f = line.trim().split(" ");
      if (f.length > 3 && f[3].equals(primaryId)) {
        String addr = f[1].substring(0, f[1].indexOf('@'));
        return Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
      }
    }
    throw new AssertionError("no replica of the primary of slot " + slot + " in:\n" + nodes);
  }

  private void awaitCheckClean(int port, String when) {
    processes.await("redis-cli --cluster check clean " + when, Duration.ofSeconds(30), () -> {
      String check = redisCli("--cluster", "check", "127.0.0.1:" + port);
      return check.contains("[OK] All nodes agree about slots configuration.")
          && check.contains("[OK] All 16384 slots covered.") && !check.contains("[ERR]") && !check.contains("WARNING")
          && check.split("1 additional replica\\(s\\)", -1).length == 4;
    });
  }

  /** redis-cli against the node at {@code port}, its output trimmed. */
  private static String cli(int port, String... args) {
    List<String> a = new ArrayList<>(List.of("-p", String.valueOf(port)));
    a.addAll(List.of(args));
    return redisCli(a.toArray(String[]::new)).trim();
  }

  private static String redisCli(String... args) {
    try {
      return RedisCliRun.run(null, args);
    } catch (Exception e) {
      throw new IllegalStateException("redis-cli " + String.join(" ", args) + ": " + e.getMessage(), e);
    }
  }

  private static RedisURI uri(int port) {
    return RedisURI.create("127.0.0.1", port);
  }
}

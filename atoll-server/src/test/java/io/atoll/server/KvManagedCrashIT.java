package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.kvdemo.KvDemoRun;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
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
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Managed nodes as processes (a shard manager and {@code atoll kv --manager} nodes with {@code
 * --appendfsync always}): a node is killed with SIGKILL at random moments while a cluster client
 * writes, and restarted on its data directory at once, within its lease. Each time it comes back
 * as the same node (its Redis node id unchanged), and every write acknowledged before the kill
 * reads back, deletions included. From the second kill on, a third node C has joined and slots
 * move to it with their keys, and the kills alternate between C (a target: it comes back with its
 * IMPORTING marks, the keys that reached it and their import records) and A (a source: it comes
 * back with its MIGRATING marks); the moves resume. {@code
 * -Datoll.kv.managedCrashes=50} for the long version.
 */
class KvManagedCrashIT {
  static final int CRASHES = Integer.getInteger("atoll.kv.managedCrashes", 4);
  static final int KEYS = 3000;
  static final int BULK = 60_000;

  @TempDir
  Path dir;
  ProcessCluster processes;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir, () -> processes);

  @Test
  void aKilledNodeRestartedOnItsDataDirectoryIsTheSameNodeWithEveryAcknowledgedWrite() throws Exception {
    processes = new ProcessCluster(dir, Duration.ofSeconds(20));
    try {
      ManagedProcess manager = processes.start(AtollProcesses.atoll("manager", List.of("manager", "--port", "0",
          "--data-dir", dir.resolve("manager-data").toString(), "--shards", "16384", "--new-space-shards", "0",
          "--lease", "12s", "--lease-margin", "1s", "--max-moves", "16384", "--max-moves-fraction", "1.0",
          "--termination-timeout", "4s", "--ping-timeout", "2s", "--rebalance-interval", "3s",
          "--rebalance-retry", "1s")));
      PodAddress at = manager.awaitAddress(Duration.ofSeconds(60));
      int[] ports = KvDemoRun.freePorts(3);
      ManagedProcess a = startNode("a-0", ports[0], at);
      ManagedProcess b = startNode("b", ports[1], at);
      a.awaitAddress(Duration.ofSeconds(60));
      b.awaitAddress(Duration.ofSeconds(60));
      RedisClusterClient client = RedisClusterClient.create(List.of(uri(ports[0]), uri(ports[1])));
      client.setOptions(ClusterClientOptions.builder().maxRedirects(10).validateClusterNodeMembership(false)
          .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
              .enablePeriodicRefresh(Duration.ofMillis(500)).enableAllAdaptiveRefreshTriggers().build()).build());
      RedisClient plain = RedisClient.create();
      try (StatefulRedisClusterConnection<String, String> conn = client.connect()) {
        RedisAdvancedClusterCommands<String, String> r = conn.sync();
        awaitSlotsOwned(r, 2);
        String idA = myId(plain, ports[0]);
        // Bulk that makes each move take a while, so that kills fall inside moves; checked at the end.
        io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands<String, String> bulk = conn.async();
        List<io.lettuce.core.RedisFuture<String>> pending = new java.util.ArrayList<>();
        for (int i = 0; i < BULK; i++) {
          pending.add(bulk.set("bulk:" + i, "b".repeat(200) + i));
          if (pending.size() == 1000 || i == BULK - 1) {
            for (io.lettuce.core.RedisFuture<String> f : pending) {
              assertThat(f.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("OK");
            }
            pending.clear();
          }
        }
        Random random = new Random(7);
        Map<Integer, String> acked = new HashMap<>();
        Set<Integer> unsure = new HashSet<>();
        long seq = 0;
        int joinedAt = Math.min(2, CRASHES); // from then on the kills alternate: c (a target), a (a source)
        java.util.concurrent.atomic.AtomicInteger killsMidMove = new java.util.concurrent.atomic.AtomicInteger();
        ManagedProcess c = null;
        String idC = null;
        for (int round = 1; round <= CRASHES; round++) {
          if (round == joinedAt) {
            c = startNode("c-0", ports[2], at); // slots start moving to c
            c.awaitLog(Pattern.compile("registered with the shard manager"), Duration.ofSeconds(60));
            idC = myId(plain, ports[2]);
          }
          boolean target = round >= joinedAt && (round - joinedAt) % 2 == 0;
          AtomicBoolean killed = new AtomicBoolean();
          long killAt = System.nanoTime() + Duration.ofMillis(100 + random.nextInt(target ? 600 : 1200)).toNanos();
          ManagedProcess victim = target ? c : a;
          boolean joined = round >= joinedAt;
          Thread killer = Thread.ofPlatform().start(() -> {
            java.util.concurrent.locks.LockSupport.parkNanos(killAt - System.nanoTime()); // the kill's moment
            if (target ? slotsOf(plain, ports[2]) < 16384 / 3 - 1 : joined && slotsOf(plain, ports[0]) > 16384 / 3 + 1) {
              killsMidMove.incrementAndGet(); // slots were still to arrive at c, or to leave a
            }
            victim.kill();
            killed.set(true);
          });
          while (!killed.get()) {
            int k = random.nextInt(KEYS);
            String value = random.nextInt(8) == 0 ? null : "v" + (++seq);
            try {
              if (value == null) {
                r.del("k:" + k);
              } else {
                r.set("k:" + k, value);
              }
              acked.put(k, value);
              unsure.remove(k);
            } catch (RuntimeException e) {
              unsure.add(k); // its outcome is unknown; nothing after it was acknowledged for it
            }
          }
          killer.join();
          victim.awaitExit(Duration.ofSeconds(10));
          ManagedProcess back = startNode((target ? "c-" : "a-") + round, ports[target ? 2 : 0], at);
          back.awaitLog(Pattern.compile("registered with the shard manager"), Duration.ofSeconds(60));
          assertThat(myId(plain, ports[target ? 2 : 0])).as("node %s after kill %d: the same node", target ? "c" : "a",
              round).isEqualTo(target ? idC : idA);
          if (target) {
            c = back;
          } else {
            a = back;
          }
          awaitSlotsOwned(r, round >= joinedAt ? 3 : 2);
          for (int k = 0; k < KEYS; k++) {
            String got = read(r, "k:" + k);
            if (unsure.remove(k)) {
              acked.put(k, got); // either outcome; from now on it is known
            } else {
              assertThat(got).as("k:%s after kill %d", k, round).isEqualTo(acked.get(k));
            }
          }
        }
        for (int i = 0; i < BULK; i++) {
          assertThat(read(r, "bulk:" + i)).as("bulk:%s at the end", i).isEqualTo("b".repeat(200) + i);
        }
        System.out.printf("managed kv: %d kills of a node restarted on its data directory (%d while slots were still"
            + " to move to or off the node killed), %d keys checked after each, none lost%n", CRASHES, killsMidMove.get(), KEYS);
        assertThat(killsMidMove).as("kills that fell while slots were moving off the node").hasPositiveValue();
      } finally {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        plain.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      }
    } finally {
      processes.close();
    }
  }

  private ManagedProcess startNode(String name, int port, PodAddress manager) {
    String node = name.substring(0, 1);
    return processes.start(AtollProcesses.atoll(name, List.of("kv", "--port", Integer.toString(port), "--manager",
        manager.toString(), "--data-dir", dir.resolve("kv-" + node).toString(), "--event-loops", "2",
        "--appendfsync", "always")));
  }

  /**
   * GET, retried while the nodes' views of a slot disagree for a moment (a config being adopted by
   * one node before another: Lettuce gives up after its redirects) — within a deadline, so a slot
   * that stays unreachable still fails the test.
   */
  private static String read(RedisAdvancedClusterCommands<String, String> r, String key) {
    long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
    while (true) {
      try {
        return r.get(key);
      } catch (io.lettuce.core.RedisCommandExecutionException e) {
        String m = String.valueOf(e.getMessage());
        boolean moving = m.startsWith("MOVED") || m.startsWith("ASK") || m.startsWith("TRYAGAIN")
            || m.startsWith("CLUSTERDOWN");
        if (!moving || System.nanoTime() - deadline > 0) {
          throw e;
        }
        java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // retry pacing
      }
    }
  }

  /** How many slots the node on {@code port} says it owns (0 if it does not answer). */
  private static int slotsOf(RedisClient plain, int port) {
    try (StatefulRedisConnection<String, String> c = plain.connect(uri(port))) {
      String me = c.sync().clusterMyId();
      int owned = 0;
      for (Object o : c.sync().clusterSlots()) {
        List<?> range = (List<?>) o;
        if (me.equals(String.valueOf(((List<?>) range.get(2)).get(2)))) {
          owned += (int) ((Long) range.get(1) - (Long) range.get(0) + 1);
        }
      }
      return owned;
    } catch (RuntimeException e) {
      return 0;
    }
  }

  private static RedisURI uri(int port) {
    return RedisURI.builder().withHost("127.0.0.1").withPort(port).withTimeout(Duration.ofSeconds(3)).build();
  }

  private static String myId(RedisClient plain, int port) {
    try (StatefulRedisConnection<String, String> c = plain.connect(uri(port))) {
      return c.sync().clusterMyId();
    }
  }

  /** Waits until {@code nodes} nodes own every slot between them (the cluster's moves are over). */
  private void awaitSlotsOwned(RedisAdvancedClusterCommands<String, String> r, int nodes) {
    processes.await(nodes + " nodes owning every slot", Duration.ofSeconds(90), () -> {
      try {
        Set<String> owners = new HashSet<>();
        int covered = 0;
        for (Object o : r.clusterSlots()) {
          List<?> range = (List<?>) o;
          covered += (int) ((Long) range.get(1) - (Long) range.get(0) + 1);
          owners.add(String.valueOf(((List<?>) range.get(2)).get(1)));
        }
        return covered == 16384 && owners.size() == nodes;
      } catch (RuntimeException e) {
        return false;
      }
    });
  }
}

package io.atoll.server;

import static io.atoll.server.KvProbes.myId;
import static io.atoll.server.KvProbes.read;
import static io.atoll.server.KvProbes.slotsOf;
import static io.atoll.server.KvProbes.uri;
import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.kvdemo.KvDemoRun;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.lettuce.core.RedisClient;
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
 * --appendfsync always}): a node is killed with SIGKILL at a random moment while a cluster client
 * writes, and restarted on its data directory at once, within its lease. Each time it comes back
 * as the same node (its Redis node id unchanged), and every write acknowledged before the kill
 * reads back, deletions included. After a first kill in a steady cluster, every round moves slots
 * and kills part way through the moves, in turn: a node joining, killed while slots arrive (a
 * target); a node giving slots to one that joins (a source); a node taking the slots of one that
 * leaves gracefully (a target). {@code -Datoll.kv.managedCrashes=31} for ten of each.
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
        Set<Integer> limbo = new HashSet<>();
        long seq = 0;
        // Round 1 kills a in a steady cluster. From round 2 every round moves slots, then kills a
        // node part way through the moves, in turn: c joins and is killed while slots arrive (a
        // target); c joins and a is killed while slots leave it (a source); c leaves gracefully and
        // a is killed while c's slots arrive at it (a target). c joins each time on a new port and
        // data directory (its last one left the cluster for good when it drained).
        java.util.concurrent.atomic.AtomicInteger killsMidMove = new java.util.concurrent.atomic.AtomicInteger();
        Map<String, String> ids = new HashMap<>();
        ids.put("a", idA);
        ManagedProcess c = null;
        int cPort = 0;
        for (int round = 1; round <= CRASHES; round++) {
          int step = round == 1 ? -1 : (round - 2) % 3;
          boolean cUp = c != null;
          if (step == 0 || step == 1) {
            if (cUp) { // c is up from an earlier round: it leaves first, so that it can join again
              c.terminate();
              c.awaitExit(Duration.ofSeconds(120));
              awaitSlotsOwned(r, 2);
            }
            cPort = KvDemoRun.freePorts(1)[0];
            c = startNode("c" + round + "-0", cPort, at, "kv-c" + round);
            c.awaitLog(Pattern.compile("registered with the shard manager"), Duration.ofSeconds(60));
            ids.put("c", myId(plain, cPort));
          } else if (step == 2) {
            c.terminate(); // a graceful leave: c's slots move to a and b
          }
          String victimName = step == 0 ? "c" : "a";
          int victimPort = step == 0 ? cPort : ports[0];
          ManagedProcess victim = step == 0 ? c : a;
          AtomicBoolean killed = new AtomicBoolean();
          long killAt = System.nanoTime() + Duration.ofMillis(100 + random.nextInt(round == 1 ? 1200 : 500)).toNanos();
          int stepNow = step;
          Thread killer = Thread.ofPlatform().start(() -> {
            java.util.concurrent.locks.LockSupport.parkNanos(killAt - System.nanoTime()); // the kill's moment
            int owned = slotsOf(plain, victimPort);
            if (stepNow == 0 && owned < 16384 / 3 - 1 || stepNow == 1 && owned > 16384 / 3 + 1
                || stepNow == 2 && owned < 16384 / 2 - 1) {
              killsMidMove.incrementAndGet(); // its share was still arriving, or leaving
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
            } catch (io.lettuce.core.RedisCommandExecutionException e) {
              unsure.add(k); // refused: its outcome is unknown; nothing after it was acknowledged for it
            } catch (RuntimeException e) {
              // No reply (a timeout, a broken connection): Lettuce may still deliver it later, after
              // a check or a later acknowledged write (it replays what it buffered on reconnecting,
              // and follows MOVED, for a command it gave up on too): never checked again.
              limbo.add(k);
            }
          }
          killer.join();
          victim.awaitExit(Duration.ofSeconds(10));
          ManagedProcess back = step == 0 ? startNode("c" + round + "-1", cPort, at, "kv-c" + round)
              : startNode("a-" + round, ports[0], at, "kv-a");
          back.awaitLog(Pattern.compile("registered with the shard manager"), Duration.ofSeconds(60));
          assertThat(myId(plain, victimPort)).as("node %s after kill %d: the same node", victimName, round)
              .isEqualTo(ids.get(victimName));
          if (step == 0) {
            c = back;
          } else {
            a = back;
          }
          if (step == 2) {
            c.awaitExit(Duration.ofSeconds(120)); // its drain finishes, to the restarted a too
            c = null;
          }
          awaitSlotsOwned(r, c == null ? 2 : 3);
          for (int k = 0; k < KEYS; k++) {
            if (limbo.contains(k)) {
              continue;
            }
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
            + " to move to or off the node killed), %d keys checked after each (%d left out: a write got no reply),"
            + " none lost%n", CRASHES, killsMidMove.get(), KEYS - limbo.size(), limbo.size());
        assertThat(killsMidMove).as("kills that fell while slots were moving to or off the node").hasPositiveValue();
      } finally {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        plain.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      }
    } finally {
      processes.close();
    }
  }

  private ManagedProcess startNode(String name, int port, PodAddress manager) {
    return startNode(name, port, manager, "kv-" + name.substring(0, 1));
  }

  private ManagedProcess startNode(String name, int port, PodAddress manager, String data) {
    return processes.start(AtollProcesses.atoll(name, List.of("kv", "--port", Integer.toString(port), "--manager",
        manager.toString(), "--data-dir", dir.resolve(data).toString(), "--event-loops", "2",
        "--appendfsync", "always", "--drain-timeout", "120s")));
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

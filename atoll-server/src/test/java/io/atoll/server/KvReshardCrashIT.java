package io.atoll.server;

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
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three {@code atoll kv} processes (Redis-cluster mode, {@code --appendfsync always}) resharded by
 * the real {@code redis-cli --cluster reshard} (slots back and forth between the first two) while a
 * Lettuce cluster client writes; the source
 * or the target (in turn) is killed with SIGKILL part way, restarted on its data directory, and
 * {@code redis-cli --cluster fix} finishes the open slots, as an operator would. Afterwards every
 * key lives on exactly one node, at its last acknowledged value, and nothing deleted came back.
 * {@code -Datoll.kv.reshardCrashes=20} for more rounds.
 */
class KvReshardCrashIT {
  static final int ROUNDS = Integer.getInteger("atoll.kv.reshardCrashes", 2);
  static final int KEYS = 2000;
  static final int BULK = 40_000;

  @TempDir
  Path dir;
  ProcessCluster processes;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir, () -> processes);

  @Test
  void aNodeKilledPartWayThroughAReshardLosesNothingOnceFixed() throws Exception {
    Assumptions.assumeTrue(RedisCliRun.installed(),
        "redis-cli is not installed on this machine: apt-get install redis-tools (CI's .ci/run installs it)");
    int[] ports = {Ports.free(), Ports.free(), Ports.free()};
    int[] bus = {Ports.free(), Ports.free(), Ports.free()};
    processes = new ProcessCluster(dir, Duration.ofSeconds(10));
    ManagedProcess[] nodes = new ManagedProcess[3];
    try {
      for (int i = 0; i < 3; i++) {
        nodes[i] = start(i, ports, bus, 0);
      }
      assertThat(RedisCliRun.run(null, "--cluster", "create", "127.0.0.1:" + ports[0], "127.0.0.1:" + ports[1],
          "127.0.0.1:" + ports[2], "--cluster-yes"))
          .contains("[OK] All 16384 slots covered.");
      awaitClusterOk(ports);
      String[] ids = new String[3];
      for (int i = 0; i < 3; i++) {
        ids[i] = RedisCliRun.run(null, "-p", String.valueOf(ports[i]), "CLUSTER", "MYID").trim();
      }
      RedisClusterClient client = RedisClusterClient.create(List.of(uri(ports[0]), uri(ports[1])));
      client.setOptions(ClusterClientOptions.builder().maxRedirects(10).validateClusterNodeMembership(false)
          .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
              .enablePeriodicRefresh(Duration.ofMillis(500)).enableAllAdaptiveRefreshTriggers().build()).build());
      RedisClient plain = RedisClient.create();
      Random random = new Random(11);
      Map<Integer, String> acked = new HashMap<>();
      Set<Integer> unsure = new HashSet<>();
      long seq = 0;
      int fixes = 0;
      try (StatefulRedisClusterConnection<String, String> conn = client.connect()) {
        RedisAdvancedClusterCommands<String, String> r = conn.sync();
        var bulk = conn.async();
        List<io.lettuce.core.RedisFuture<String>> pending = new ArrayList<>();
        for (int i = 0; i < BULK; i++) {
          pending.add(bulk.set("bulk:" + i, "b".repeat(100) + i));
          if (pending.size() == 1000 || i == BULK - 1) {
            for (var f : pending) {
              assertThat(f.get(30, TimeUnit.SECONDS)).isEqualTo("OK");
            }
            pending.clear();
          }
        }
        for (int round = 1; round <= ROUNDS; round++) {
          int from = round % 2 == 1 ? 0 : 1; // the slots go back and forth
          int to = 1 - from;
          int victim = round % 4 == 1 || round % 4 == 2 ? from : to;
          Process reshard = new ProcessBuilder("redis-cli", "--cluster", "reshard", "127.0.0.1:" + ports[from],
              "--cluster-from", ids[from], "--cluster-to", ids[to], "--cluster-slots", "3000", "--cluster-yes",
              "--cluster-pipeline", "50").redirectErrorStream(true).redirectOutput(dir.resolve("reshard-" + round + ".log")
              .toFile()).start();
          long killAt = System.nanoTime() + Duration.ofMillis(300 + random.nextInt(1500)).toNanos();
          while (System.nanoTime() - killAt < 0) {
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
              unsure.add(k); // its outcome is unknown
            }
          }
          nodes[victim].kill();
          boolean wasMoving = reshard.isAlive();
          nodes[victim].awaitExit(Duration.ofSeconds(10));
          reshard.waitFor(60, TimeUnit.SECONDS);
          reshard.destroyForcibly();
          nodes[victim] = start(victim, ports, bus, round);
          awaitClusterOk(ports);
          String fix = RedisCliRun.run(null, "--cluster", "fix", "127.0.0.1:" + ports[0], "--cluster-yes");
          fixes += fix.contains("Fixing open slot") ? 1 : 0;
          String check = RedisCliRun.run(null, "--cluster", "check", "127.0.0.1:" + ports[0]);
          assertThat(check).as("after round %d (the reshard was %s when the node was killed); fix said:%n%s", round,
              wasMoving ? "running" : "over", fix).contains("[OK] All nodes agree about slots configuration.")
              .contains("[OK] All 16384 slots covered.").doesNotContain("slots are open");
          List<StatefulRedisConnection<String, String>> direct = List.of(plain.connect(uri(ports[0])),
              plain.connect(uri(ports[1])), plain.connect(uri(ports[2])));
          for (int k = 0; k < KEYS; k++) {
            String key = "k:" + k;
            String got = r.get(key);
            if (unsure.remove(k)) {
              acked.put(k, got);
            } else {
              assertThat(got).as("%s after round %d", key, round).isEqualTo(acked.get(k));
            }
            int holders = holders(direct, key);
            assertThat(holders).as("nodes holding %s after round %d", key, round).isEqualTo(got == null ? 0 : 1);
          }
          direct.forEach(StatefulRedisConnection::close);
        }
        for (int i = 0; i < BULK; i += 7) {
          assertThat(r.get("bulk:" + i)).as("bulk:%s", i).isEqualTo("b".repeat(100) + i);
        }
        long total = 0;
        for (int port : ports) {
          total += Long.parseLong(RedisCliRun.run(null, "-p", String.valueOf(port), "DBSIZE").trim());
        }
        long present = acked.values().stream().filter(java.util.Objects::nonNull).count();
        assertThat(total).as("keys on the nodes together: each exactly once").isEqualTo(BULK + present);
        System.out.printf("reshard kills: %d rounds, %d needed redis-cli --cluster fix, %d keys checked on each node%n",
            ROUNDS, fixes, KEYS);
      } finally {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        plain.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      }
    } finally {
      processes.close();
    }
  }

  /** How many nodes hold {@code key} in their store (GETKEYSINSLOT: no routing in the way). */
  private static int holders(List<StatefulRedisConnection<String, String>> nodes, String key) {
    int n = 0;
    for (StatefulRedisConnection<String, String> c : nodes) {
      int slot = Math.toIntExact(c.sync().clusterKeyslot(key));
      n += c.sync().clusterGetKeysInSlot(slot, 100_000).contains(key) ? 1 : 0;
    }
    return n;
  }

  private void awaitClusterOk(int[] ports) {
    processes.await("cluster_state:ok on every node", Duration.ofSeconds(60), () -> {
      try {
        for (int port : ports) {
          if (!RedisCliRun.run(null, "-p", String.valueOf(port), "CLUSTER", "INFO").contains("cluster_state:ok")) {
            return false;
          }
        }
        return true;
      } catch (Exception e) {
        return false;
      }
    });
  }

  private ManagedProcess start(int i, int[] ports, int[] bus, int round) {
    ManagedProcess c = processes.start(AtollProcesses.atoll("kv" + i + "-" + round,
        List.of("kv", "--port", String.valueOf(ports[i]), "--bus-port", String.valueOf(bus[i]),
            "--data-dir", dir.resolve("kv" + i).toString(), "--event-loops", "2", "--appendfsync", "always",
            "--cluster-node-timeout", "2000")));
    c.awaitAddress(Duration.ofSeconds(60));
    return c;
  }

  private static RedisURI uri(int port) {
    return RedisURI.builder().withHost("127.0.0.1").withPort(port).withTimeout(Duration.ofSeconds(5)).build();
  }
}

package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.store.file.FileAssignmentStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Managed mode in one JVM: a real shard manager with 16384 shards (file store, gRPC on loopback)
 * and {@link KvServer#startManaged} nodes, driven by Lettuce's cluster client. The process-level
 * story (join, graceful leave, kill -9) is atoll-server's {@code KvManagedIT}.
 */
class KvManagedTest {
  @TempDir
  Path dir;

  private ShardManager manager;
  private final List<KvServer> nodes = new ArrayList<>();
  private final List<AutoCloseable> clients = new ArrayList<>();

  @BeforeEach
  void startManager() {
    ManagerSettings settings = ManagerSettings.defaults().withNumberOfShards(16384)
        .withLease(Duration.ofMillis(1500), Duration.ofMillis(300))
        .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(4))
        .withRebalanceIntervals(Duration.ofSeconds(2), Duration.ofMillis(500))
        .withAllocation(RebalanceLimits.UNLIMITED, AllocationStrategy.versionAware());
    manager = ShardManager.start(settings, FileAssignmentStore.open(dir.resolve("manager")), "127.0.0.1", 0);
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : clients) {
      c.close();
    }
    nodes.forEach(KvServer::close);
    manager.close();
  }

  private KvServer node() throws IOException {
    int port = freePortPair();
    KvServer n = KvServer.startManaged(KvSettings.defaults(port, dir.resolve("kv-" + port)), KvObserver.NONE,
        manager.address(), Duration.ofSeconds(10), () -> { });
    nodes.add(n);
    return n;
  }

  private void awaitSpread(int n) {
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      int total = 0;
      for (KvServer s : nodes) {
        assertThat(s.ownedSlots()).as("slots of node %s", s.port()).isBetween(16384 / n - 1, 16384 / n + 1);
        total += s.ownedSlots();
      }
      assertThat(total).isEqualTo(16384);
      for (KvServer s : nodes) {
        assertThat(s.clusterOk()).isTrue();
      }
    });
  }

  @Test
  void operatorSlotCommandsAreRefusedSayingWhy() throws Exception {
    KvServer a = node();
    awaitSpread(1);
    RedisClient client = RedisClient.create();
    clients.add(client::shutdown);
    try (StatefulRedisConnection<String, String> c = client.connect(RedisURI.create("127.0.0.1", a.port()))) {
      for (String[] cmd : List.of(new String[] {"CLUSTER", "ADDSLOTS", "1"}, new String[] {"CLUSTER", "DELSLOTS", "1"},
          new String[] {"CLUSTER", "SETSLOT", "1", "STABLE"}, new String[] {"CLUSTER", "MEET", "127.0.0.1", "1"},
          new String[] {"CLUSTER", "BUMPEPOCH"}, new String[] {"MIGRATE", "127.0.0.1", "1", "k", "0", "10"})) {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.sync().dispatch(
                io.lettuce.core.protocol.CommandType.valueOf(cmd[0]), new io.lettuce.core.output.StatusOutput<>(
                    io.lettuce.core.codec.StringCodec.UTF8),
                new io.lettuce.core.protocol.CommandArgs<>(io.lettuce.core.codec.StringCodec.UTF8)
                    .addValues(java.util.Arrays.copyOfRange(cmd, 1, cmd.length))))
            .as(String.join(" ", cmd)).isInstanceOf(RedisCommandExecutionException.class)
            .hasMessageContaining("is refused: this node's slots are placed by the shard manager at "
                + manager.address());
      }
      assertThat(c.sync().clusterInfo()).contains("cluster_state:ok").contains("atoll_managed_by:" + manager.address())
          .contains("atoll_serving:1");
    }
  }

  @Test
  void aJoiningNodeTakesItsShareWithTheKeysAndALeavingOneHandsEverythingOver() throws Exception {
    KvServer a = node();
    KvServer b = node();
    awaitSpread(2);
    RedisClusterClient client = RedisClusterClient.create(RedisURI.create("127.0.0.1", a.port()));
    client.setOptions(ClusterClientOptions.builder().maxRedirects(10).topologyRefreshOptions(
        ClusterTopologyRefreshOptions.builder().enablePeriodicRefresh(Duration.ofMillis(500))
            .enableAllAdaptiveRefreshTriggers().build()).build());
    clients.add(client::shutdown);
    StatefulRedisClusterConnection<String, String> conn = client.connect();
    RedisAdvancedClusterCommands<String, String> sync = conn.sync();
    int keys = 4000;
    for (int i = 0; i < keys; i++) {
      sync.set("k:" + i, "0");
    }
    // A writer keeps writing (every write acknowledged is remembered) while slots move under it.
    Map<Integer, Long> acked = new ConcurrentHashMap<>();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicLong writes = new AtomicLong();
    Thread writer = Thread.ofPlatform().start(() -> {
      long v = 0;
      while (running.get()) {
        int k = (int) (v % keys);
        v++;
        try {
          sync.set("k:" + k, Long.toString(v));
          acked.put(k, v);
          writes.incrementAndGet();
        } catch (RuntimeException e) {
          acked.remove(k); // outcome unknown: not checked
        }
      }
    });
    KvServer c = node();
    awaitSpread(3);
    assertThat(c.keys()).as("keys moved to the new node").isGreaterThan(keys / 5);
    long before = writes.get();
    await().atMost(Duration.ofSeconds(10)).until(() -> writes.get() > before + 100);

    KvDeparture d = a.leave(Duration.ofSeconds(30));
    assertThat(d.slotsLeft()).isZero();
    assertThat(d.unregistered()).isTrue();
    assertThat(a.keys()).as("keys left on the node that left").isZero();
    nodes.remove(a);
    a.close();
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
        assertThat(b.ownedSlots() + c.ownedSlots()).isEqualTo(16384));
    running.set(false);
    writer.join();
    for (Map.Entry<Integer, Long> e : acked.entrySet()) {
      assertThat(sync.get("k:" + e.getKey())).as("key k:%s", e.getKey()).isEqualTo(Long.toString(e.getValue()));
    }
    for (int i = 0; i < keys; i++) {
      assertThat(sync.get("k:" + i)).as("key k:%s", i).isNotNull();
    }
    conn.close();
  }

  /** A port p with p + 10000 (the control port) free too, both below the ephemeral range. */
  private static int freePortPair() throws IOException {
    java.util.Random r = new java.util.Random();
    for (int i = 0; i < 1000; i++) {
      int p = 11000 + r.nextInt(11000);
      if (free(p) && free(p + 10000)) {
        return p;
      }
    }
    throw new IOException("no free port pair");
  }

  private static boolean free(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}

package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.manager.ShardManager;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.WireSecurity;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A managed node with the append-only file, stopped without leaving (to the manager, as if it
 * crashed: it stops renewing and never unregisters) and started again on its data directory: back
 * within its lease, it is the same node with its slots and every key; back after the manager
 * declared it dead, it joins as a new node and drops what it kept (the slots' new owners serve
 * them). The process-level version (kill -9) is atoll-server's {@code KvManagedCrashIT}.
 */
class KvManagedPersistenceTest {
  @TempDir
  Path dir;

  private ShardManager manager;
  private final List<KvServer> nodes = new ArrayList<>();
  private final List<AutoCloseable> clients = new ArrayList<>();

  @BeforeEach
  void startManager() {
    manager = KvManagers.start(KvManagers.settings(Duration.ofSeconds(6), Duration.ofMillis(500)),
        dir.resolve("manager"), 0, ConfigSigner.generate());
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : clients) {
      c.close();
    }
    nodes.forEach(KvServer::close);
    manager.close();
  }

  private KvServer node(int port, Path data) {
    return node(port, data, manager.address(), Duration.ofSeconds(10));
  }

  private KvServer node(int port, Path data, io.atoll.core.PodAddress managerAt, Duration registerTimeout) {
    KvServer n = KvServer.startManaged(KvSettings.defaults(port, data)
            .withPersistence(new KvPersistence(true, KvPersistence.Fsync.ALWAYS)), KvObserver.NONE,
        List.of(managerAt), WireSecurity.PLAINTEXT, registerTimeout, () -> { });
    synchronized (nodes) {
      nodes.add(n);
    }
    return n;
  }

  /** Stops {@code n} as a crash looks to the manager: no leave, no unregister. */
  private void crash(KvServer n) {
    nodes.remove(n);
    n.close();
  }

  private RedisAdvancedClusterCommands<String, String> client(KvServer seed) {
    RedisClusterClient client = RedisClusterClient.create(RedisURI.create("127.0.0.1", seed.port()));
    client.setOptions(ClusterClientOptions.builder().maxRedirects(10).topologyRefreshOptions(
        ClusterTopologyRefreshOptions.builder().enablePeriodicRefresh(Duration.ofMillis(500))
            .enableAllAdaptiveRefreshTriggers().build()).build());
    clients.add(client::shutdown);
    StatefulRedisClusterConnection<String, String> conn = client.connect();
    clients.add(0, conn::close);
    return conn.sync();
  }

  /**
   * SET, retried while the client's view of the slots has no node for the key's slot: it refreshes
   * every 500 ms, and one taken while a dead node's slots were between owners has none for them.
   */
  private static void setOnceTheClientSeesAnOwner(RedisAdvancedClusterCommands<String, String> sync, String key,
      String value) {
    await().atMost(Duration.ofSeconds(10)).ignoreExceptionsInstanceOf(
        io.lettuce.core.cluster.PartitionSelectorException.class).until(() -> "OK".equals(sync.set(key, value)));
  }

  private void awaitSpread(KvServer... ns) {
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      int total = 0;
      for (KvServer s : ns) {
        assertThat(s.ownedSlots()).as("slots of node %s", s.port()).isBetween(16384 / ns.length - 1,
            16384 / ns.length + 1);
        total += s.ownedSlots();
      }
      assertThat(total).isEqualTo(16384);
    });
  }

  @Test
  void aNodeBackWithinItsLeaseIsTheSameNodeWithEveryKey() throws Exception {
    int portA = KvNodes.freeManagedPorts();
    Path dataA = dir.resolve("a");
    KvServer a = node(portA, dataA);
    KvServer b = node(KvNodes.freeManagedPorts(), dir.resolve("b"));
    awaitSpread(a, b);
    RedisAdvancedClusterCommands<String, String> sync = client(b);
    int keys = 2000;
    for (int i = 0; i < keys; i++) {
      sync.set("k:" + i, "v" + i);
    }
    for (int i = 0; i < keys; i += 3) {
      sync.del("k:" + i);
    }
    String id = a.nodeId();
    long held = a.keys();
    assertThat(held).isGreaterThan(keys / 4);

    crash(a);
    KvServer back = node(portA, dataA);
    assertThat(back.nodeId()).as("the same node (incarnation) as before").isEqualTo(id);
    assertThat(back.keys()).isEqualTo(held);
    awaitSpread(back, b);
    for (int i = 0; i < keys; i++) {
      assertThat(sync.get("k:" + i)).as("key k:%s", i).isEqualTo(i % 3 == 0 ? null : "v" + i);
    }
    assertThat(sync.clusterMyId()).isNotNull();
  }

  @Test
  void aNodeBackAfterItWasDeclaredDeadJoinsAsANewNodeWithoutTheKeysItKept() throws Exception {
    int portA = KvNodes.freeManagedPorts();
    Path dataA = dir.resolve("a");
    KvServer a = node(portA, dataA);
    KvServer b = node(KvNodes.freeManagedPorts(), dir.resolve("b"));
    awaitSpread(a, b);
    RedisAdvancedClusterCommands<String, String> sync = client(b);
    for (int i = 0; i < 1000; i++) {
      sync.set("k:" + i, "old");
    }
    String id = a.nodeId();
    crash(a);
    // Its slots go to b, without a's keys; clients write some of them anew there.
    await().atMost(Duration.ofSeconds(40)).until(() -> b.ownedSlots() == 16384);
    for (int i = 0; i < 1000; i++) {
      setOnceTheClientSeesAnOwner(sync, "k:" + i, "new");
    }

    KvServer back = node(portA, dataA);
    assertThat(back.nodeId()).as("a new incarnation").isNotEqualTo(id);
    awaitSpread(back, b);
    for (int i = 0; i < 1000; i++) {
      assertThat(sync.get("k:" + i)).as("key k:%s", i).isEqualTo("new");
    }
    crash(back);
    KvServer again = node(portA, dataA);
    assertThat(again.nodeId()).as("the new incarnation is the one kept").isEqualTo(back.nodeId());
  }

  /**
   * A node started again on its data directory owns, in its saved view, the slots it had; the
   * manager may have given them away meanwhile. Until the manager answers it, it serves none of
   * them: before, it answered from its saved keys (stale values once the slots' new owner took
   * writes) and, in the moment it dropped them to join as a new node, nil.
   */
  @Test
  void aNodeStartedAgainOnItsDataServesNoKeyUntilTheManagerAnswers() throws Exception {
    int portA = KvNodes.freeManagedPorts();
    Path dataA = dir.resolve("a");
    KvServer a = node(portA, dataA);
    KvServer b = node(KvNodes.freeManagedPorts(), dir.resolve("b"));
    awaitSpread(a, b);
    RedisAdvancedClusterCommands<String, String> sync = client(b);
    io.lettuce.core.RedisClient plain = io.lettuce.core.RedisClient.create();
    clients.add(plain::shutdown);
    String key = null;
    try (var c = plain.connect(RedisURI.create("127.0.0.1", portA))) {
      for (int i = 0; key == null; i++) {
        try {
          c.sync().get("k:" + i); // answered, not -MOVED: a key of a's slots
          key = "k:" + i;
        } catch (io.lettuce.core.RedisCommandExecutionException e) {
          // another node's slot
        }
      }
    }
    sync.set(key, "old");
    crash(a);
    await().atMost(Duration.ofSeconds(40)).until(() -> b.ownedSlots() == 16384);
    setOnceTheClientSeesAnOwner(sync, key, "new");

    // Started again while its manager does not answer: it registers only once the relay passes.
    try (io.atoll.testkit.net.TcpRelay stalled = io.atoll.testkit.net.TcpRelay.to(manager.address().port())) {
      stalled.mode(io.atoll.testkit.net.TcpRelay.Mode.STALL);
      java.util.concurrent.CompletableFuture<KvServer> back = java.util.concurrent.CompletableFuture.supplyAsync(
          () -> node(portA, dataA, io.atoll.core.PodAddress.parse(stalled.address()), Duration.ofSeconds(60)));
      String k = key;
      String answer = await().atMost(Duration.ofSeconds(30)).ignoreExceptionsInstanceOf(
          io.lettuce.core.RedisConnectionException.class).until(() -> {
            try (var c = plain.connect(RedisURI.create("127.0.0.1", portA))) {
              return "value " + c.sync().get(k);
            } catch (io.lettuce.core.RedisCommandExecutionException e) {
              return e.getMessage();
            }
          }, r -> !r.startsWith("LOADING"));
      assertThat(answer).as("GET %s on the node started again, before the manager answered it", key)
          .startsWith("CLUSTERDOWN");
      stalled.release();
      KvServer again = back.get(60, java.util.concurrent.TimeUnit.SECONDS);
      awaitSpread(again, b);
    }
    assertThat(sync.get(key)).isEqualTo("new");
  }

  @Test
  void oneNodePerDataDirectoryAndNoRedisClusterModeDataInManagedMode() throws Exception {
    Path data = dir.resolve("a");
    KvServer a = node(KvNodes.freeManagedPorts(), data);
    assertThatThrownBy(() -> node(KvNodes.freeManagedPorts(), data))
        .hasMessageContaining("is in use by another Atoll KV node");
    crash(a);

    Path redisMode = dir.resolve("r");
    KvServer plain = KvServer.start(KvSettings.defaults(KvNodes.freeManagedPorts(), redisMode)
        .withPersistence(KvPersistence.EVERYSEC));
    plain.close();
    assertThat(Files.exists(redisMode.resolve("nodes.conf"))).isTrue();
    assertThatThrownBy(() -> node(KvNodes.freeManagedPorts(), redisMode))
        .hasMessageContaining("holds a Redis-cluster-mode node");
    assertThatThrownBy(() -> KvServer.start(KvSettings.defaults(KvNodes.freeManagedPorts(), data)
        .withPersistence(KvPersistence.EVERYSEC))).hasMessageContaining("holds a node of a shard manager");
  }
}

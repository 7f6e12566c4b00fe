package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.PodAddress;
import io.atoll.manager.ShardManager;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.WireSecurity;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.io.IOException;
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
 * Replicas the manager places ({@code --replicas 1}): a real manager and managed nodes in one JVM,
 * a Lettuce cluster client writing. Nodes that join become primaries and replicas; a primary that
 * stops (as a crash looks to the manager: no leave) is replaced by its replica, with every write
 * it acknowledged; a node that joins later replicates the promoted one. The process-level test,
 * with kill -9, is atoll-server's {@code KvManagedReplicasIT}.
 */
class KvManagedReplicasTest {
  @TempDir
  Path dir;

  private ShardManager manager;
  private final ConfigSigner signer = ConfigSigner.generate();
  private final List<KvServer> nodes = new ArrayList<>();
  private final List<AutoCloseable> clients = new ArrayList<>();

  @BeforeEach
  void startManager() {
    manager = KvManagers.start(KvManagers.settings(Duration.ofSeconds(2), Duration.ofMillis(300)).withKvReplicas(1),
        dir.resolve("manager"), 0, signer);
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
    return node(KvNodes.freeManagedPorts());
  }

  private KvServer node(int port) {
    return node(port, manager.address());
  }

  private KvServer node(int port, PodAddress managerAt) {
    KvServer n = KvServer.startManaged(KvSettings.defaults(port, dir.resolve("kv-" + port))
            .withReplicas(new KvReplicas(1, 2000)), KvObserver.NONE,
        List.<PodAddress>of(managerAt), WireSecurity.PLAINTEXT, Duration.ofSeconds(10), () -> { });
    nodes.add(n);
    return n;
  }

  /** The ROLE reply's first element at {@code n}: master or slave. */
  private static String role(KvServer n) throws IOException {
    try (Wire w = new Wire(n.port())) {
      String r = w.call("ROLE");
      return r.contains("master") ? "master" : r.contains("slave") ? "slave" : r;
    }
  }

  private static String info(KvServer n) throws IOException {
    try (Wire w = new Wire(n.port())) {
      return w.call("INFO", "replication");
    }
  }

  private RedisClusterClient cluster(KvServer seed) {
    RedisClusterClient client = RedisClusterClient.create(RedisURI.create("127.0.0.1", seed.port()));
    client.setOptions(ClusterClientOptions.builder().maxRedirects(10).topologyRefreshOptions(
        ClusterTopologyRefreshOptions.builder().enablePeriodicRefresh(Duration.ofMillis(500))
            .enableAllAdaptiveRefreshTriggers().build()).build());
    client.setDefaultTimeout(Duration.ofSeconds(3));
    clients.add(client::shutdown);
    return client;
  }

  @Test
  void nodesThatJoinBecomePrimariesAndReplicasAndEachReplicaCopiesItsPrimary() throws Exception {
    KvServer a = node();
    KvServer b = node();
    KvServer c = node();
    KvServer d = node();
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      List<Integer> owned = nodes.stream().map(KvServer::ownedSlots).sorted().toList();
      assertThat(owned).containsExactly(0, 0, 8192, 8192);
      for (KvServer n : nodes) {
        assertThat(role(n)).as("node %s", n.port()).isEqualTo(n.ownedSlots() > 0 ? "master" : "slave");
        assertThat(n.clusterOk()).isTrue();
      }
    });
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      try (Wire w = new Wire(a.port())) {
        String nodesText = w.call("CLUSTER", "NODES");
        assertThat(nodesText.split("\n")).filteredOn(l -> l.split(" ").length > 3 && l.split(" ")[2].contains("slave"))
            .hasSize(2);
      }
    });
    StatefulRedisClusterConnection<String, String> conn = cluster(a).connect();
    for (int k = 0; k < 2000; k++) {
      conn.sync().set("key-" + k, "v" + k);
    }
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
      long primaries = 0;
      long replicas = 0;
      for (KvServer n : nodes) {
        if (n.ownedSlots() > 0) {
          primaries += n.keys();
        } else {
          replicas += n.keys();
        }
      }
      assertThat(primaries).isEqualTo(2000);
      assertThat(replicas).isEqualTo(2000);
    });
    for (KvServer n : List.of(a, b, c, d)) {
      if (n.ownedSlots() > 0) {
        assertThat(info(n)).contains("connected_slaves:1");
      } else {
        assertThat(info(n)).contains("master_link_status:up");
      }
    }
  }

  @Test
  void aPrimaryThatStopsIsReplacedByItsReplicaWithEveryWriteItAcknowledged() throws Exception {
    KvServer a = node();
    await().atMost(Duration.ofSeconds(20)).until(() -> a.ownedSlots() == 16384);
    KvServer b = node();
    await().atMost(Duration.ofSeconds(20)).until(() -> "slave".equals(role(b)));
    await().atMost(Duration.ofSeconds(20)).until(() -> info(a).contains("slave0:") && info(a).contains("state=online"));

    Map<String, String> acked = new ConcurrentHashMap<>();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong failures = new AtomicLong();
    StatefulRedisClusterConnection<String, String> conn = cluster(a).connect();
    Thread writer = Thread.ofPlatform().name("writer").start(() -> {
      long i = 0;
      while (!stop.get()) {
        String key = "key-" + i; // each key written once: a lost write cannot hide behind a later one
        String value = "v" + i;
        try {
          conn.sync().set(key, value);
          acked.put(key, value);
        } catch (RuntimeException e) {
          failures.incrementAndGet(); // not acknowledged: nothing is promised about it
        }
        i++;
      }
    });
    await().atMost(Duration.ofSeconds(20)).until(() -> acked.size() >= 500);

    long crashed = System.nanoTime();
    nodes.remove(a);
    a.close(); // to the manager, a crash: no leave, no unregister
    await().atMost(Duration.ofSeconds(20)).until(() -> b.ownedSlots() == 16384);
    long promotedMillis = (System.nanoTime() - crashed) / 1_000_000;
    assertThat(role(b)).isEqualTo("master");
    // Within the lease and margin (2.3 s) plus the manager's round, on a busy machine.
    assertThat(promotedMillis).as("ms from the crash to the replica owning the slots").isLessThan(15_000);

    int before = acked.size();
    await().atMost(Duration.ofSeconds(20)).until(() -> acked.size() > before + 200);

    // A node that joins now replicates the promoted one.
    KvServer c = node();
    await().atMost(Duration.ofSeconds(20)).until(() -> "slave".equals(role(c)));
    await().atMost(Duration.ofSeconds(20)).until(() -> info(b).contains("state=online"));
    stop.set(true);
    writer.join(10_000);

    for (Map.Entry<String, String> e : acked.entrySet()) {
      assertThat(conn.sync().get(e.getKey())).as("acknowledged write of %s", e.getKey()).isEqualTo(e.getValue());
    }
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(c.keys()).isEqualTo(b.keys()));
  }

  @Test
  void aPrimaryRestartedOnItsDataBeforeItsLeaseRanOutComesBackAsANewNodeAndItsReplicaTakesOver() throws Exception {
    KvServer a = node();
    await().atMost(Duration.ofSeconds(20)).until(() -> a.ownedSlots() == 16384);
    KvServer b = node();
    await().atMost(Duration.ofSeconds(20)).until(() -> info(a).contains("state=online"));
    StatefulRedisClusterConnection<String, String> conn = cluster(a).connect();
    for (int k = 0; k < 300; k++) {
      conn.sync().set("key-" + k, "v" + k); // each acknowledged once the replica has it
    }
    String oldId = a.nodeId();
    int port = a.port();
    nodes.remove(a);
    a.close(); // a crash, and a restart at once: its log (appendfsync everysec) may lack the last writes
    KvServer back = node(port);
    // It does not come back as the primary whose replica would copy it again (and lose what its
    // log lacked): it is a new node, and the replica takes the slots when the old one is declared dead.
    assertThat(back.nodeId()).isNotEqualTo(oldId);
    await().atMost(Duration.ofSeconds(20)).until(() -> b.ownedSlots() == 16384);
    for (int k = 0; k < 300; k++) {
      assertThat(conn.sync().get("key-" + k)).as("key-%d", k).isEqualTo("v" + k);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> "slave".equals(role(back)));
  }

  /** Whether the node on {@code port} says it serves its slots (its lease is live); false if it does not answer. */
  private static boolean serving(int port) {
    try (Wire w = new Wire(port)) {
      return w.call("CLUSTER", "INFO").contains("atoll_serving:1");
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void aPrimaryCutOffFromTheManagerStopsAcknowledgingBeforeItsReplicaIsPromoted() throws Exception {
    try (io.atoll.testkit.net.TcpRelay relay = io.atoll.testkit.net.TcpRelay.to(manager.address().port())) {
      KvServer a = node(KvNodes.freeManagedPorts(), new PodAddress("127.0.0.1", relay.port()));
      await().atMost(Duration.ofSeconds(20)).until(() -> a.ownedSlots() == 16384);
      KvServer b = node();
      await().atMost(Duration.ofSeconds(20)).until(() -> info(a).contains("state=online"));

      Map<String, String> acked = new ConcurrentHashMap<>();
      AtomicBoolean stop = new AtomicBoolean();
      StatefulRedisClusterConnection<String, String> conn = cluster(a).connect();
      Thread writer = Thread.ofPlatform().name("writer").start(() -> {
        for (long i = 0; !stop.get(); i++) {
          try {
            conn.sync().set("key-" + i, "v" + i);
            acked.put("key-" + i, "v" + i);
          } catch (RuntimeException e) {
            // not acknowledged
          }
        }
      });
      await().atMost(Duration.ofSeconds(20)).until(() -> acked.size() >= 200);

      // A black hole between the primary and the manager (connections open, bytes dropped): its
      // renewals are lost, and it cannot tell the manager is not down (no refused connection).
      relay.mode(io.atoll.testkit.net.TcpRelay.Mode.DROP);
      long cut = System.nanoTime();
      long fenced = 0;
      long promoted = 0;
      long deadline = cut + Duration.ofSeconds(30).toNanos();
      while ((fenced == 0 || promoted == 0) && System.nanoTime() < deadline) {
        if (fenced == 0 && !serving(a.port())) {
          fenced = System.nanoTime();
        }
        if (promoted == 0 && b.ownedSlots() == 16384) {
          promoted = System.nanoTime();
          assertThat(serving(a.port())).as("the cut-off primary serves while its replica owns its slots").isFalse();
        }
        java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(5).toNanos()); // polling pace
      }
      assertThat(fenced).as("the cut-off primary stopped serving").isPositive();
      assertThat(promoted).as("its replica took the slots").isPositive();
      assertThat(fenced).as("the primary stops before the replica starts").isLessThan(promoted);
      int before = acked.size();
      await().atMost(Duration.ofSeconds(20)).until(() -> acked.size() > before + 200);
      stop.set(true);
      writer.join(10_000);
      for (Map.Entry<String, String> e : acked.entrySet()) {
        assertThat(conn.sync().get(e.getKey())).as("acknowledged write of %s", e.getKey()).isEqualTo(e.getValue());
      }
      System.out.printf("cut off at 0 ms: the primary stopped serving at %d ms, its replica owned its slots at %d ms%n",
          (fenced - cut) / 1_000_000, (promoted - cut) / 1_000_000);
    }
  }
}

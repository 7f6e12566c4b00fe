package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.core.Ticker;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.ManagerObserver;
import io.atoll.manager.ManagerSecurity;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.testkit.tls.DevCa;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;

/**
 * Managed nodes with TLS client ports, a password and a shard manager over mutual TLS, all with
 * certificates of the testkit's development CA on loopback: hand-offs move keys over the targets'
 * TLS ports with the node's own pod certificate (a node serving TLS only still receives them), and
 * nodes whose TLS ports sit at different offsets from their client ports advertise each other's
 * TLS ports (the manager's config carries them) to Lettuce's and Jedis' cluster clients.
 */
class KvManagedTlsTest {
  private static final String PASSWORD = "s3cret";

  @TempDir
  Path dir;

  private Path certs;
  private DevCa ca;
  private ShardManager manager;
  private final List<KvServer> nodes = new ArrayList<>();
  private final List<Runnable> clients = new ArrayList<>();
  private final AtomicInteger names = new AtomicInteger();

  @BeforeEach
  void startManager() {
    certs = dir.resolve("certs");
    ca = DevCa.create("kv-managed-tls", Duration.ofDays(1));
    ca.writeCa(certs);
    ca.issue(Role.MANAGER, "manager", List.of()).write(certs, "manager");
    ca.issue(Role.ADMIN, "client", List.of()).write(certs, "client");
    ManagerSettings settings = ManagerSettings.defaults().withNumberOfShards(16384)
        .withLease(Duration.ofSeconds(4), Duration.ofMillis(500))
        .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(4))
        .withRebalanceIntervals(Duration.ofSeconds(2), Duration.ofMillis(500))
        .withAllocation(RebalanceLimits.UNLIMITED, AllocationStrategy.versionAware());
    manager = ShardManager.start(settings, FileAssignmentStore.open(dir.resolve("manager")), PodHealth.LEASE_ONLY,
        "127.0.0.1", 0, Ticker.SYSTEM, new java.util.Random(), ManagerObserver.NONE,
        new ManagerSecurity(WireSecurity.tls(certs.resolve("ca.pem"), certs.resolve("manager.pem"),
            certs.resolve("manager.key")), ConfigSigner.generate()));
  }

  @AfterEach
  void stop() {
    clients.forEach(Runnable::run);
    nodes.forEach(KvServer::close);
    manager.close();
  }

  /** A managed node with its own pod certificate, a TLS port at {@code tlsPort} (0: any) and the password. */
  private KvServer node(int port, int tlsPort, boolean tlsOnly, KvTls.ClientCerts clientCerts) {
    String name = "kv-" + names.incrementAndGet();
    ca.issue(Role.POD, name, List.of()).write(certs, name);
    KvTls tls = new KvTls(tlsPort, certs.resolve("ca.pem"), certs.resolve(name + ".pem"),
        certs.resolve(name + ".key"), clientCerts, tlsOnly);
    KvServer n = KvServer.startManaged(KvSettings.defaults(port, dir.resolve(name)).withPassword(PASSWORD)
        .withTls(tls), KvObserver.NONE, List.of(manager.address()), WireSecurity.tls(certs.resolve("ca.pem"),
            certs.resolve(name + ".pem"), certs.resolve(name + ".key")), Duration.ofSeconds(10), () -> { });
    nodes.add(n);
    return n;
  }

  private void awaitSpread(int n) {
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      int total = 0;
      for (KvServer s : nodes) {
        assertThat(s.ownedSlots()).as("slots of node %s", s.port()).isBetween(16384 / n - 1, 16384 / n + 1);
        total += s.ownedSlots();
      }
      assertThat(total).isEqualTo(16384);
    });
  }

  /** Lettuce's cluster client over TLS, with the admin's client certificate and the password. */
  private RedisAdvancedClusterCommands<String, String> lettuce(int tlsPort) {
    RedisClusterClient c = RedisClusterClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(tlsPort)
        .withSsl(true).withPassword(PASSWORD.toCharArray()).build());
    c.setOptions(ClusterClientOptions.builder().maxRedirects(10)
        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().enablePeriodicRefresh(Duration.ofMillis(500))
            .enableAllAdaptiveRefreshTriggers().build())
        .sslOptions(SslOptions.builder().jdkSslProvider().trustManager(certs.resolve("ca.pem").toFile())
            .keyManager(certs.resolve("client.pem").toFile(), certs.resolve("client.key").toFile(), null).build())
        .build());
    clients.add(c::shutdown);
    StatefulRedisClusterConnection<String, String> conn = c.connect();
    clients.add(0, conn::close);
    return conn.sync();
  }

  @Test
  void handOffsMoveTheKeysOverTheTargetsTlsPortSoANodeServingOnlyTlsReceivesThem() throws Exception {
    int pa = KvNodes.freeManagedPorts(1);
    KvServer a = node(pa, pa + 1, false, KvTls.ClientCerts.REQUIRE);
    awaitSpread(1);
    RedisAdvancedClusterCommands<String, String> sync = lettuce(a.tlsPort());
    int keys = 2000;
    for (int i = 0; i < keys; i++) {
      sync.set("k:" + i, "0");
    }
    // A writer keeps writing while the slots move (every acknowledged write is remembered).
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
    // The new node serves clients over TLS only: its plaintext port is closed, so every key that
    // reaches it came over its TLS port, with a's pod certificate (client certificates required).
    int pb = KvNodes.freeManagedPorts(1);
    KvServer b = node(pb, pb + 1, true, KvTls.ClientCerts.REQUIRE);
    assertThat(listening(b.port())).as("the TLS-only node's plaintext port").isFalse();
    awaitSpread(2);
    long before = writes.get();
    await().atMost(Duration.ofSeconds(20)).until(() -> writes.get() > before + 100);
    running.set(false);
    writer.join();
    assertThat(a.keysMoved()).as("keys handed off").isPositive();
    assertThat(b.keys()).as("keys on the TLS-only node").isGreaterThan(keys / 4);
    for (Map.Entry<Integer, Long> e : acked.entrySet()) {
      assertThat(sync.get("k:" + e.getKey())).as("key k:%s", e.getKey()).isEqualTo(Long.toString(e.getValue()));
    }
    for (int i = 0; i < keys; i++) {
      assertThat(sync.get("k:" + i)).as("key k:%s", i).isNotNull();
    }
    assertThat(listening(b.port())).isFalse();
  }

  @Test
  void aManagedNodesTlsPortNeedsAPodCertificateForItsHandOffs() throws Exception {
    int p = KvNodes.freeManagedPorts(1);
    KvTls admin = new KvTls(p + 1, certs.resolve("ca.pem"), certs.resolve("client.pem"), certs.resolve("client.key"),
        KvTls.ClientCerts.REQUIRE);
    ca.issue(Role.POD, "kv-pod", List.of()).write(certs, "kv-pod");
    assertThatThrownBy(() -> KvServer.startManaged(KvSettings.defaults(p, dir.resolve("admin")).withTls(admin),
        KvObserver.NONE, List.of(manager.address()), WireSecurity.tls(certs.resolve("ca.pem"),
            certs.resolve("kv-pod.pem"), certs.resolve("kv-pod.key")), Duration.ofSeconds(10), () -> { }))
        .hasMessageContaining("holds atoll:admin:client (expected: a pod certificate, atoll:pod:NAME");
    assertThat(listening(p)).as("nothing left listening").isFalse();
  }

  @Test
  void nodesWithTlsPortsAtDifferentOffsetsAdvertiseEachOthersToTlsClusterClients() throws Exception {
    List<KvServer> started = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      int p = KvNodes.freeManagedPorts(1 + 2 * i);
      started.add(node(p, p + 1 + 2 * i, false, KvTls.ClientCerts.OPTIONAL)); // offsets 1, 3, 5
    }
    awaitSpread(3);
    Set<Integer> tlsPorts = new HashSet<>(started.stream().map(KvServer::tlsPort).toList());
    assertThat(tlsPorts).hasSize(3);
    for (KvServer n : started) {
      try (Wire w = Wire.tls(n.tlsPort(), trusting())) {
        // A managed node asks for the password before its node challenge too.
        assertThat(w.call("CLUSTER", "ATOLL-NODE")).isEqualTo("-NOAUTH Authentication required.\r\n");
        assertThat(w.call("AUTH", PASSWORD)).isEqualTo("+OK\r\n");
        String slots = w.call("CLUSTER", "SLOTS");
        String nodesText = w.call("CLUSTER", "NODES");
        String shards = w.call("CLUSTER", "SHARDS");
        for (KvServer m : started) {
          // (a port after the host: slot numbers are integers in the reply too)
          assertThat(slots).as("CLUSTER SLOTS on %s", n.port()).contains("127.0.0.1\r\n:" + m.tlsPort() + "\r\n")
              .doesNotContain("127.0.0.1\r\n:" + m.port() + "\r\n");
          assertThat(nodesText).contains("127.0.0.1:" + m.tlsPort() + "@");
          assertThat(shards).contains("$4\r\nport\r\n:" + m.port() + "\r\n$8\r\ntls-port\r\n:" + m.tlsPort()
              + "\r\n");
        }
        for (int k = 0; k < 50; k++) { // a redirect names the owner's TLS port
          String reply = w.call("GET", "probe-" + k);
          if (reply.startsWith("-MOVED")) {
            assertThat(started.stream().anyMatch(m -> m != n && reply.endsWith(":" + m.tlsPort() + "\r\n")))
                .as(reply).isTrue();
          }
        }
      }
    }
    RedisAdvancedClusterCommands<String, String> sync = lettuce(started.get(0).tlsPort());
    for (int i = 0; i < 300; i++) {
      sync.set("key-" + i, "v" + i);
    }
    Set<HostAndPort> seeds = Set.of(new HostAndPort("127.0.0.1", started.get(2).tlsPort()));
    try (JedisCluster jedis = new JedisCluster(seeds, DefaultJedisClientConfig.builder().ssl(true)
        .sslSocketFactory(trusting().getSocketFactory()).password(PASSWORD).socketTimeoutMillis(5000).build(), 5,
        new org.apache.commons.pool2.impl.GenericObjectPoolConfig<>())) {
      for (int i = 0; i < 300; i++) {
        assertThat(jedis.get("key-" + i)).isEqualTo("v" + i);
      }
      assertThat(jedis.getClusterNodes().keySet()).containsExactlyInAnyOrderElementsOf(
          started.stream().map(n -> "127.0.0.1:" + n.tlsPort()).toList());
    }
    if (RedisCli.available()) {
      assertThat(RedisCli.run(null, "-c", "--tls", "--cacert", certs.resolve("ca.pem").toString(), "-p",
          Integer.toString(started.get(1).tlsPort()), "-a", PASSWORD, "--no-auth-warning", "GET", "key-7"))
          .contains("v7");
    }
  }

  /** A TLS context that trusts the CA (no client certificate). */
  private SSLContext trusting() throws Exception {
    KeyStore ts = KeyStore.getInstance("PKCS12");
    ts.load(null, null);
    try (InputStream in = Files.newInputStream(certs.resolve("ca.pem"))) {
      ts.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ts);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }

  private static boolean listening(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
      return true;
    } catch (ConnectException e) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }
}

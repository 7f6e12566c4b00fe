package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.testkit.tls.DevCa;
import io.atoll.transport.grpc.security.Role;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;

/**
 * The TLS client port (Redis' tls-port) with certificates of the testkit's development CA: the
 * real redis-cli ({@code --tls --cacert}, with and without a client certificate), Lettuce and
 * Jedis with SSL, a password over TLS, and a three-node cluster whose redirects and CLUSTER SLOTS,
 * SHARDS and NODES name TLS ports to TLS clients, so that Lettuce's and Jedis' cluster clients stay
 * on TLS.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KvTlsPortTest {
  @TempDir
  static Path dir;

  private Path certs;
  private SSLSocketFactory trusting;

  @BeforeAll
  void certificates() throws Exception {
    certs = dir.resolve("certs");
    DevCa ca = DevCa.create("kv-test", Duration.ofDays(1));
    ca.writeCa(certs);
    ca.issue(Role.POD, "kv", List.of()).write(certs, "kv");
    ca.issue(Role.ADMIN, "client", List.of()).write(certs, "client");
    KeyStore ts = KeyStore.getInstance("PKCS12");
    ts.load(null, null);
    try (InputStream in = Files.newInputStream(certs.resolve("ca.pem"))) {
      ts.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ts);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    trusting = ctx.getSocketFactory();
  }

  private KvTls tls(KvTls.ClientCerts mode) {
    return new KvTls(0, certs.resolve("ca.pem"), certs.resolve("kv.pem"), certs.resolve("kv.key"), mode);
  }

  private Wire tlsWire(int port) throws Exception {
    SSLSocket s = (SSLSocket) trusting.createSocket("127.0.0.1", port);
    s.startHandshake();
    return new Wire(s);
  }

  private SslOptions lettuceSsl(boolean clientCert) {
    SslOptions.Builder b = SslOptions.builder().jdkSslProvider().trustManager(certs.resolve("ca.pem").toFile());
    if (clientCert) {
      b.keyManager(certs.resolve("client.pem").toFile(), certs.resolve("client.key").toFile(), null);
    }
    return b.build();
  }

  @Test
  void clientCertificatesRequiredByDefaultAsRedisDoes() throws Exception {
    try (KvServer node = KvServer.start(KvSettings.defaults(0, dir.resolve("required"))
        .withTls(tls(KvTls.ClientCerts.parse("yes"))))) {
      assertThat(node.tlsPort()).isPositive().isNotEqualTo(node.port());
      String port = Integer.toString(node.tlsPort());
      if (RedisCli.available()) {
        assertThat(RedisCli.run(null, "--tls", "--cacert", certs.resolve("ca.pem").toString(), "--cert",
            certs.resolve("client.pem").toString(), "--key", certs.resolve("client.key").toString(), "-p", port, "PING"))
            .contains("PONG");
        assertThat(RedisCli.run(null, "--tls", "--cacert", certs.resolve("ca.pem").toString(), "-p", port, "PING"))
            .doesNotContain("PONG");
        // Plaintext on the TLS port is not RESP.
        assertThat(RedisCli.run(null, "-p", port, "PING")).doesNotContain("PONG");
      }
      RedisClient lettuce = RedisClient.create();
      try {
        lettuce.setOptions(ClientOptions.builder().sslOptions(lettuceSsl(true)).build());
        RedisURI uri = RedisURI.builder().withHost("127.0.0.1").withPort(node.tlsPort()).withSsl(true).build();
        try (StatefulRedisConnection<String, String> c = lettuce.connect(uri)) {
          assertThat(c.sync().ping()).isEqualTo("PONG");
          assertThat(c.sync().clientInfo()).contains("laddr=127.0.0.1:" + node.tlsPort());
        }
      } finally {
        lettuce.shutdown();
      }
    }
  }

  @Test
  void optionalClientCertificatesWithAPasswordForRedisCliLettuceAndJedis() throws Exception {
    try (KvServer node = KvServer.start(KvSettings.defaults(0, dir.resolve("optional")).withPassword("pw")
        .withTls(tls(KvTls.ClientCerts.OPTIONAL)))) {
      try (Wire w = new Wire(node.port())) {
        w.call("AUTH", "pw");
        assertThat(w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")).isEqualTo("+OK\r\n");
      }
      try (Wire w = tlsWire(node.tlsPort())) {
        assertThat(w.call("GET", "k")).isEqualTo("-NOAUTH Authentication required.\r\n");
        assertThat(w.call("AUTH", "pw")).isEqualTo("+OK\r\n");
        assertThat(w.call("SET", "k", "over-tls")).isEqualTo("+OK\r\n");
      }
      if (RedisCli.available()) {
        assertThat(RedisCli.run(null, "--tls", "--cacert", certs.resolve("ca.pem").toString(), "-p",
            Integer.toString(node.tlsPort()), "-a", "pw", "--no-auth-warning", "GET", "k")).contains("over-tls");
      }
      RedisClient lettuce = RedisClient.create();
      try {
        lettuce.setOptions(ClientOptions.builder().sslOptions(lettuceSsl(false)).build());
        RedisURI uri = RedisURI.builder().withHost("127.0.0.1").withPort(node.tlsPort()).withSsl(true)
            .withPassword("pw".toCharArray()).build();
        try (StatefulRedisConnection<String, String> c = lettuce.connect(uri)) {
          assertThat(c.sync().get("k")).isEqualTo("over-tls");
        }
      } finally {
        lettuce.shutdown();
      }
      JedisClientConfig cfg = DefaultJedisClientConfig.builder().ssl(true).sslSocketFactory(trusting).password("pw")
          .build();
      try (Jedis j = new Jedis(new HostAndPort("127.0.0.1", node.tlsPort()), cfg)) {
        assertThat(j.get("k")).isEqualTo("over-tls");
      }
    }
  }

  @Test
  void aClusterAdvertisesItsTlsPortsToTlsClients() throws Exception {
    RedisCli.assume();
    List<KvServer> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        nodes.add(KvServer.start(KvSettings.defaults(0, dir.resolve("cluster-" + i)).withNodeTimeout(2000)
            .withTls(tls(KvTls.ClientCerts.OPTIONAL))));
      }
      List<String> args = new ArrayList<>(List.of("--cluster", "create"));
      nodes.forEach(n -> args.add("127.0.0.1:" + n.port()));
      args.add("--cluster-yes");
      assertThat(RedisCli.run(null, args.toArray(new String[0]))).contains("[OK] All 16384 slots covered.");
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> nodes.stream().allMatch(KvServer::clusterOk));
      KvServer first = nodes.get(0);
      try (Wire plain = new Wire(first.port()); Wire tls = tlsWire(first.tlsPort())) {
        String slotsPlain = plain.call("CLUSTER", "SLOTS");
        String slotsTls = tls.call("CLUSTER", "SLOTS");
        String nodesTls = tls.call("CLUSTER", "NODES");
        String shards = tls.call("CLUSTER", "SHARDS");
        for (KvServer n : nodes) {
          assertThat(slotsPlain).contains(":" + n.port() + "\r\n").doesNotContain(":" + n.tlsPort() + "\r\n");
          assertThat(slotsTls).contains(":" + n.tlsPort() + "\r\n").doesNotContain(":" + n.port() + "\r\n");
          assertThat(nodesTls).contains("127.0.0.1:" + n.tlsPort() + "@" + n.busPort());
          assertThat(shards).contains("$4\r\nport\r\n:" + n.port() + "\r\n$8\r\ntls-port\r\n:" + n.tlsPort() + "\r\n");
        }
        // A key of another node: the redirect names its TLS port over TLS, its plain port otherwise.
        String key = keyNotOn(plain);
        assertThat(tls.call("GET", key)).matches("-MOVED \\d+ 127\\.0\\.0\\.1:(\\d+)\r\n")
            .satisfies(m -> assertThat(nodes.stream().anyMatch(n -> m.endsWith(":" + n.tlsPort() + "\r\n"))).isTrue());
        assertThat(plain.call("GET", key))
            .satisfies(m -> assertThat(nodes.stream().anyMatch(n -> m.endsWith(":" + n.port() + "\r\n"))).isTrue());
      }
      // redis-cli in cluster mode follows the redirects over TLS.
      assertThat(RedisCli.run(null, "-c", "--tls", "--cacert", certs.resolve("ca.pem").toString(), "-p",
          Integer.toString(first.tlsPort()), "SET", "{b}cli", "v")).contains("OK");
      RedisClusterClient lettuce = RedisClusterClient.create(RedisURI.builder().withHost("127.0.0.1")
          .withPort(first.tlsPort()).withSsl(true).build());
      try {
        lettuce.setOptions(ClusterClientOptions.builder().sslOptions(lettuceSsl(false)).build());
        try (StatefulRedisClusterConnection<String, String> c = lettuce.connect()) {
          for (int i = 0; i < 200; i++) {
            c.sync().set("key-" + i, "v" + i);
          }
          assertThat(c.sync().get("{b}cli")).isEqualTo("v");
          Set<Integer> ports = new HashSet<>();
          c.getPartitions().forEach(p -> ports.add(p.getUri().getPort()));
          assertThat(ports).containsExactlyInAnyOrderElementsOf(nodes.stream().map(KvServer::tlsPort).toList());
        }
      } finally {
        lettuce.shutdown();
      }
      Set<HostAndPort> seeds = new HashSet<>();
      seeds.add(new HostAndPort("127.0.0.1", first.tlsPort()));
      try (JedisCluster jedis = new JedisCluster(seeds, DefaultJedisClientConfig.builder().ssl(true)
          .sslSocketFactory(trusting).socketTimeoutMillis(5000).build(), 5,
          new org.apache.commons.pool2.impl.GenericObjectPoolConfig<>())) {
        for (int i = 0; i < 200; i++) {
          assertThat(jedis.get("key-" + i)).isEqualTo("v" + i);
        }
        assertThat(jedis.getClusterNodes().keySet()).containsExactlyInAnyOrderElementsOf(
            nodes.stream().map(n -> "127.0.0.1:" + n.tlsPort()).toList());
      }
    } finally {
      nodes.forEach(KvServer::close);
    }
  }

  @Test
  void aRotatedCertificateIsServedOnNewConnectionsAndABrokenOneKeepsThePrevious() throws Exception {
    Path files = dir.resolve("rotating");
    DevCa ca = DevCa.create("kv-rotate", Duration.ofDays(1));
    ca.writeCa(files);
    DevCa.Issued first = ca.issue(Role.POD, "kv", List.of());
    first.write(files, "kv");
    KvTls rotating = new KvTls(0, files.resolve("ca.pem"), files.resolve("kv.pem"), files.resolve("kv.key"),
        KvTls.ClientCerts.OPTIONAL);
    try (KvServer node = KvServer.start(KvSettings.defaults(0, dir.resolve("rotate")).withTls(rotating))) {
      assertThat(presented(node.tlsPort())).isEqualTo(first.certificate().getSerialNumber());
      try (Wire open = tlsWire(files, node.tlsPort())) { // a connection made before the rotation
        DevCa.Issued second = ca.issue(Role.POD, "kv", List.of());
        second.write(files, "kv"); // both files replaced atomically, as a rotation does
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
            .until(() -> presented(node.tlsPort()).equals(second.certificate().getSerialNumber()));
        assertThat(open.call("PING")).isEqualTo("+PONG\r\n"); // it keeps its session
        if (RedisCli.available()) {
          assertThat(RedisCli.run(null, "--tls", "--cacert", files.resolve("ca.pem").toString(), "-p",
              Integer.toString(node.tlsPort()), "PING")).contains("PONG");
        }

        // A rotation half done: the certificate file is not PEM. The node keeps serving the second one.
        Files.writeString(files.resolve("kv.pem"), "not a certificate");
        long since = System.nanoTime();
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
            .until(() -> System.nanoTime() - since > 2_500_000_000L // past the once-a-second file check
                && presented(node.tlsPort()).equals(second.certificate().getSerialNumber()));
        RedisClient lettuce = RedisClient.create();
        try {
          lettuce.setOptions(ClientOptions.builder().sslOptions(SslOptions.builder().jdkSslProvider()
              .trustManager(files.resolve("ca.pem").toFile()).build()).build());
          try (StatefulRedisConnection<String, String> c = lettuce.connect(RedisURI.builder().withHost("127.0.0.1")
              .withPort(node.tlsPort()).withSsl(true).build())) {
            assertThat(c.sync().ping()).isEqualTo("PONG");
          }
        } finally {
          lettuce.shutdown();
        }
      }
    }
  }

  /** The serial number of the certificate the TLS port presents on a new handshake. */
  private static java.math.BigInteger presented(int port) throws Exception {
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, new javax.net.ssl.TrustManager[] {new javax.net.ssl.X509TrustManager() {
      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType) {}

      @Override
      public java.security.cert.X509Certificate[] getAcceptedIssuers() {
        return new java.security.cert.X509Certificate[0];
      }
    }}, null);
    try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
      s.setSoTimeout(5000);
      s.startHandshake(); // only what the server presents matters here; trust is other tests' subject
      return ((java.security.cert.X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }

  /** A RESP connection over TLS to {@code port}, trusting the CA in {@code files}. */
  private static Wire tlsWire(Path files, int port) throws Exception {
    KeyStore ts = KeyStore.getInstance("PKCS12");
    ts.load(null, null);
    try (InputStream in = Files.newInputStream(files.resolve("ca.pem"))) {
      ts.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ts);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port);
    s.startHandshake();
    return new Wire(s);
  }

  /** A key this connection's node does not own (it answers MOVED for it). */
  private static String keyNotOn(Wire w) throws Exception {
    for (int i = 0; i < 1000; i++) {
      String k = "probe-" + i;
      if (w.call("GET", k).startsWith("-MOVED")) {
        return k;
      }
    }
    throw new AssertionError("every probe key is on this node");
  }
}

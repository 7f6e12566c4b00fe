package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.PodAddress;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.manager.StandbyServer;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
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
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
  private ManagerSettings settings;
  /** The managers' key (a standby taking over shares it, as with --signing-key). */
  private final ConfigSigner signer = ConfigSigner.generate();
  private final List<KvServer> nodes = new ArrayList<>();
  private final List<AutoCloseable> clients = new ArrayList<>();

  @BeforeEach
  void startManager() {
    settings = KvManagers.settings(Duration.ofSeconds(4), Duration.ofMillis(500));
    manager = startManager(0);
  }

  private ShardManager startManager(int port) {
    return KvManagers.start(settings, dir.resolve("manager"), port, signer);
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
    return node(List.of(manager.address()));
  }

  private KvServer node(List<PodAddress> managers) throws IOException {
    int port = KvNodes.freeManagedPorts();
    KvServer n = KvServer.startManaged(KvSettings.defaults(port, dir.resolve("kv-" + port)), KvObserver.NONE,
        managers, WireSecurity.PLAINTEXT, Duration.ofSeconds(10), () -> { });
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
          new String[] {"CLUSTER", "BUMPEPOCH"}, new String[] {"MIGRATE", "127.0.0.1", "1", "k", "0", "10"},
          new String[] {"CLUSTER", "REPLICATE", "0".repeat(40)}, new String[] {"CLUSTER", "FAILOVER"},
          new String[] {"CLUSTER", "ATOLL-PAUSE-WRITES", "1000"})) {
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
  void aHandOffAddressedToAnotherIncarnationOfThisAddressIsRefused() throws Exception {
    KvServer a = node();
    awaitSpread(1);
    // A node restarted at the target's address before the manager declared the old one dead must
    // not take keys the manager will never see it hold.
    try (io.atoll.kv.Wire w = new io.atoll.kv.Wire(a.port())) {
      assertThat(w.call("CLUSTER", "ATOLL-NODE", proof(w))).isEqualTo("+OK\r\n");
      assertThat(w.call("CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", "1", "1", "0", "FRESH", "abc123", "5"))
          .startsWith("-ERR this hand-off is for incarnation abc123 of this address; this node is incarnation ");
    }
  }

  /**
   * What another node of this cluster proves itself with to the node at the other end of {@code w}
   * (asking it for a nonce first).
   */
  private String proof(io.atoll.kv.Wire w) throws IOException {
    return nodeKey().proofFor(myid(w), nonce(w));
  }

  private io.atoll.kv.internal.cluster.NodeKey nodeKey() {
    io.atoll.kv.internal.cluster.NodeKey key = new io.atoll.kv.internal.cluster.NodeKey();
    key.set(signer.kvNodeKey(manager.clusterId().toString()).toByteArray());
    return key;
  }

  private static String myid(io.atoll.kv.Wire w) throws IOException {
    return w.call("CLUSTER", "MYID").split("\r\n")[1];
  }

  /** The challenge the node at the other end of {@code w} answers CLUSTER ATOLL-NODE with. */
  private static String nonce(io.atoll.kv.Wire w) throws IOException {
    String reply = w.call("CLUSTER", "ATOLL-NODE");
    assertThat(reply).startsWith("$32\r\n");
    return reply.split("\r\n")[1];
  }

  @Test
  void aNodeProofServesOneNonceOnOneConnectionForOneNode() throws Exception {
    KvServer a = node();
    KvServer b = node();
    awaitSpread(2);
    String refused = "-NOPERM CLUSTER ATOLL-RETURN-BATCH is sent only by the other nodes of this cluster";
    try (io.atoll.kv.Wire w = new io.atoll.kv.Wire(a.port()); io.atoll.kv.Wire other = new io.atoll.kv.Wire(a.port());
        io.atoll.kv.Wire atB = new io.atoll.kv.Wire(b.port())) {
      String idA = myid(w);
      assertThat(w.call("CLUSTER", "ATOLL-NODE", nodeKey().proofFor(idA, "00")))
          .as("a proof without a challenge asked first")
          .startsWith("-NOPERM no node challenge pending on this connection (expected: CLUSTER ATOLL-NODE without an"
              + " argument first");
      String n1 = nonce(w);
      String n2 = nonce(w);
      assertThat(n2).as("every challenge is fresh").isNotEqualTo(n1);
      assertThat(w.call("CLUSTER", "ATOLL-NODE", nodeKey().proofFor(idA, n1)))
          .as("a proof for a nonce the next challenge replaced").startsWith("-NOPERM wrong node proof for node " + idA);
      String seen = nodeKey().proofFor(idA, nonce(w));
      assertThat(w.call("CLUSTER", "ATOLL-NODE", seen)).isEqualTo("+OK\r\n");
      // Someone who saw that exchange replays the proof: on the same connection, and on another
      // after asking for its own challenge.
      assertThat(w.call("CLUSTER", "ATOLL-NODE", seen)).as("the same nonce twice")
          .startsWith("-NOPERM no node challenge pending on this connection");
      nonce(other);
      assertThat(other.call("CLUSTER", "ATOLL-NODE", seen)).as("a replayed proof")
          .startsWith("-NOPERM wrong node proof for node " + idA);
      assertThat(other.call("CLUSTER", "ATOLL-RETURN-BATCH", "7", "0", "0")).startsWith(refused);
      // A wrong proof uses the nonce up: the right one after it is refused.
      String n3 = nonce(other);
      assertThat(other.call("CLUSTER", "ATOLL-NODE", "00")).startsWith("-NOPERM wrong node proof for node " + idA);
      assertThat(other.call("CLUSTER", "ATOLL-NODE", nodeKey().proofFor(idA, n3)))
          .startsWith("-NOPERM no node challenge pending on this connection");
      // A proof for node a is no proof to node b, even for b's own nonce.
      assertThat(atB.call("CLUSTER", "ATOLL-NODE", nodeKey().proofFor(idA, nonce(atB))))
          .startsWith("-NOPERM wrong node proof for node " + myid(atB));
      assertThat(atB.call("CLUSTER", "ATOLL-RETURN-BATCH", "7", "0", "0")).startsWith(refused);
      assertThat(atB.call("CLUSTER", "ATOLL-NODE", nodeKey().proofFor(myid(atB), nonce(atB)))).isEqualTo("+OK\r\n");
    }
  }

  @Test
  void theHandOffsInternalCommandsAreRefusedToAClientThatIsNotANode() throws Exception {
    KvServer a = node();
    KvServer b = node();
    awaitSpread(2);
    io.atoll.core.ClusterConfig current = manager.config();
    io.atoll.core.PodId target = null;
    io.atoll.core.PodId source = null;
    for (io.atoll.core.PodEntry e : current.pods()) { // the manager knows the nodes by their control ports
      if (e.pod().id().address().port() == a.port() + KvServer.CONTROL_PORT_OFFSET) {
        target = e.pod().id();
      } else if (e.pod().id().address().port() == b.port() + KvServer.CONTROL_PORT_OFFSET) {
        source = e.pod().id();
      }
    }
    assertThat(target).isNotNull();
    assertThat(source).isNotNull();
    try (io.atoll.kv.Wire w = new io.atoll.kv.Wire(a.port())) {
      String key = null;
      for (int i = 0; key == null && i < 1000; i++) {
        if (w.call("SET", "k" + i, "v").equals("+OK\r\n")) { // a client that may run every command
          key = "k" + i;
        }
      }
      assertThat(key).as("a key this node owns").isNotNull();
      String slot = w.call("CLUSTER", "KEYSLOT", key).trim().substring(1);
      // Requests that the handlers would carry out (this node's incarnation, a real source, the
      // current epoch): only the gate stands between them and a wiped or drained slot.
      List<String[]> cmds = List.of(
          new String[] {"CLUSTER", "ATOLL-IMPORTING", source.address().host(), Integer.toString(b.port()),
              Long.toHexString(source.incarnation()), Long.toString(current.epoch()), "FRESH",
              Long.toHexString(target.incarnation()), slot},
          new String[] {"CLUSTER", "ATOLL-RETURN", source.address().host(), Integer.toString(b.port()),
              Long.toHexString(source.incarnation()), "7", slot},
          new String[] {"CLUSTER", "ATOLL-RETURN-BATCH", "7", slot, "0"},
          new String[] {"RESTORE-ASKING", key, "0", "x", "REPLACE"});
      List<String> replies = new ArrayList<>();
      for (String[] cmd : cmds) {
        replies.add(w.call(cmd));
      }
      assertThat(w.call("GET", key)).as("the key is still there").isEqualTo("$1\r\nv\r\n");
      assertThat(w.call("CLUSTER", "COUNTKEYSINSLOT", slot)).isEqualTo(":1\r\n");
      for (int i = 0; i < cmds.size(); i++) {
        String[] cmd = cmds.get(i);
        assertThat(replies.get(i)).as(String.join(" ", cmd))
            .startsWith("-NOPERM " + cmd[0] + (cmd[0].equals("CLUSTER") ? " " + cmd[1] : "")
                + " is sent only by the other nodes of this cluster, in the shard manager's hand-offs (expected:");
      }
      assertThat(w.call("CLUSTER", "ATOLL-NODE", "00")).startsWith("-NOPERM no node challenge pending on this connection");
      nonce(w);
      assertThat(w.call("CLUSTER", "ATOLL-NODE", "00")).startsWith("-NOPERM wrong node proof for node ");
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

  @Test
  void nodesKeepServingWhileTheManagerIsDownForSeveralLeasesAndFollowItWhenItReturns() throws Exception {
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
    int keys = 2000;
    // A client writes and reads back all along: every acknowledged write is remembered, every
    // failure (-CLUSTERDOWN from a fenced node, a wrong value) counted.
    Map<Integer, Long> acked = new ConcurrentHashMap<>();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicLong ops = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    AtomicLong wrongReads = new AtomicLong();
    java.util.concurrent.atomic.AtomicReference<String> lastError = new java.util.concurrent.atomic.AtomicReference<>();
    Thread worker = Thread.ofPlatform().start(() -> {
      long v = 0;
      while (running.get()) {
        int k = (int) (v % keys);
        v++;
        try {
          sync.set("k:" + k, Long.toString(v));
          acked.put(k, v);
          int r = (int) ((v * 7919) % keys);
          Long expected = acked.get(r);
          String got = sync.get("k:" + r);
          if (expected != null && !Long.toString(expected).equals(got)) {
            wrongReads.incrementAndGet();
            lastError.set("k:" + r + " read " + got + ", expected " + expected);
          }
          ops.incrementAndGet();
        } catch (RuntimeException e) {
          acked.remove(k); // outcome unknown: not checked
          errors.incrementAndGet();
          lastError.set(e.toString());
        }
      }
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> ops.get() > 200);
    assertThat(errors.get()).as("errors before the outage (%s)", lastError.get()).isZero();

    // The manager stops (its port refuses connections) for three and a half leases of 4 s.
    int port = manager.address().port();
    long term = manager.term();
    manager.close();
    long before = ops.get();
    await().during(Duration.ofSeconds(14)).atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
      assertThat(errors.get()).as("client errors while the manager is down (%s)", lastError.get()).isZero();
      assertThat(a.clusterOk() && b.clusterOk()).isTrue();
    });
    assertThat(ops.get()).as("operations served while the manager was down").isGreaterThan(before + 500);
    RedisClient plain = RedisClient.create();
    clients.add(plain::shutdown);
    try (StatefulRedisConnection<String, String> c = plain.connect(RedisURI.create("127.0.0.1", a.port()))) {
      assertThat(c.sync().clusterInfo()).contains("atoll_serving:1");
    }

    // It returns on its port with its state: the nodes renew with it (no declared death, same
    // incarnations), and follow it: a node joining now gets its share from them, with the keys.
    manager = startManager(port);
    assertThat(manager.term()).isGreaterThan(term);
    await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
      assertThat(manager.config().activePods()).hasSize(2);
      assertThat(a.clusterOk() && b.clusterOk()).isTrue();
    });
    KvServer c = node();
    awaitSpread(3);
    assertThat(c.keys()).as("keys handed to the node that joined after the outage").isPositive();
    running.set(false);
    worker.join();
    assertThat(wrongReads.get()).as("reads that missed an acknowledged write (%s)", lastError.get()).isZero();
    client.refreshPartitions(); // the client learns the new node (its own refresh may not have run yet)
    for (Map.Entry<Integer, Long> e : acked.entrySet()) {
      assertThat(sync.get("k:" + e.getKey())).as("key k:%s", e.getKey()).isEqualTo(Long.toString(e.getValue()));
    }
    conn.close();
  }

  @Test
  void aNodeToldNotToRideOutAnOutageFencesWhenItsLeaseRunsOutAndServesAgainWhenTheManagerReturns()
      throws Exception {
    int port = KvNodes.freeManagedPorts();
    KvServer a = KvServer.startManaged(KvSettings.defaults(port, dir.resolve("kv-" + port)), KvObserver.NONE,
        List.of(manager.address()), WireSecurity.PLAINTEXT, Duration.ofSeconds(10), () -> { }, false);
    nodes.add(a);
    awaitSpread(1);
    RedisClient client = RedisClient.create();
    clients.add(client::shutdown);
    try (StatefulRedisConnection<String, String> c = client.connect(RedisURI.create("127.0.0.1", a.port()))) {
      c.sync().set("{k}1", "v");
      int managerPort = manager.address().port();
      manager.close();
      await().atMost(Duration.ofSeconds(8)).untilAsserted(() ->
          org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.sync().get("{k}1"))
              .isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("CLUSTERDOWN"));
      manager = startManager(managerPort);
      await().atMost(Duration.ofSeconds(15)).ignoreExceptions()
          .untilAsserted(() -> assertThat(c.sync().get("{k}1")).isEqualTo("v"));
    }
  }

  @Test
  void aNodeKeepsItsLeaseAndSlotsLeaseAfterLeaseAndLeavesWithItsCredential() throws Exception {
    KvServer a = node();
    awaitSpread(1);
    RedisClient client = RedisClient.create();
    clients.add(client::shutdown);
    try (StatefulRedisConnection<String, String> c = client.connect(RedisURI.create("127.0.0.1", a.port()))) {
      c.sync().set("{k}1", "v");
      // Renewals carry the incarnation's credential: the manager keeps the node alive lease after
      // lease (4 s each; without the credential every renewal is refused and it is declared dead
      // within one lease and the margin), and the node keeps serving.
      await().during(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(15)).until(() ->
          manager.config().activePods().size() == 1 && a.ownedSlots() == 16384);
      assertThat(c.sync().get("{k}1")).isEqualTo("v");
      assertThat(c.sync().clusterInfo()).contains("atoll_serving:1");
    }
    KvDeparture d = a.leave(Duration.ofSeconds(10));
    assertThat(d.unregistered()).as("unregistered with its credential").isTrue();
    assertThat(manager.config().activePods()).isEmpty();
  }

  @Test
  void aNodeThatLeavesWithSlotsLeftStopsServingThemBeforeTheManagerCanGiveThemAway() throws Exception {
    KvServer a = node();
    awaitSpread(1);
    RedisClient client = RedisClient.create();
    clients.add(client::shutdown);
    try (StatefulRedisConnection<String, String> c = client.connect(RedisURI.create("127.0.0.1", a.port()))) {
      c.sync().set("{k}1", "v");
      // No time to drain: every slot is still this node's when it unregisters. Once the manager has
      // the Unregister it may give the slots to another node at once, while this node's lease
      // (4 s) would still let it acknowledge writes that the new owner never sees.
      KvDeparture d = a.leave(Duration.ZERO);
      assertThat(d.unregistered()).isTrue();
      assertThat(d.slotsLeft()).isEqualTo(16384);
      assertThat(c.sync().clusterInfo()).contains("atoll_serving:0");
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.sync().set("{k}2", "w"))
          .isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("CLUSTERDOWN");
    }
  }

  @Test
  void theControlPortRefusesUnsignedAndForgedConfigsAndUnassigns() throws Exception {
    KvServer a = node();
    awaitSpread(1);
    ManagedChannel ch = Wire.channel(new PodAddress("127.0.0.1", a.port() + 10000));
    clients.add(() -> Wire.close(ch));
    PodServiceGrpc.PodServiceBlockingStub pod = PodServiceGrpc.newBlockingStub(ch)
        .withDeadlineAfter(5, java.util.concurrent.TimeUnit.SECONDS);
    io.atoll.core.ClusterConfig current = manager.config();
    // A config giving every slot to nobody, unsigned, then signed by a key of someone else's.
    io.atoll.core.ClusterConfig.Builder b = current.toBuilder();
    for (int s = 0; s < 16384; s++) {
      b.claim(s, io.atoll.core.Claim.offline(current.epoch() + 10));
    }
    io.atoll.core.ClusterConfig forged = b.build();
    for (io.atoll.transport.grpc.proto.ConfigBytes bytes : List.of(Wire.bytes(forged),
        ConfigSigner.generate().bytes(forged))) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> pod.pushConfig(bytes))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    }
    // An Unassign ordering slots 0..99 to an address of the forger's choosing, signed by another key.
    List<Integer> shards = java.util.stream.IntStream.rangeClosed(1, 100).boxed().toList();
    UnassignRequest.Builder u = UnassignRequest.newBuilder().addAllShards(shards).setNewEpoch(current.epoch() + 1)
        .setManagerTerm(manager.term() + 1).setClusterId(current.clusterId().toString())
        .setTerminationTimeoutMillis(2000);
    io.atoll.core.PodId forgersNode = new io.atoll.core.PodId(new PodAddress("127.0.0.1", 1 + 10000), 1);
    shards.forEach(x -> u.addTargets(Wire.ref(forgersNode)));
    io.atoll.core.PodId receiver = current.pods().get(0).pod().id();
    for (UnassignRequest r : List.of(u.build(), u.setSignature(ConfigSigner.generate().signUnassign(
        current.clusterId().toString(), manager.term() + 1, current.epoch() + 1, receiver, shards,
        java.util.Collections.nCopies(shards.size(), forgersNode), 2000)).build())) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> pod.unassign(r))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    }
    assertThat(a.ownedSlots()).isEqualTo(16384);
    assertThat(a.clusterOk()).isTrue();
  }

  @Test
  void aNodeFindsTheLeaderThroughAStandbyAndFollowsATakeover() throws Exception {
    PodAddress leader = manager.address();
    StandbyServer standby = StandbyServer.start("127.0.0.1", 0,
        () -> Optional.of(new AssignmentStore.Leader(leader.toString(), manager.term())));
    PodAddress standbyAt = standby.address();
    long term = manager.term();
    KvServer a = node(List.of(standbyAt, leader)); // the standby first: the node must be sent on
    awaitSpread(1);
    assertThat(a.clusterOk()).isTrue();

    // The leader goes; the standby takes over on its own address, with the same key.
    manager.close();
    standby.close();
    manager = startManager(standbyAt.port());
    assertThat(manager.term()).isGreaterThan(term);
    // The node renews with the new leader and keeps its slots; a node joining afterwards gets its
    // share from it: the old node follows the new leader's configs and hand-offs.
    KvServer b = node(List.of(leader, standbyAt));
    awaitSpread(2);
    assertThat(manager.config().activePods()).hasSize(2);
    assertThat(a.keys() + b.keys()).isZero();
  }

  /** A port p with p + 10000 (the control port) free too, both below the ephemeral range. */
  @Test
  void withAPasswordAndTlsPortsHandOffsAuthenticateAndTlsClientsSeeTlsPorts() throws Exception {
    Path certs = dir.resolve("certs");
    io.atoll.testkit.tls.DevCa ca = io.atoll.testkit.tls.DevCa.create("managed", Duration.ofDays(1));
    ca.writeCa(certs);
    ca.issue(io.atoll.transport.grpc.security.Role.POD, "kv", List.of()).write(certs, "kv");
    List<Integer> tlsPorts = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      int port = KvNodes.freeManagedPorts(1);
      KvTls tls = new KvTls(port + 1, certs.resolve("ca.pem"), certs.resolve("kv.pem"), certs.resolve("kv.key"),
          KvTls.ClientCerts.NONE);
      nodes.add(KvServer.startManaged(KvSettings.defaults(port, dir.resolve("kv-" + port)).withPassword("pw")
          .withTls(tls), KvObserver.NONE, List.of(manager.address()), WireSecurity.PLAINTEXT, Duration.ofSeconds(10),
          () -> { }));
      tlsPorts.add(port + 1);
      if (i == 0) {
        awaitSpread(1);
        try (RedisClusterClient c = tlsCluster(port + 1);
            StatefulRedisClusterConnection<String, String> conn = c.connect()) {
          for (int k = 0; k < 500; k++) {
            conn.sync().set("key-" + k, "v" + k);
          }
        }
      }
    }
    awaitSpread(2); // the hand-off to the second node authenticated with the nodes' password
    assertThat(nodes.get(0).keysMoved()).isPositive();
    try (RedisClusterClient c = tlsCluster(tlsPorts.get(1));
        StatefulRedisClusterConnection<String, String> conn = c.connect()) {
      for (int k = 0; k < 500; k++) {
        assertThat(conn.sync().get("key-" + k)).as("key-%d", k).isEqualTo("v" + k);
      }
      java.util.Set<Integer> ports = new java.util.HashSet<>();
      conn.getPartitions().forEach(p -> ports.add(p.getUri().getPort()));
      assertThat(ports).containsExactlyInAnyOrderElementsOf(tlsPorts);
    }
  }

  private RedisClusterClient tlsCluster(int tlsPort) {
    RedisClusterClient c = RedisClusterClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(tlsPort)
        .withSsl(true).withPassword("pw".toCharArray()).build());
    c.setOptions(ClusterClientOptions.builder().sslOptions(io.lettuce.core.SslOptions.builder().jdkSslProvider()
        .trustManager(dir.resolve("certs").resolve("ca.pem").toFile()).build()).build());
    return c;
  }
}

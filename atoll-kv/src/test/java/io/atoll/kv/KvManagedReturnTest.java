package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.Move;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.slots.KeySlots;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.ManagerObserver;
import io.atoll.manager.ManagerSecurity;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.WireSecurity;
import io.lettuce.core.RedisClient;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hand-off that stops part way, then the manager sends the slot elsewhere: a real shard manager
 * whose strategy the test scripts, three managed nodes in one JVM, a Lettuce cluster client
 * writing and reading throughout. The first target runs out of memory part way (its maxmemory
 * refuses RESTORE-ASKING), so some keys of a slot are on it and the rest on the source; the
 * manager then plans the slot to a third node. The source brings the first target's keys back
 * (a return) and hands the slot to the third node with every key.
 */
class KvManagedReturnTest {
  @TempDir
  Path dir;

  private final ConfigSigner signer = ConfigSigner.generate();
  private final Script script = new Script();
  private final List<KvServer> nodes = new ArrayList<>();
  private final List<AutoCloseable> closers = new ArrayList<>();
  private ShardManager manager;

  /** Every shard on {@link #home} unless {@link #plan} names its node (by client port). */
  static final class Script implements AllocationStrategy {
    volatile int home;
    final Map<Integer, Integer> plan = new ConcurrentHashMap<>();

    @Override
    public List<Move> decide(ClusterConfig config, List<Pod> pods, RebalanceLimits limits, RandomGenerator random) {
      Map<Integer, PodId> byPort = new java.util.HashMap<>();
      for (Pod p : pods) {
        byPort.put(p.id().address().port() - 10000, p.id());
      }
      List<Move> moves = new ArrayList<>();
      for (int shard = 1; shard <= config.size(); shard++) {
        PodId owner = config.owner(shard - 1);
        PodId to = byPort.get(plan.getOrDefault(shard - 1, home));
        if (to == null) {
          continue;
        }
        boolean live = owner != null && pods.stream().anyMatch(p -> p.id().equals(owner));
        if (!live) {
          moves.add(new Move(shard, null, to));
        } else if (!owner.equals(to)) {
          moves.add(new Move(shard, owner, to));
        }
      }
      return moves;
    }
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closers) {
      c.close();
    }
    nodes.forEach(KvServer::close);
    if (manager != null) {
      manager.close();
    }
  }

  private void startManager() {
    ManagerSettings settings = ManagerSettings.defaults().withNumberOfShards(16384)
        .withLease(Duration.ofSeconds(4), Duration.ofMillis(500))
        .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(4))
        .withRebalanceIntervals(Duration.ofSeconds(1), Duration.ofMillis(300))
        .withAllocation(RebalanceLimits.UNLIMITED, script);
    manager = ShardManager.start(settings, FileAssignmentStore.open(dir.resolve("manager")), PodHealth.LEASE_ONLY,
        "127.0.0.1", 0, Ticker.SYSTEM, new java.util.Random(1), ManagerObserver.NONE,
        new ManagerSecurity(WireSecurity.PLAINTEXT, signer));
  }

  private KvServer node(long maxMemory) throws IOException {
    int port = KvNodes.freeManagedPorts();
    KvSettings d = KvSettings.defaults(port, dir.resolve("kv-" + port));
    KvSettings s = new KvSettings(d.bind(), d.port(), d.busPort(), d.dataDir(), d.eventLoops(), maxMemory,
        d.maxBulkLength(), d.maxArrayLength(), d.maxInlineLength(), d.queryBufferLimit(), d.outputBufferLimit(),
        d.nodeTimeoutMillis());
    KvServer n = KvServer.startManaged(s, KvObserver.NONE, List.of(manager.address()), WireSecurity.PLAINTEXT,
        Duration.ofSeconds(10), () -> { });
    nodes.add(n);
    return n;
  }

  /** A node with the append-only file (appendfsync always) on {@code port}, its data in {@code data}. */
  private KvServer persistentNode(int port, Path data, long maxMemory) {
    KvSettings d = KvSettings.defaults(port, data);
    KvSettings s = new KvSettings(d.bind(), d.port(), d.busPort(), d.dataDir(), d.eventLoops(), maxMemory,
        d.maxBulkLength(), d.maxArrayLength(), d.maxInlineLength(), d.queryBufferLimit(), d.outputBufferLimit(),
        d.nodeTimeoutMillis(), null, null, new KvPersistence(true, KvPersistence.Fsync.ALWAYS));
    KvServer n = KvServer.startManaged(s, KvObserver.NONE, List.of(manager.address()), WireSecurity.PLAINTEXT,
        Duration.ofSeconds(10), () -> { });
    nodes.add(n);
    return n;
  }

  private StatefulRedisConnection<String, String> direct(KvServer n) {
    RedisClient c = RedisClient.create();
    closers.add(c::shutdown);
    return c.connect(RedisURI.create("127.0.0.1", n.port()));
  }

  private static final String PAD = "v".repeat(1000);

  @Test
  void aSlotWhoseHandOffStoppedPartWayGoesToAnotherNodeWithEveryKey() throws Exception {
    startManager();
    KvServer source = node(0);
    script.home = source.port();
    await().atMost(Duration.ofSeconds(30)).until(() -> source.ownedSlots() == 16384 && source.clusterOk());
    KvServer first = node(64 << 10); // room for a few dozen keys of 1 kB
    KvServer second = node(0);

    List<String> tags = List.of("ret-a", "ret-b", "ret-c");
    int[] slots = tags.stream().mapToInt(KeySlots::slotOf).toArray();
    List<String> keys = CheckedWriter.keys(tags, 100);
    RedisClusterClient cluster = CheckedWriter.client(source.port());
    closers.add(cluster::shutdown);
    StatefulRedisClusterConnection<String, String> conn = cluster.connect();
    conn.setTimeout(Duration.ofSeconds(5));
    // Writes and reads all along: each read must show the last acknowledged write or a later try.
    CheckedWriter writer = new CheckedWriter(conn.sync(), keys, PAD);

    try (StatefulRedisConnection<String, String> s = direct(source);
        StatefulRedisConnection<String, String> f = direct(first);
        StatefulRedisConnection<String, String> t = direct(second)) {
      // The hand-off to the first target stops part way: some keys there, the rest on the source.
      for (int slot : slots) {
        script.plan.put(slot, first.port());
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> java.util.Arrays.stream(slots).anyMatch(slot ->
          f.sync().clusterCountKeysInSlot(slot) > 0 && s.sync().clusterCountKeysInSlot(slot) > 0));
      // The manager sends the slots to the second node instead.
      for (int slot : slots) {
        script.plan.put(slot, second.port());
      }
      await().atMost(Duration.ofSeconds(40)).untilAsserted(() -> {
        for (int slot : slots) {
          assertThat(t.sync().clusterCountKeysInSlot(slot)).as("keys of slot %d on the new owner", slot)
              .isEqualTo(100);
          assertThat(f.sync().clusterCountKeysInSlot(slot)).as("on the first target").isZero();
          assertThat(s.sync().clusterCountKeysInSlot(slot)).as("on the source").isZero();
        }
        assertThat(source.ownedSlots()).isEqualTo(16384 - slots.length);
        assertThat(second.ownedSlots()).isEqualTo(slots.length);
      });
    } finally {
      writer.close();
    }
    writer.stopAndCheck();
    assertThat(writer.acknowledged()).as("writes acknowledged while slots moved").isGreaterThan(keys.size());
    assertThat(first.keys()).as("no key left on the first target").isZero();
  }

  @Test
  void aHandOffThatStoppedPartWayAndIsNotPlannedAgainIsBroughtBackByTheSource() throws Exception {
    startManager();
    KvServer source = node(0);
    script.home = source.port();
    await().atMost(Duration.ofSeconds(30)).until(() -> source.ownedSlots() == 16384 && source.clusterOk());
    KvServer first = node(64 << 10); // room for a few dozen keys of 1 kB
    int slot = KeySlots.slotOf("stall");
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      keys.add("{stall}:" + i);
    }
    try (StatefulRedisConnection<String, String> s = direct(source);
        StatefulRedisConnection<String, String> f = direct(first)) {
      for (String k : keys) {
        s.sync().set(k, k + PAD);
      }
      script.plan.put(slot, first.port());
      await().atMost(Duration.ofSeconds(30)).until(() -> f.sync().clusterCountKeysInSlot(slot) > 0
          && s.sync().clusterCountKeysInSlot(slot) > 0);
      // The manager changes its mind: the slot stays where it is, so it never asks for it again.
      script.plan.remove(slot);
      long split = System.nanoTime();
      await().atMost(Duration.ofSeconds(40)).untilAsserted(() -> {
        assertThat(s.sync().clusterCountKeysInSlot(slot)).as("keys of the slot on the source").isEqualTo(100);
        assertThat(f.sync().clusterCountKeysInSlot(slot)).as("on the first target").isZero();
      });
      assertThat(Duration.ofNanos(System.nanoTime() - split)).as("brought back only once stalled")
          .isGreaterThanOrEqualTo(Duration.ofMillis(io.atoll.kv.internal.managed.ManagedNode.STALLED_MILLIS
              - 1000));
      for (String k : keys) {
        assertThat(s.sync().get(k)).as("%s served by the source alone", k).isEqualTo(k + PAD);
      }
      assertThat(s.sync().clusterNodes()).as("no mark left on the source").doesNotContain("[" + slot + "->-");
    }
  }

  @Test
  void aTargetRestartedPartWayKeepsTheKeysThatReachedItAndTheirImportRecord() throws Exception {
    startManager();
    KvServer source = persistentNode(KvNodes.freeManagedPorts(), dir.resolve("source"), 0);
    script.home = source.port();
    await().atMost(Duration.ofSeconds(30)).until(() -> source.ownedSlots() == 16384 && source.clusterOk());
    int port = KvNodes.freeManagedPorts();
    KvServer first = persistentNode(port, dir.resolve("first"), 64 << 10);
    int slot = KeySlots.slotOf("restart");
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      keys.add("{restart}:" + i);
    }
    try (StatefulRedisConnection<String, String> s = direct(source)) {
      for (String k : keys) {
        s.sync().set(k, k + PAD);
      }
      script.plan.put(slot, first.port());
      try (StatefulRedisConnection<String, String> f = direct(first)) {
        await().atMost(Duration.ofSeconds(30)).until(() -> f.sync().clusterCountKeysInSlot(slot) > 0
            && s.sync().clusterCountKeysInSlot(slot) > 0);
      }
      script.plan.remove(slot);
      long there = first.keys();
      String id = first.nodeId();
      nodes.remove(first);
      first.close(); // to the manager, a crash: no leave

      KvServer back = persistentNode(port, dir.resolve("first"), 64 << 10);
      assertThat(back.nodeId()).isEqualTo(id);
      assertThat(back.keys()).as("the keys that had reached it, kept with their import record").isEqualTo(there);
      try (StatefulRedisConnection<String, String> b = direct(back)) {
        b.sync().asking();
        assertThat(b.sync().get(keys.get(0)) != null || s.sync().get(keys.get(0)) != null).isTrue();
        // The hand-off is not planned again: the source brings the keys back, each found all along.
        await().atMost(Duration.ofSeconds(40)).untilAsserted(() -> {
          assertThat(s.sync().clusterCountKeysInSlot(slot)).as("keys of the slot on the source").isEqualTo(100);
          assertThat(b.sync().clusterCountKeysInSlot(slot)).as("on the restarted target").isZero();
        });
      }
      for (String k : keys) {
        assertThat(s.sync().get(k)).as(k).isEqualTo(k + PAD);
      }
    }
  }

  @Test
  void aFirstTargetThatDiesIsNotWaitedForAndTheSlotGoesOnWithEveryKeyTheSourceHeld() throws Exception {
    startManager();
    KvServer source = node(0);
    script.home = source.port();
    await().atMost(Duration.ofSeconds(30)).until(() -> source.ownedSlots() == 16384 && source.clusterOk());
    KvServer first = node(64 << 10);
    KvServer second = node(0);
    String tag = "dies";
    int slot = KeySlots.slotOf(tag);
    RedisClusterClient cluster = RedisClusterClient.create(RedisURI.create("127.0.0.1", source.port()));
    cluster.setOptions(ClusterClientOptions.builder().maxRedirects(10).topologyRefreshOptions(
        ClusterTopologyRefreshOptions.builder().enableAllAdaptiveRefreshTriggers()
            .enablePeriodicRefresh(Duration.ofMillis(500)).build()).build());
    closers.add(cluster::shutdown);
    RedisAdvancedClusterCommands<String, String> redis = cluster.connect().sync();
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      keys.add("{" + tag + "}:" + i);
      redis.set(keys.get(i), i + ":" + PAD);
    }
    List<String> onFirst;
    try (StatefulRedisConnection<String, String> s = direct(source);
        StatefulRedisConnection<String, String> f = direct(first);
        StatefulRedisConnection<String, String> t = direct(second)) {
      script.plan.put(slot, first.port());
      await().atMost(Duration.ofSeconds(30)).until(() -> f.sync().clusterCountKeysInSlot(slot) > 0
          && s.sync().clusterCountKeysInSlot(slot) > 0);
      // The first target dies; the manager sends the slot to the second node. The source cannot
      // bring the keys back and keeps the slot until the manager declares the first target dead;
      // then the slot is its own again and goes to the second node with the keys it held.
      onFirst = f.sync().clusterGetKeysInSlot(slot, 1000);
      nodes.remove(first);
      first.close();
      script.plan.put(slot, second.port());
      await().atMost(Duration.ofSeconds(40)).untilAsserted(() -> {
        assertThat(t.sync().clusterCountKeysInSlot(slot)).isEqualTo(100 - onFirst.size());
        assertThat(s.sync().clusterCountKeysInSlot(slot)).isZero();
        assertThat(second.ownedSlots()).isEqualTo(1);
      });
    }
    for (int i = 0; i < keys.size(); i++) {
      String v = redis.get(keys.get(i));
      if (onFirst.contains(keys.get(i))) {
        assertThat(v).as("%s died with the first target", keys.get(i)).isNull();
      } else {
        assertThat(v).as(keys.get(i)).isEqualTo(i + ":" + PAD);
      }
    }
  }

  /**
   * Keys imported onto a node from a source that died part way stay there, out of sight; when the
   * slot later reaches that node by a hand-off from the node that took over the dead source's
   * slots, none of them may come back: the new owner never had them, and one it deleted must stay
   * deleted.
   */
  @Test
  void keysLeftOnATargetWhoseSourceDiedDoNotComeBackWhenTheSlotReachesItLater() throws Exception {
    startManager();
    KvServer source = node(0);
    script.home = source.port();
    await().atMost(Duration.ofSeconds(30)).until(() -> source.ownedSlots() == 16384 && source.clusterOk());
    KvServer first = node(64 << 10); // room for a few dozen keys of 1 kB: the hand-off stops part way
    KvServer second = node(0);
    String tag = "left";
    int slot = KeySlots.slotOf(tag);
    List<String> keys = new ArrayList<>();
    try (StatefulRedisConnection<String, String> s = direct(source)) {
      for (int i = 0; i < 100; i++) {
        keys.add("{" + tag + "}:" + i);
        s.sync().set(keys.get(i), i + ":" + PAD);
      }
    }
    try (StatefulRedisConnection<String, String> f = direct(first);
        StatefulRedisConnection<String, String> t = direct(second)) {
      script.plan.put(slot, first.port());
      await().atMost(Duration.ofSeconds(30)).until(() -> f.sync().clusterCountKeysInSlot(slot) > 0);
      List<String> onFirst = f.sync().clusterGetKeysInSlot(slot, 1000);
      // The source dies; once the manager declares it dead, every slot goes to the second node.
      script.home = second.port();
      script.plan.put(slot, second.port());
      nodes.remove(source);
      source.close();
      await().atMost(Duration.ofSeconds(40)).until(() -> second.ownedSlots() == 16384 && second.clusterOk());
      // The new owner writes one of those keys and deletes it again.
      String deleted = onFirst.get(0);
      assertThat(t.sync().set(deleted, "new")).isEqualTo("OK");
      assertThat(t.sync().del(deleted)).isEqualTo(1);
      // Then the slot goes to the first node, by a hand-off from the second.
      script.plan.put(slot, first.port());
      await().atMost(Duration.ofSeconds(40)).until(() -> first.ownedSlots() == 1);
      for (String k : onFirst) {
        assertThat(f.sync().get(k)).as("%s, lost with the dead source, on the slot's new owner", k).isNull();
      }
      assertThat(f.sync().clusterCountKeysInSlot(slot)).isZero();
    }
  }
}

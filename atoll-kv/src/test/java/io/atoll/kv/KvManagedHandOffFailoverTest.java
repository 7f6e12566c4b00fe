package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.PodAddress;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.slots.KeySlots;
import io.atoll.manager.ShardManager;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.WireSecurity;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A primary that dies in the middle of a hand-off, with a replica the manager placed: a real
 * manager ({@code --replicas 1}) whose strategy the test scripts, three managed nodes in one JVM,
 * a Lettuce cluster client writing and reading throughout. The hand-off stops part way (its
 * target's maxmemory refuses the rest), so some keys of each slot are on the target and the rest
 * on the primary, whose deletions of the moved keys reached its replica. The primary then stops
 * as a crash looks to the manager; its replica is promoted. The replica holds the primary's
 * migration marks (they are in the stream), so it sends clients to the target for the keys moved
 * there, and the target keeps them: the dead primary's tombstone names the replica as its heir.
 * The slots are planned back onto the promoted replica, which brings the keys home. Before the
 * marks were replicated, the target cleared the moved keys when the slots went to the replica (a
 * third node to it), and they were lost.
 */
class KvManagedHandOffFailoverTest {
  @TempDir
  Path dir;

  private final ConfigSigner signer = ConfigSigner.generate();
  private final KvManagedReturnTest.Script script = new KvManagedReturnTest.Script();
  private final List<KvServer> nodes = new ArrayList<>();
  private final List<AutoCloseable> closers = new ArrayList<>();
  private ShardManager manager;

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

  private KvServer node(long maxMemory) throws IOException {
    int port = KvNodes.freeManagedPorts();
    KvSettings d = KvSettings.defaults(port, dir.resolve("kv-" + port));
    KvSettings s = new KvSettings(d.bind(), d.port(), d.busPort(), d.dataDir(), d.eventLoops(), maxMemory,
        d.maxBulkLength(), d.maxArrayLength(), d.maxInlineLength(), d.queryBufferLimit(), d.outputBufferLimit(),
        d.nodeTimeoutMillis()).withReplicas(new KvReplicas(1, 2000));
    KvServer n = KvServer.startManaged(s, KvObserver.NONE, List.<PodAddress>of(manager.address()),
        WireSecurity.PLAINTEXT, Duration.ofSeconds(10), () -> { });
    nodes.add(n);
    return n;
  }

  private StatefulRedisConnection<String, String> direct(KvServer n) {
    RedisClient c = RedisClient.create();
    closers.add(c::shutdown);
    return c.connect(RedisURI.create("127.0.0.1", n.port()));
  }

  private static String info(KvServer n) throws IOException {
    try (Wire w = new Wire(n.port())) {
      return w.call("INFO", "replication");
    }
  }

  private static final String PAD = "v".repeat(1000);

  @Test
  void aPrimaryThatDiesPartWayThroughAHandOffLosesNoKeyItsReplicaAndTheTargetHold() throws Exception {
    diePartWay(false);
  }

  /**
   * As above, and then the manager sends the slots to a fourth node (a primary with a replica of its
   * own, a fifth): the promoted replica first
   * brings back what the target holds (a return from the node its primary was handing to), then
   * hands the slots on with every key.
   */
  @Test
  void afterThePrimaryDiedPartWayTheSlotsGoOnToAnotherNodeWithEveryKey() throws Exception {
    diePartWay(true);
  }

  private void diePartWay(boolean thenElsewhere) throws Exception {
    manager = KvManagers.start(KvManagers.settings(Duration.ofSeconds(2), Duration.ofMillis(300))
        .withAllocation(RebalanceLimits.UNLIMITED, script).withKvReplicas(1), dir.resolve("manager"), 0, signer);
    KvServer primary = node(0);
    script.home = primary.port();
    await().atMost(Duration.ofSeconds(30)).until(() -> primary.ownedSlots() == 16384 && primary.clusterOk());
    KvServer replica = node(0);
    await().atMost(Duration.ofSeconds(30)).until(() -> info(primary).contains("state=online"));
    KvServer other = null;
    if (thenElsewhere) {
      // It owns a slot of its own from the start: a primary, never paired as the promoted one's replica.
      KvServer o = node(0);
      script.plan.put(KeySlots.slotOf("elsewhere"), o.port());
      await().atMost(Duration.ofSeconds(30)).until(() -> o.ownedSlots() == 1);
      node(0); // its replica: the target, joining next, is then a primary of its own
      await().atMost(Duration.ofSeconds(30)).until(() -> info(o).contains("state=online"));
      other = o;
    }
    KvServer target = node(64 << 10); // room for a few dozen keys of 1 kB: the hand-off stops part way
    await().atMost(Duration.ofSeconds(30)).until(target::clusterOk);

    List<String> tags = List.of("fo-a", "fo-b", "fo-c");
    int[] slots = tags.stream().mapToInt(KeySlots::slotOf).toArray();
    List<String> keys = CheckedWriter.keys(tags, 100);
    RedisClusterClient cluster = CheckedWriter.client(primary.port());
    closers.add(cluster::shutdown);
    StatefulRedisClusterConnection<String, String> conn = cluster.connect();
    conn.setTimeout(Duration.ofSeconds(3));
    // Each first write acknowledged once the replica holds it; then writes and reads all along.
    CheckedWriter writer = new CheckedWriter(conn.sync(), keys, PAD);

    KvServer end = thenElsewhere ? other : replica;
    try (StatefulRedisConnection<String, String> p = direct(primary);
        StatefulRedisConnection<String, String> t = direct(target);
        StatefulRedisConnection<String, String> e = direct(end)) {
      for (int slot : slots) {
        script.plan.put(slot, target.port());
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> Arrays.stream(slots).anyMatch(slot ->
          t.sync().clusterCountKeysInSlot(slot) > 0 && p.sync().clusterCountKeysInSlot(slot) > 0));
      long onTarget = Arrays.stream(slots).mapToLong(slot -> t.sync().clusterCountKeysInSlot(slot)).sum();

      // The primary dies part way; its replica takes over, and the slots are planned back onto it
      // (or on to the fourth node).
      script.home = replica.port();
      for (int slot : slots) {
        script.plan.put(slot, end.port());
      }
      nodes.remove(primary);
      primary.close(); // to the manager, a crash: no leave, no unregister
      await().atMost(Duration.ofSeconds(20)).until(() -> replica.ownedSlots() >= 16384 - 1 - slots.length);
      if (!thenElsewhere) { // else they may be on their way on already
        assertThat(Arrays.stream(slots).mapToLong(slot -> t.sync().clusterCountKeysInSlot(slot)).sum())
            .as("keys the target holds once the replica took over (%d before)", onTarget).isPositive();
      }

      // The keys the target holds come back (a return), and end where the manager put the slots,
      // with every acknowledged write.
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        for (int slot : slots) {
          assertThat(e.sync().clusterCountKeysInSlot(slot)).as("keys of slot %d where they end", slot).isEqualTo(100);
          assertThat(t.sync().clusterCountKeysInSlot(slot)).as("on the target").isZero();
        }
      });
    } finally {
      writer.close();
    }
    writer.stopAndCheck();
    assertThat(target.keys()).as("no key left on the target").isZero();
  }
}

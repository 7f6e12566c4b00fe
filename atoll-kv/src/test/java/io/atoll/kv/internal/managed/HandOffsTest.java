package io.atoll.kv.internal.managed;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.cluster.Migrator;
import io.atoll.kv.internal.cluster.Nodes;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.SlotStore;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a hand-off releases and what it keeps, on a real slot store and cluster state: the cases
 * decided before any key moves, and a target that cannot be reached. Moves that succeed are
 * {@code KvManagedTest}'s (real nodes).
 */
class HandOffsTest {
  private final Pod me = Nodes.pod("127.0.0.1", 7000, 1, 17000);
  private final SlotStore store = new SlotStore();
  private final ClusterState cluster = new ClusterState(ClusterState.fresh(me), System::currentTimeMillis, v -> { });
  private final ExecutorService workers = Executors.newFixedThreadPool(HandOffs.PARALLEL);
  private final HandOffs handOffs = new HandOffs(store, cluster, new Migrator(store, cluster,
      System::currentTimeMillis), workers, System::currentTimeMillis, System::nanoTime, null, null,
      new io.atoll.kv.internal.cluster.NodeKey(),
      (epoch, nanos) -> cluster.view().config().epoch() >= epoch);

  HandOffsTest() {
    // This node owns every slot (a hand-off moves only slots its config gives it).
    cluster.addSlots(java.util.stream.IntStream.range(0, 16384).toArray());
  }

  @AfterEach
  void stop() {
    workers.shutdownNow();
  }

  private void put(int slot, String key) {
    store.slot(slot).put(new Key(key.getBytes(StandardCharsets.UTF_8)),
        new Entry("v".getBytes(StandardCharsets.UTF_8)));
  }

  /** The manager's name of a node at client port {@code port}. */
  private static PodId managed(int port) {
    return ManagedConfigs.toManager(new PodId(new PodAddress("127.0.0.1", port), 5));
  }

  @Test
  void withoutATargetAnEmptySlotIsReleasedAndOneWithKeysIsKept() {
    put(10, "a");
    // Shard s + 1 is slot s; the manager named no target.
    assertThat(handOffs.run(List.of(10, 11), List.of(), 0, 5000)).containsExactly(10);
    assertThat(store.slot(10).size()).as("nothing moved").isEqualTo(1);
  }

  @Test
  void aHandOffToThisNodeItselfCountsAsNoTarget() {
    put(3, "k");
    PodId self = ManagedConfigs.toManager(me.id());
    assertThat(handOffs.run(List.of(4, 5), List.of(self, self), 0, 5000)).containsExactly(5);
  }

  @Test
  void aStalledHandOffIsTakenBackOnlyOnceIdle() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      port = s.getLocalPort(); // closed: the target cannot be reached
    }
    PodId target = new PodId(new PodAddress("127.0.0.1", port), 5);
    put(21, "left");
    cluster.markMigrating(new int[] {20, 21}, target); // 20: every key on the target, not released
    assertThat(handOffs.returnStalled(0)).as("first sight of the marks starts the clock").isZero();
    assertThat(handOffs.returnStalled(60_000_000_000L)).as("not idle for long enough").isZero();
    assertThat(handOffs.returnStalled(0)).as("both: a slot not released is this node's").isEqualTo(2);
    assertThat(cluster.view().migrating()).as("the unreachable target keeps its marks").containsKeys(20, 21);
  }

  @Test
  void shardsOutsideTheSlotRangeAreIgnored() {
    assertThat(handOffs.run(List.of(0, 16385, -3), List.of(), 0, 5000)).isEmpty();
  }

  @Test
  void aSlotStillMovingToAFirstTargetThatCannotBeReachedIsKeptWithItsMark() throws IOException {
    // A new target gets the slot only after its keys come back from the first one (a return).
    PodId first = ManagedConfigs.toKv(managed(closedPort()));
    cluster.markMigrating(new int[] {20}, first);
    assertThat(handOffs.run(List.of(21), List.of(managed(7002)), 0, 5000)).isEmpty();
    assertThat(cluster.view().migrating()).containsEntry(20, first);
  }

  @Test
  void aTargetThatCannotBeReachedReleasesNothingAndEveryKeyStays() throws IOException {
    int port = closedPort();
    put(30, "x");
    put(31, "y");
    assertThat(handOffs.run(List.of(31, 32, 33), List.of(managed(port), managed(port), managed(port)), 0, 5000))
        .isEmpty();
    assertThat(store.slot(30).size() + store.slot(31).size()).isEqualTo(2);
    assertThat(cluster.view().migrating()).as("no mark without the target's IMPORTING").isEmpty();
    assertThat(handOffs.slotsMoved()).isZero();
  }

  @Test
  void chunksNotStartedWithinHalfTheBudgetAreKeptForTheManagersNextRound() throws IOException {
    int port = closedPort();
    // No budget: no chunk starts (not even the empty slot's), so nothing is reported released.
    assertThat(handOffs.run(List.of(41), List.of(managed(port)), 0, 0)).isEmpty();
  }

  @Test
  void movesPlannedOnAConfigThatHasNotArrivedAreKept() {
    long ahead = cluster.view().config().epoch() + 5;
    // The same empty slot is released under a config as new as the plan (the first test).
    assertThat(handOffs.run(List.of(11), List.of(), ahead, 400)).isEmpty();
  }

  /** A port nothing listens on (bound, then closed). */
  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      return s.getLocalPort();
    }
  }
}

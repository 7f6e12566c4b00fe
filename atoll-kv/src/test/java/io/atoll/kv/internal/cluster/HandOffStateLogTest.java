package io.atoll.kv.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.kv.KvObserver;
import io.atoll.kv.KvPersistence;
import io.atoll.kv.internal.command.Auth;
import io.atoll.kv.internal.command.Clients;
import io.atoll.kv.internal.command.CommandLog;
import io.atoll.kv.internal.command.CommandTable;
import io.atoll.kv.internal.command.Commands;
import io.atoll.kv.internal.command.Dispatcher;
import io.atoll.kv.internal.command.ServerInfo;
import io.atoll.kv.internal.command.Session;
import io.atoll.kv.internal.command.Stats;
import io.atoll.kv.internal.persist.AppendOnlyFile;
import io.atoll.kv.internal.resp.Reply;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a managed node keeps of its hand-offs and returns across a restart, through the real
 * append-only file and the real replay: a slot's import record, a lent batch (out of the slot, not
 * deleted: it may be the only copy until settled), the last returned batch stored, and its
 * migration marks (which a replica mirrors). Each comes back from the increments alone and from a
 * rewritten base.
 */
class HandOffStateLogTest {
  @TempDir
  Path dir;

  private final Pod me = Nodes.pod("127.0.0.1", 7000, 1, 17000);
  private final PodId peer = new PodId(new PodAddress("127.0.0.1", 7001), 0xabcL);
  private final PodId other = new PodId(new PodAddress("127.0.0.1", 7002), 0xdefL);
  private static final int L = io.atoll.core.slots.KeySlots.slotOf("l".getBytes(StandardCharsets.UTF_8));
  private static final int P = io.atoll.core.slots.KeySlots.slotOf("p".getBytes(StandardCharsets.UTF_8));
  private static final int M = io.atoll.core.slots.KeySlots.slotOf("m".getBytes(StandardCharsets.UTF_8));
  private static final int C = io.atoll.core.slots.KeySlots.slotOf("c".getBytes(StandardCharsets.UTF_8));

  /** A node's store over the log in {@link #dir}, loaded. */
  private record Opened(SlotStore store, AppendOnlyFile log) {}

  private Opened open() {
    AppendOnlyFile log = AppendOnlyFile.open(dir, KvPersistence.Fsync.ALWAYS, () -> { });
    SlotStore store = new SlotStore(log);
    log.attach(store);
    ClusterState cluster = new ClusterState(ClusterState.fresh(me), System::currentTimeMillis, v -> { });
    cluster.managed("manager", () -> true);
    ServerInfo info = new ServerInfo(7000, "127.0.0.1", 0, 1 << 20, 1 << 20, 1 << 20, 5000,
        System.currentTimeMillis());
    CommandTable table = Commands.table(store, cluster, Health.MANAGED, (h, p) -> { }, () -> me,
        new Migrator(store, cluster, System::currentTimeMillis), Runnable::run, new Stats(), new Clients(), info,
        Auth.NONE, new NodeKey());
    Dispatcher dispatcher = new Dispatcher(table, store, cluster, new Stats(), System::currentTimeMillis, 0,
        KvObserver.NONE, (CommandLog) log);
    Session replaying = new Session(0, "appendonly", "appendonly", 0, false, true);
    Reply sink = new Reply();
    sink.target(io.netty.buffer.Unpooled.buffer(256));
    log.load(args -> {
      sink.buffer().clear();
      dispatcher.replay(args, replaying, sink);
    });
    return new Opened(store, log);
  }

  private static Key key(String k) {
    return new Key(k.getBytes(StandardCharsets.UTF_8));
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void importRecordsLentBatchesAndReturnedBatchesComeBack(boolean rewritten) {
    Opened first = open();
    Slot lender = first.store().slot(L);
    Slot puller = first.store().slot(P);
    Slot importing = first.store().slot(M);
    synchronized (lender) {
      for (int i = 0; i < 5; i++) {
        lender.put(key("{l}lent" + i), new Entry(("v" + i).getBytes(StandardCharsets.UTF_8)));
      }
      assertThat(lender.lend(System.currentTimeMillis(), 3, 77)).isEqualTo(3);
    }
    synchronized (puller) {
      puller.put(key("{p}back"), new Entry("b".getBytes(StandardCharsets.UTF_8)));
      puller.returned(peer, 41);
    }
    synchronized (importing) {
      importing.imported(peer, 9);
      importing.put(key("{m}arrived"), new Entry("a".getBytes(StandardCharsets.UTF_8)));
    }
    Slot marked = first.store().slot(C);
    synchronized (marked) {
      marked.marks(peer, null);
      marked.marks(peer, other); // the last marks are the ones a restart (or a replica) holds
    }
    synchronized (importing) {
      importing.marks(null, peer);
    }
    assertThat(first.log().awaitLogged(first.log().position())).isTrue();
    if (rewritten) {
      first.log().rewrite();
      await().atMost(Duration.ofSeconds(10)).until(() -> first.log().info().contains("aof_rewrite_in_progress:0")
          && first.log().info().contains("aof_last_bgrewrite_status:ok") && !first.log().info().contains(
          "aof_rewrites:0"));
    }
    first.log().close();

    Opened again = open();
    Slot l = again.store().slot(L);
    Slot p = again.store().slot(P);
    Slot m = again.store().slot(M);
    synchronized (l) {
      assertThat(l.size()).as("keys not lent stay live").isEqualTo(2);
      assertThat(l.lentBatch()).as("the lent batch, still unsettled").isEqualTo(77);
      assertThat(l.lentAll()).hasSize(3);
      for (Key k : l.lentAll().keySet()) {
        assertThat(l.get(k, System.currentTimeMillis())).as("a lent key is not live").isNull();
      }
    }
    synchronized (p) {
      assertThat(p.returnedFrom()).isEqualTo(peer);
      assertThat(p.returnedBatch()).isEqualTo(41);
    }
    synchronized (m) {
      assertThat(m.importedFrom()).isEqualTo(peer);
      assertThat(m.importFloor()).isEqualTo(9);
      assertThat(m.size()).isEqualTo(1);
      assertThat(m.migratingTo()).isNull();
      assertThat(m.importingFrom()).isEqualTo(peer);
    }
    Slot c = again.store().slot(C);
    synchronized (c) {
      assertThat(c.migratingTo()).as("the migration marks of a slot with no key").isEqualTo(peer);
      assertThat(c.importingFrom()).isEqualTo(other);
      c.marks(null, null);
    }
    synchronized (l) {
      assertThat(l.settle(77)).isTrue();
    }
    synchronized (p) {
      p.returned(null, 0);
    }
    assertThat(again.log().awaitLogged(again.log().position())).isTrue();
    again.log().close();

    Opened third = open();
    synchronized (third.store().slot(L)) {
      assertThat(third.store().slot(L).lentBatch()).as("settled: gone for good").isZero();
      assertThat(third.store().slot(L).size()).isEqualTo(2);
    }
    synchronized (third.store().slot(P)) {
      assertThat(third.store().slot(P).returnedFrom()).isNull();
    }
    synchronized (third.store().slot(C)) {
      assertThat(third.store().slot(C).migratingTo()).as("marks dropped: gone for good").isNull();
      assertThat(third.store().slot(C).importingFrom()).isNull();
    }
    third.log().close();
  }

  @Test
  void aSlotClearedWithOnlyALentBatchStaysClearedAfterARestart() {
    Opened first = open();
    Slot s = first.store().slot(C);
    synchronized (s) {
      s.put(key("{c}only"), new Entry("x".getBytes(StandardCharsets.UTF_8)));
      s.lend(System.currentTimeMillis(), 10, 5);
      s.clear(); // no live key left, a lent batch: the clear must be logged all the same
    }
    assertThat(first.log().awaitLogged(first.log().position())).isTrue();
    first.log().close();
    Opened again = open();
    synchronized (again.store().slot(C)) {
      assertThat(again.store().slot(C).lentBatch()).isZero();
      assertThat(again.store().slot(C).size()).isZero();
    }
    again.log().close();
  }
}

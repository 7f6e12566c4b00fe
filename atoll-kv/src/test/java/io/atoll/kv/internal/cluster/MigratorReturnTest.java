package io.atoll.kv.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.PodStatus;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The source's side of a return ({@link Migrator#pullBack}) against a scripted target that speaks
 * the return's protocol over a real socket: what the source stores when a settlement is lost.
 */
class MigratorReturnTest {
  private static final int SLOT = 5;
  private final Pod me = Nodes.pod("127.0.0.1", 7001, 11, 17001);
  private final Pod peer = Nodes.pod("127.0.0.1", 7002, 12, 17002);
  private final SlotStore store = new SlotStore();
  private final ClusterState cluster = new ClusterState(ClusterState.fresh(me), System::currentTimeMillis, v -> { });
  private final Migrator migrator = new Migrator(store, cluster, System::currentTimeMillis);
  private final ServerSocket server;

  MigratorReturnTest() throws IOException {
    server = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
  }

  @AfterEach
  void close() throws IOException {
    server.close();
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aBatchAnsweredAgainAfterALostSettlementIsNotStoredTwice() throws Exception {
    ownSlotMovingToPeer();
    // The target lends batch 7 (key k) until it hears "ack 7"; the first connection is cut just
    // as that settlement is sent, so the target answers batch 7 again on the next one.
    LendingTarget target = new LendingTarget();
    try (RespClient c = new RespClient("127.0.0.1", server.getLocalPort(), 5000)) {
      assertThatThrownBy(() -> migrator.pullBack(c, new int[] {SLOT}, peer.id(), n -> { }))
          .isInstanceOf(IOException.class);
    }
    Slot slot = store.slot(SLOT);
    synchronized (slot) {
      assertThat(slot.get(new Key(b("k")), System.currentTimeMillis())).as("batch 7 came back").isNotNull();
      slot.remove(new Key(b("k"))); // a client deletes k at the source
    }
    try (RespClient c = new RespClient("127.0.0.1", server.getLocalPort(), 5000)) {
      assertThat(migrator.pullBack(c, new int[] {SLOT}, peer.id(), n -> { })).containsExactly(SLOT);
    }
    synchronized (slot) {
      assertThat(slot.get(new Key(b("k")), System.currentTimeMillis())).as("the deleted key stays deleted").isNull();
    }
    assertThat(cluster.view().migrating()).as("the return ended").isEmpty();
    assertThat(cluster.view().importing()).isEmpty();
    server.close();
    target.thread.join(5000);
  }

  /**
   * A scripted first target that lends batch 7 (key k) until it hears "ack 7", then answers [0];
   * the first connection is cut just as that settlement is sent. An ATOLL-IMPORTING that finds
   * batch 7 still lent puts k back live there (as the target did before it refused that).
   */
  private final class LendingTarget {
    final List<String> heard = java.util.Collections.synchronizedList(new ArrayList<>());
    volatile boolean settled;
    volatile boolean liveAgain;
    /** Runs before each batch answered. */
    volatile Runnable beforeBatch = () -> { };
    final Thread thread = Thread.ofPlatform().daemon().start(this::serve);

    private void serve() {
      int connections = 0;
      while (!server.isClosed()) {
        try (Socket s = server.accept()) {
          int n = ++connections;
          InputStream in = new BufferedInputStream(s.getInputStream());
          OutputStream out = s.getOutputStream();
          while (true) {
            List<String> cmd = read(in);
            if (cmd == null) {
              break;
            }
            heard.add(String.join(" ", cmd));
            if (cmd.get(1).equals("ATOLL-RETURN")) {
              out.write(b("+OK\r\n"));
            } else if (cmd.get(1).equals("ATOLL-IMPORTING")) {
              liveAgain |= !settled;
              settled = true;
              out.write(b("+OK\r\n"));
            } else if (cmd.get(4).equals("7") && n == 1) {
              break; // the settlement is lost with the connection
            } else {
              settled |= cmd.get(4).equals("7");
              beforeBatch.run();
              out.write(settled ? bulks(List.of(b("0"))) : bulks(List.of(b("7"), b("k"), b("0"),
                  Dump.dump(new Entry(b("v"))))));
            }
            out.flush();
          }
        } catch (IOException e) {
          // closed
        }
      }
    }
  }

  private void ownSlotMovingToPeer() {
    ClusterConfig config = ClusterConfig.empty(16384).toBuilder().pod(new PodEntry(me, PodStatus.ACTIVE, 1))
        .pod(new PodEntry(peer, PodStatus.ACTIVE, 1)).claim(SLOT, Claim.stable(me.id(), 2)).build();
    assertThat(cluster.adopt(config)).isTrue();
    cluster.markMigrating(new int[] {SLOT}, peer.id());
  }

  @Test
  void aHandOffToTheFirstTargetAfterALostSettlementFinishesTheReturnSoADeletedKeyDoesNotComeBack()
      throws Exception {
    ownSlotMovingToPeer();
    LendingTarget target = new LendingTarget();
    try (RespClient c = new RespClient("127.0.0.1", server.getLocalPort(), 5000)) {
      assertThatThrownBy(() -> migrator.pullBack(c, new int[] {SLOT}, peer.id(), n -> { }))
          .isInstanceOf(IOException.class);
    }
    Slot slot = store.slot(SLOT);
    synchronized (slot) {
      assertThat(slot.remove(new Key(b("k")))).as("batch 7 came back; a client deletes k").isNotNull();
    }
    // The manager plans the slot back to the first target: the move turns forward.
    try (RespClient c = new RespClient("127.0.0.1", server.getLocalPort(), 5000)) {
      migrator.handOff(c, new Migrator.Target("127.0.0.1", server.getLocalPort(), List.of(), 5000, false, true),
          new int[] {SLOT}, peer.id(), n -> { });
    }
    assertThat(target.liveAgain).as("the deleted key is not live again on the target (heard: %s)", target.heard)
        .isFalse();
    assertThat(cluster.view().migrating()).containsEntry(SLOT, peer.id());
    assertThat(cluster.view().importing()).as("the return ended").isEmpty();
    server.close();
    target.thread.join(5000);
  }

  @Test
  void aReturnWhoseMarksWentStoresNothingMore() throws Exception {
    ownSlotMovingToPeer();
    LendingTarget target = new LendingTarget();
    // Before the first batch reaches the source, the manager declares the target dead (though the
    // source still reaches it): the source drops its marks and serves the slot alone, where a
    // client may then write and delete k.
    ClusterConfig dead = ClusterConfig.empty(16384).toBuilder().pod(new PodEntry(me, PodStatus.ACTIVE, 1))
        .pod(new PodEntry(peer, PodStatus.GONE, 3)).claim(SLOT, Claim.stable(me.id(), 3)).build();
    target.beforeBatch = () -> cluster.adopt(dead);
    try (RespClient c = new RespClient("127.0.0.1", server.getLocalPort(), 5000)) {
      assertThatThrownBy(() -> migrator.pullBack(c, new int[] {SLOT}, peer.id(), n -> { }))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("slot " + SLOT);
    }
    assertThat(cluster.view().migrating()).isEmpty();
    assertThat(cluster.view().importing()).isEmpty();
    Slot slot = store.slot(SLOT);
    synchronized (slot) {
      assertThat(slot.get(new Key(b("k")), System.currentTimeMillis())).as("k of a return that ended").isNull();
    }
    server.close();
    target.thread.join(5000);
  }

  private static byte[] bulks(List<byte[]> items) throws IOException {
    java.io.ByteArrayOutputStream o = new java.io.ByteArrayOutputStream();
    o.write(b("*" + items.size() + "\r\n"));
    for (byte[] i : items) {
      o.write(b("$" + i.length + "\r\n"));
      o.write(i);
      o.write(b("\r\n"));
    }
    return o.toByteArray();
  }

  /** One command (an array of bulks), or null at the end of the stream. */
  private static List<String> read(InputStream in) throws IOException {
    String head = line(in);
    if (head == null) {
      return null;
    }
    int n = Integer.parseInt(head.substring(1));
    List<String> args = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int len = Integer.parseInt(line(in).substring(1));
      args.add(new String(in.readNBytes(len), StandardCharsets.UTF_8));
      in.readNBytes(2);
    }
    return args;
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder sb = new StringBuilder();
    int c;
    while ((c = in.read()) != '\r') {
      if (c < 0) {
        return null;
      }
      sb.append((char) c);
    }
    in.read();
    return sb.toString();
  }
}

package io.atoll.kv.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodStatus;
import io.atoll.core.slots.KeySlots;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Held keys and the hand-off token in the corners the late-restore test does not reach: a batch
 * that fails part way other than on its connection, and the fences of a return and of the end of
 * an import. Two real nodes' command sides over real sockets (see {@link TestNode}).
 */
class HeldKeysTest {
  private static final String A = "{held}a";
  private static final String B = "{held}b";
  private static final String C = "{held}c";
  private static final int SLOT = KeySlots.slotOf(A.getBytes(StandardCharsets.UTF_8));
  private final NodeKey key = new NodeKey();
  private TestNode source;
  private TestNode target;

  @BeforeEach
  void start() throws Exception {
    key.set("a node key shared by the test's nodes".getBytes(StandardCharsets.UTF_8));
    source = new TestNode(key, 31);
    target = new TestNode(key, 32);
    TestNode.everySlotOn(source, target);
  }

  @AfterEach
  void stop() {
    source.close();
    target.close();
  }

  private static Jedis client(TestNode n) {
    return new Jedis("127.0.0.1", n.port(), 5000);
  }

  static String call(RespClient c, Object... args) throws IOException {
    List<byte[]> a = new ArrayList<>();
    for (Object x : args) {
      a.add(x instanceof byte[] bytes ? bytes : x.toString().getBytes(StandardCharsets.UTF_8));
    }
    c.send(a);
    c.flush();
    return c.read();
  }

  /** CLUSTER ATOLL-IMPORTING for SLOT from the source, naming {@code token}; the target's reply. */
  private String importing(RespClient c, String mode, long token) throws IOException {
    return call(c, "CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", source.port(), Long.toHexString(source.pod.id()
        .incarnation()), "2", mode, Long.toHexString(target.pod.id().incarnation()), "TOKEN", token, SLOT);
  }

  private static Key k(String s) {
    return new Key(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aBatchWhosePayloadFailsPartWayHoldsTheKeysItAlreadySent() throws Exception {
    // A's and C's values are larger than the client's buffer: A's restore reaches the target
    // whole (C's pushes out its end) before B's payload is built, and that fails.
    String big = "v".repeat(200 << 10);
    try (Jedis j = client(source)) {
      j.set(A, big);
      j.set(C, big);
      j.set(B, "v1");
    }
    Slot slot = source.store.slot(SLOT);
    try (RespClient c = source.connect(target.port(), target, 5000)) {
      assertThat(importing(c, "FRESH", 9)).isNull();
      source.cluster.markMigrating(new int[] {SLOT}, target.pod.id());
      RuntimeException boom = new IllegalStateException("a payload that cannot be built");
      List<byte[]> keys = List.of(A.getBytes(StandardCharsets.UTF_8), C.getBytes(StandardCharsets.UTF_8),
          B.getBytes(StandardCharsets.UTF_8));
      assertThatThrownBy(() -> RestoreBatch.move(c, slot, keys, System::currentTimeMillis, false, true,
          target.pod.id(), e -> {
            if (e.string().length < 100) {
              throw boom;
            }
            return Dump.dump(e);
          }, RestoreBatch.MAX_BYTES)).isSameAs(boom);
      // The restore already on its way applies at the target, unanswered by the source.
      await().atMost(Duration.ofSeconds(10)).until(() -> target.commands.sum() >= 4);
    }
    Slot there = target.store.slot(SLOT);
    synchronized (there) {
      assertThat(there.get(k(A), System.currentTimeMillis())).as("the copy the source could not know of").isNotNull();
    }
    synchronized (slot) {
      assertThat(slot.isHeld(k(A))).as("a restore the target may have applied: held").isTrue();
      assertThat(slot.isHeld(k(C))).as("perhaps sent in part: held").isTrue();
      assertThat(slot.isHeld(k(B))).as("never sent: not held").isFalse();
      assertThat(slot.heldFor()).isEqualTo(target.pod.id());
    }
    try (Jedis j = client(source)) {
      assertThatThrownBy(() -> j.del(A)).isInstanceOf(JedisDataException.class).hasMessageStartingWith("TRYAGAIN");
      assertThat(j.clusterInfo()).contains("atoll_keys_held:2\r\n");
    }
  }

  private static final byte[] PAYLOAD = Dump.dump(new Entry("w".getBytes(StandardCharsets.UTF_8)));

  @Test
  void aConnectionWithoutATokenStoresUntilATokenedAttemptFencesIt() throws Exception {
    try (RespClient old = source.connect(target.port(), target, 5000);
        RespClient next = source.connect(target.port(), target, 5000)) {
      // A source that predates tokens: its restores store, as before.
      assertThat(call(old, "CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", source.port(), Long.toHexString(source.pod.id()
          .incarnation()), "2", "FRESH", Long.toHexString(target.pod.id().incarnation()), SLOT)).isNull();
      assertThat(call(old, "RESTORE-ASKING", A, "0", PAYLOAD, "REPLACE")).isNull();
      // A newer attempt that names a token fences it: its late restore stores nothing.
      assertThat(importing(next, "RESUME", 11)).isNull();
      assertThat(call(old, "RESTORE-ASKING", B, "0", PAYLOAD, "REPLACE")).isEqualTo("ERR restore of hand-off attempt"
          + " without a token refused: slot " + SLOT + " is fenced by attempt 11; nothing stored (expected: a restore"
          + " of the slot's current hand-off attempt)");
      assertThat(call(next, "RESTORE-ASKING", A, "0", PAYLOAD, "REPLACE")).isNull();
    }
    Slot there = target.store.slot(SLOT);
    synchronized (there) {
      assertThat(there.get(k(B), System.currentTimeMillis())).isNull();
    }
  }

  @Test
  void aHandOffToAnotherNodeWhileKeysAreHeldForTheMarkedTargetIsRefusedBeforeThatNodeIsAsked() throws Exception {
    try (Jedis j = client(source)) {
      j.set(A, "v1");
    }
    // A batch to the target timed out: its key is held, and clients are sent to the target.
    source.cluster.markMigrating(new int[] {SLOT}, target.pod.id());
    Slot slot = source.store.slot(SLOT);
    synchronized (slot) {
      slot.hold(target.pod.id(), List.of(k(A)));
    }
    try (TestNode third = new TestNode(key, 33)) {
      ClusterConfig.Builder b = ClusterConfig.empty(KeySlots.SLOT_COUNT).toBuilder()
          .pod(new PodEntry(source.pod, PodStatus.ACTIVE, 1)).pod(new PodEntry(target.pod, PodStatus.ACTIVE, 1))
          .pod(new PodEntry(third.pod, PodStatus.ACTIVE, 1));
      for (int s = 0; s < KeySlots.SLOT_COUNT; s++) {
        b.claim(s, Claim.stable(source.pod.id(), 2));
      }
      third.adopt(b.build());
      try (RespClient c = source.connect(third.port(), third, 5000)) {
        assertThatThrownBy(() -> source.handOff(c, third, SLOT)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("holds keys of a batch to " + target.pod.id());
      }
      assertThat(third.cluster.view().importing()).as("the third node was not asked").isEmpty();
    }
    assertThat(source.cluster.view().migrating().get(SLOT)).isEqualTo(target.pod.id());
  }

  private String returnFrom(RespClient c, String host, int port, long incarnation) throws IOException {
    return call(c, "CLUSTER", "ATOLL-RETURN", host, port, Long.toHexString(incarnation), "77", SLOT);
  }

  @Test
  void aReturnFencesTheAttemptOfASlotItTakesBackSoALateRestoreStoresNothing() throws Exception {
    try (RespClient attempt = source.connect(target.port(), target, 5000);
        RespClient back = source.connect(target.port(), target, 5000)) {
      assertThat(importing(attempt, "FRESH", 13)).isNull();
      assertThat(call(attempt, "RESTORE-ASKING", A, "0", PAYLOAD, "REPLACE")).isNull();
      assertThat(returnFrom(back, "127.0.0.1", source.port(), source.pod.id().incarnation())).isNull();
      // A late copy of A (whose source holds it as its own) would replace the one there.
      byte[] late = Dump.dump(new Entry("late".getBytes(StandardCharsets.UTF_8)));
      assertThat(call(attempt, "RESTORE-ASKING", A, "0", late, "REPLACE")).isEqualTo("ERR restore of hand-off"
          + " attempt 13 refused: slot " + SLOT + " is fenced by no attempt (a return, or the import ended); nothing"
          + " stored (expected: a restore of the slot's current hand-off attempt)");
    }
    Slot there = target.store.slot(SLOT);
    synchronized (there) {
      assertThat(there.get(k(A), System.currentTimeMillis()).string()).asString(StandardCharsets.UTF_8).isEqualTo("w");
    }
  }

  @Test
  void aReturnFromAnotherNodeLeavesTheAttemptOfASlotImportedFromThisOne() throws Exception {
    try (RespClient attempt = source.connect(target.port(), target, 5000);
        RespClient other = source.connect(target.port(), target, 5000)) {
      assertThat(importing(attempt, "FRESH", 14)).isNull();
      // A node this slot is not imported from: the return does not take it back (it has no keys here).
      assertThat(returnFrom(other, "127.0.0.1", source.port() + 1, 0x99)).isNull();
      assertThat(call(attempt, "RESTORE-ASKING", A, "0", PAYLOAD, "REPLACE")).as("the current attempt goes on")
          .isNull();
    }
    assertThat(target.cluster.view().importing().get(SLOT)).isEqualTo(source.pod.id());
  }

  @Test
  void aRestoreThatOnlyDeletesPassesTheMemoryLimitSoAHeldKeyGoneAtTheSourceIsDeletedAtAFullTarget()
      throws Exception {
    try (TestNode full = new TestNode(key, 35, 1)) {
      ClusterConfig.Builder b = ClusterConfig.empty(KeySlots.SLOT_COUNT).toBuilder()
          .pod(new PodEntry(source.pod, PodStatus.ACTIVE, 1)).pod(new PodEntry(full.pod, PodStatus.ACTIVE, 1));
      for (int s = 0; s < KeySlots.SLOT_COUNT; s++) {
        b.claim(s, Claim.stable(source.pod.id(), 2));
      }
      full.adopt(b.build());
      try (RespClient c = source.connect(full.port(), full, 5000)) {
        assertThat(call(c, "CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", source.port(), Long.toHexString(source.pod.id()
            .incarnation()), "2", "FRESH", Long.toHexString(full.pod.id().incarnation()), "TOKEN", 15, SLOT)).isNull();
        // The first key takes the node past its limit of one byte: a late copy, say.
        assertThat(call(c, "RESTORE-ASKING", A, "0", PAYLOAD, "REPLACE")).isNull();
        assertThat(call(c, "RESTORE-ASKING", B, "0", PAYLOAD, "REPLACE")).startsWith("OOM");
        assertThat(call(c, "RESTORE-ASKING", B, Long.toString(System.currentTimeMillis() + 60_000), PAYLOAD, "ABSTTL",
            "REPLACE")).as("a restore that stores is still refused").startsWith("OOM");
        // What the next attempt sends for a held key gone at the source: it only deletes.
        assertThat(call(c, "RESTORE-ASKING", A, "1", PAYLOAD, "ABSTTL", "REPLACE")).isNull();
      }
      Slot there = full.store.slot(SLOT);
      synchronized (there) {
        assertThat(there.get(k(A), System.currentTimeMillis())).isNull();
      }
    }
  }

  @Test
  void theEndOfTheImportRecordFencesTheAttemptSoALateRestoreStoresNothing() throws Exception {
    try (RespClient attempt = source.connect(target.port(), target, 5000)) {
      assertThat(importing(attempt, "FRESH", 16)).isNull();
      assertThat(call(attempt, "RESTORE-ASKING", A, "0", PAYLOAD, "REPLACE")).isNull();
      // The manager places the slot on the target: the import ends (Imports.settle).
      ClusterConfig.Builder b = ClusterConfig.empty(KeySlots.SLOT_COUNT).toBuilder()
          .pod(new PodEntry(source.pod, PodStatus.ACTIVE, 1)).pod(new PodEntry(target.pod, PodStatus.ACTIVE, 1));
      for (int s = 0; s < KeySlots.SLOT_COUNT; s++) {
        b.claim(s, s == SLOT ? Claim.stable(target.pod.id(), 3) : Claim.stable(source.pod.id(), 2));
      }
      target.adopt(b.build());
      byte[] late = Dump.dump(new Entry("late".getBytes(StandardCharsets.UTF_8)));
      assertThat(call(attempt, "RESTORE-ASKING", A, "0", late, "REPLACE")).startsWith("ERR restore of hand-off"
          + " attempt 16 refused: slot " + SLOT + " is fenced by no attempt");
    }
    Slot there = target.store.slot(SLOT);
    synchronized (there) {
      assertThat(there.get(k(A), System.currentTimeMillis()).string()).asString(StandardCharsets.UTF_8).isEqualTo("w");
    }
  }

  @Test
  void aBatchEndsOnceItsPayloadsReachTheCapAndTheKeysLeftOutStayForTheNext() throws Exception {
    try (Jedis j = client(source)) {
      j.set(A, "x".repeat(80));
      j.set(C, "x".repeat(80));
      j.set(B, "x".repeat(80));
    }
    Slot slot = source.store.slot(SLOT);
    try (RespClient c = source.connect(target.port(), target, 5000)) {
      assertThat(importing(c, "FRESH", 17)).isNull();
      source.cluster.markMigrating(new int[] {SLOT}, target.pod.id());
      List<byte[]> keys = List.of(A.getBytes(StandardCharsets.UTF_8), C.getBytes(StandardCharsets.UTF_8),
          B.getBytes(StandardCharsets.UTF_8));
      assertThat(RestoreBatch.move(c, slot, keys, System::currentTimeMillis, false, true, target.pod.id(), Dump::dump,
          100)).as("two keys reach 100 bytes").isEqualTo(2);
    }
    synchronized (slot) {
      assertThat(slot.get(k(A), System.currentTimeMillis())).isNull();
      assertThat(slot.get(k(B), System.currentTimeMillis())).as("left for the next batch").isNotNull();
      assertThat(slot.heldCount()).isZero();
    }
  }
}

package io.atoll.kv.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodStatus;
import io.atoll.core.slots.KeySlots;
import io.atoll.testkit.net.TcpRelay;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A managed hand-off whose RESTORE-ASKING batch is delayed past the source's timeout by a relay
 * that holds the bytes, then delivered: two real nodes' command sides over real sockets (see
 * {@link TestNode}), read and written by a real client that follows {@code -ASK} itself.
 */
class LateRestoreTest {
  private static final String A = "{late}a";
  private static final String B = "{late}b";
  private static final String OTHER = "{elsewhere}x";
  private static final int SLOT = KeySlots.slotOf(A.getBytes(StandardCharsets.UTF_8));
  private final NodeKey key = new NodeKey();
  private TestNode source;
  private TestNode target;
  private TcpRelay relay;

  @BeforeEach
  void start() throws Exception {
    key.set("a node key shared by the test's nodes".getBytes(StandardCharsets.UTF_8));
    source = new TestNode(key, 21);
    target = new TestNode(key, 22);
    TestNode.everySlotOn(source, target);
    relay = TcpRelay.to(target.port());
    try (Jedis j = client(source)) {
      j.set(A, "v1");
      j.set(B, "v1");
      j.set(OTHER, "x1");
    }
  }

  @AfterEach
  void stop() {
    relay.close();
    source.close();
    target.close();
  }

  private static Jedis client(TestNode n) {
    return new Jedis("127.0.0.1", n.port(), 5000);
  }

  /**
   * A first attempt whose restore batch the relay holds until the source's read times out (the
   * source keeps the keys, as it must: it cannot know whether they arrived). Returns the requests
   * the target had answered when the relay held the batch.
   */
  private long firstAttemptTimesOut() throws Exception {
    RespClient late = source.connect(relay.port(), target, 1000);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    long answered;
    Thread attempt;
    io.atoll.kv.internal.store.Slot slot = source.store.slot(SLOT);
    synchronized (slot) {
      // The slot's lock keeps the batch back until the relay holds bytes: the request that marks
      // the slot IMPORTING goes through, the restores do not.
      attempt = Thread.ofPlatform().start(() -> {
        try {
          source.handOff(late, target, SLOT);
        } catch (Throwable t) {
          failed.set(t);
        }
      });
      // Blocked on the slot's lock: the target's answer to that request was read.
      await().atMost(Duration.ofSeconds(10)).until(() -> blockedOn(attempt, slot));
      answered = target.commands.sum();
      relay.mode(TcpRelay.Mode.STALL);
    }
    attempt.join(10_000);
    assertThat(failed.get()).as("the first attempt's batch timed out").isInstanceOf(IOException.class);
    late.close(); // as HandOffs does; the bytes the relay holds still reach the target later
    return answered;
  }

  private static boolean blockedOn(Thread t, Object monitor) {
    java.lang.management.ThreadInfo info = java.lang.management.ManagementFactory.getThreadMXBean()
        .getThreadInfo(t.threadId());
    return info != null && info.getThreadState() == Thread.State.BLOCKED && info.getLockInfo() != null
        && info.getLockInfo().getIdentityHashCode() == System.identityHashCode(monitor);
  }

  /** The relay lets the held batch through; returns once the target answered both restores. */
  private void lateBatchArrives(long answeredBefore) {
    relay.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> target.commands.sum() >= answeredBefore + 2);
  }

  /** What a client finds for {@code k}, following {@code -ASK} from the source as a cluster client does. */
  private static String find(TestNode source, TestNode target, String k) {
    try (Jedis j = client(source)) {
      return j.get(k);
    } catch (JedisDataException e) {
      assertThat(e.getMessage()).startsWith("ASK " + SLOT + " 127.0.0.1:" + target.port());
      try (Jedis t = client(target)) {
        t.asking();
        return t.get(k);
      }
    }
  }

  @Test
  void aRestoreBatchThatArrivesAfterTheSourceGaveUpOnItStoresNothingSoADeletedKeyStaysDeleted() throws Exception {
    firstAttemptTimesOut();
    // The next attempt, on a new connection, fences the first at the target and moves the keys.
    try (RespClient next = source.connect(target.port(), target, 5000)) {
      source.handOff(next, target, SLOT);
    }
    assertThat(find(source, target, A)).isEqualTo("v1");
    // Clients delete A and write B where routing sends them (-ASK to the target).
    try (Jedis t = client(target)) {
      t.asking();
      assertThat(t.del(A)).isEqualTo(1);
      t.asking();
      t.set(B, "v2");
    }
    lateBatchArrives(target.commands.sum());
    assertThat(find(source, target, A)).as("the deleted key is found nowhere").isNull();
    assertThat(find(source, target, B)).as("the acknowledged write stands").isEqualTo("v2");
    assertThat(find(source, target, OTHER)).isEqualTo("x1");
    assertThat(target.errors.sum()).as("both late restores refused").isGreaterThanOrEqualTo(2);
  }

  @Test
  void theKeysOfABatchThatTimedOutAnswerTryAgainUntilTheNextAttemptFencesTheFirstAndSendsThemAgain()
      throws Exception {
    long answered = firstAttemptTimesOut();
    try (Jedis j = client(source)) {
      // A copy may be on the target for -ASK to find: neither side serves them.
      assertThatThrownBy(() -> j.get(A)).isInstanceOf(JedisDataException.class).hasMessageStartingWith("TRYAGAIN");
      assertThatThrownBy(() -> j.del(B)).isInstanceOf(JedisDataException.class).hasMessageStartingWith("TRYAGAIN");
      assertThat(j.get(OTHER)).as("keys of other slots are served").isEqualTo("x1");
    }
    // The late batch arrives before any fence: it applies there, and the source still holds the keys.
    lateBatchArrives(answered);
    try (Jedis j = client(source)) {
      assertThatThrownBy(() -> j.set(A, "v3")).isInstanceOf(JedisDataException.class)
          .hasMessageStartingWith("TRYAGAIN");
    }
    try (RespClient next = source.connect(target.port(), target, 5000)) {
      source.handOff(next, target, SLOT);
    }
    assertThat(find(source, target, A)).as("served again, from the target").isEqualTo("v1");
    assertThat(find(source, target, B)).isEqualTo("v1");
  }

  @Test
  void aHeldKeyThatExpiredAtTheSourceIsDeletedAtTheTargetWhenTheNextAttemptSendsItAgain() throws Exception {
    long answered = firstAttemptTimesOut();
    lateBatchArrives(answered); // no fence yet: the late copies of A and B apply at the target
    io.atoll.kv.internal.store.Slot slot = source.store.slot(SLOT);
    synchronized (slot) {
      // What the expiry timer does to a key whose time ran out at the source while it was held
      // (the target's copy, restored late, would outlive it by the delay).
      assertThat(slot.remove(new io.atoll.kv.internal.store.Key(A.getBytes(StandardCharsets.UTF_8)))).isNotNull();
    }
    try (RespClient next = source.connect(target.port(), target, 5000)) {
      source.handOff(next, target, SLOT);
    }
    assertThat(find(source, target, A)).as("the late copy of a key gone at the source").isNull();
    assertThat(find(source, target, B)).isEqualTo("v1");
  }

  @Test
  void aReturnFromTheTargetKeepsTheSourcesSideOfAHeldKeySoOneGoneThereStaysGone() throws Exception {
    long answered = firstAttemptTimesOut();
    lateBatchArrives(answered); // the late copies of A and B apply at the target before any fence
    io.atoll.kv.internal.store.Slot slot = source.store.slot(SLOT);
    synchronized (slot) {
      assertThat(slot.remove(new io.atoll.kv.internal.store.Key(A.getBytes(StandardCharsets.UTF_8)))).isNotNull();
    }
    // The manager sends the slot elsewhere: the source first brings back what reached the target.
    try (RespClient c = source.connect(target.port(), target, 5000)) {
      assertThat(source.migrator.pullBack(c, new int[] {SLOT}, target.pod.id(), n -> { })).containsExactly(SLOT);
    }
    assertThat(source.cluster.view().migrating()).as("the return ended").isEmpty();
    try (Jedis j = client(source)) {
      assertThat(j.get(A)).as("the late copy of a key gone at the source").isNull();
      assertThat(j.get(B)).isEqualTo("v1");
    }
    io.atoll.kv.internal.store.Slot there = target.store.slot(SLOT);
    synchronized (there) {
      assertThat(there.keys(System.currentTimeMillis(), 10)).as("nothing left on the target").isEmpty();
    }
  }

  @Test
  void aResendThatTimesOutAgainLeavesTheKeysHeldAndNoMoreThanOneBatchOfThem() throws Exception {
    long answered = firstAttemptTimesOut();
    lateBatchArrives(answered); // the late copies apply at the target before any fence
    firstAttemptTimesOut(); // the next attempt's resend of the held keys times out too
    io.atoll.kv.internal.store.Slot slot = source.store.slot(SLOT);
    synchronized (slot) {
      assertThat(slot.heldCount()).as("the same two keys, no more").isEqualTo(2);
      assertThat(slot.isHeld(new io.atoll.kv.internal.store.Key(A.getBytes(StandardCharsets.UTF_8)))).isTrue();
      assertThat(slot.heldFor()).isEqualTo(target.pod.id());
    }
    try (Jedis j = client(source)) {
      assertThatThrownBy(() -> j.del(A)).isInstanceOf(JedisDataException.class).hasMessageStartingWith("TRYAGAIN");
    }
    relay.release();
    try (RespClient next = source.connect(target.port(), target, 5000)) {
      source.handOff(next, target, SLOT);
    }
    assertThat(find(source, target, A)).isEqualTo("v1");
    assertThat(find(source, target, B)).isEqualTo("v1");
  }

  @Test
  void aFlushAtTheSourceKeepsTheHeldKeysHeldSoALateCopyIsDeletedNotFound() throws Exception {
    long answered = firstAttemptTimesOut();
    lateBatchArrives(answered); // the late copies of A and B apply at the target before any fence
    source.store.clear(); // FLUSHALL
    try (Jedis j = client(source)) {
      assertThatThrownBy(() -> j.get(A)).isInstanceOf(JedisDataException.class).hasMessageStartingWith("TRYAGAIN");
    }
    try (RespClient next = source.connect(target.port(), target, 5000)) {
      source.handOff(next, target, SLOT);
    }
    assertThat(find(source, target, A)).as("a flushed key's late copy").isNull();
    assertThat(find(source, target, B)).isNull();
  }

  @Test
  void heldKeysAreServedByTheSourceAgainOnceTheTargetIsDeclaredDead() throws Exception {
    firstAttemptTimesOut();
    ClusterConfig.Builder b = ClusterConfig.empty(KeySlots.SLOT_COUNT).toBuilder()
        .pod(new PodEntry(source.pod, PodStatus.ACTIVE, 1)).pod(new PodEntry(target.pod, PodStatus.GONE, 3));
    for (int s = 0; s < KeySlots.SLOT_COUNT; s++) {
      b.claim(s, Claim.stable(source.pod.id(), 3));
    }
    source.adopt(b.build());
    try (Jedis j = client(source)) {
      assertThat(j.get(A)).isEqualTo("v1");
      assertThat(j.del(B)).isEqualTo(1);
    }
  }

  private static String call(RespClient c, Object... args) throws IOException {
    java.util.List<byte[]> a = new java.util.ArrayList<>();
    for (Object x : args) {
      a.add(x instanceof byte[] bytes ? bytes : x.toString().getBytes(StandardCharsets.UTF_8));
    }
    c.send(a);
    c.flush();
    return c.read();
  }

  @Test
  void theImportingRequestTakesATokenOrNoneAndAFencedAttemptsRestoreIsRefusedSayingWhy() throws Exception {
    String me = Long.toHexString(source.pod.id().incarnation());
    String them = Long.toHexString(target.pod.id().incarnation());
    String port = Integer.toString(source.port());
    String slot = Integer.toString(SLOT);
    byte[] payload = Dump.dump(new io.atoll.kv.internal.store.Entry("w".getBytes(StandardCharsets.UTF_8)));
    try (RespClient c = source.connect(target.port(), target, 5000)) {
      assertThat(call(c, "CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", port, me, "2", "FRESH", them, "TOKEN", "x1", slot))
          .isEqualTo("ERR Invalid hand-off token: x1 (expected: an integer > 0)");
      assertThat(call(c, "CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", port, me, "2", "FRESH", them, "TOKEN", "0", slot))
          .isEqualTo("ERR Invalid hand-off token: 0 (expected: an integer > 0)");
      assertThat(call(c, "CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", port, me, "2", "FRESH", them, "TOKEN", "7"))
          .startsWith("ERR wrong number of arguments for 'cluster|atoll-importing' command (got: 10 with TOKEN;");
      assertThat(target.cluster.view().importing()).as("nothing marked by a refused request").isEmpty();
      // A source that predates tokens: accepted, and its restores are not checked.
      assertThat(call(c, "CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", port, me, "2", "FRESH", them, slot)).isNull();
      assertThat(call(c, "RESTORE-ASKING", "{late}z", "0", payload, "REPLACE")).isNull();
    }
    try (RespClient c = source.connect(target.port(), target, 5000);
        RespClient older = source.connect(target.port(), target, 5000)) {
      assertThat(call(older, "CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", port, me, "2", "RESUME", them, "TOKEN", "5",
          slot)).isNull();
      assertThat(call(older, "RESTORE-ASKING", "{late}y", "0", payload, "REPLACE")).isNull();
      assertThat(call(c, "CLUSTER", "ATOLL-IMPORTING", "127.0.0.1", port, me, "2", "RESUME", them, "TOKEN", "6",
          slot)).isNull();
      assertThat(call(older, "RESTORE-ASKING", "{late}y", "0", payload, "REPLACE")).isEqualTo("ERR restore of"
          + " hand-off attempt 5 refused: slot " + SLOT + " is fenced by attempt 6; nothing stored (expected: a restore"
          + " of the slot's current hand-off attempt)");
      assertThat(call(c, "RESTORE-ASKING", "{late}x", "0", payload, "REPLACE")).isNull();
    }
  }
}

package io.atoll.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.core.FencingToken;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link StateStore} keeps, written once and run against each store (in
 * memory, JDBC on PostgreSQL and H2, Redis): subclass it and say how to open a store over fresh
 * storage, a second client of the same storage (another pod), and how to restart the server.
 *
 * <p>Each promise of the SPI has a test: a conditional write by token and revision, a stale token
 * refused (by epoch and by lease generation), a lost reply read back, a greater token writing
 * without a claim (state carried in a hand-off), and activations of one entity with different
 * tokens racing from several clients, where the newer always wins.
 */
public abstract class StateStoreContract {

  /** The client each test starts with; closed after it. */
  protected StateStore store;
  private final List<StateStore> others = new ArrayList<>();

  /** Opens a store over fresh, empty storage (a new table, key prefix, ...). */
  protected abstract StateStore openFresh() throws Exception;

  /** Opens another client of the storage of {@code store}, as another pod would. */
  protected abstract StateStore openAnother(StateStore store) throws Exception;

  /**
   * Stops the server behind the store and starts it again on the same address and data, returning
   * once it serves again; false if the store has no server (nothing to restart).
   */
  protected abstract boolean restartServer() throws Exception;

  @BeforeEach
  void open() throws Exception {
    store = openFresh();
  }

  @AfterEach
  void close() {
    others.forEach(StateStore::close);
    if (store != null) {
      store.close();
    }
  }

  private StateStore another() throws Exception {
    StateStore s = openAnother(store);
    others.add(s);
    return s;
  }

  private static FencingToken token(long epoch) {
    return new FencingToken(7, epoch, 0);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static StateStoreException.Reason reasonOf(ThrowingCallable call) {
    Throwable t = org.assertj.core.api.Assertions.catchThrowable(call);
    assertThat(t).isInstanceOf(StateStoreException.class);
    return ((StateStoreException) t).reason();
  }

  @Test
  void anEntityNeverSavedIsClaimedWithNothing() throws Exception {
    assertThat(store.claim("counter", "a", token(3))).isEqualTo(StoredState.NONE);
    assertThat(store.claim("counter", "a", token(3))).isEqualTo(StoredState.NONE);
  }

  @Test
  void whatIsSavedIsWhatTheNextClaimReads() throws Exception {
    store.claim("counter", "a", token(3));
    assertThat(store.save("counter", "a", token(3), 0, bytes("one"))).isEqualTo(1);
    assertThat(store.save("counter", "a", token(3), 1, bytes("two"))).isEqualTo(2);
    assertThat(store.claim("counter", "a", token(3))).isEqualTo(new StoredState(2, bytes("two")));
    assertThat(another().claim("counter", "a", token(4))).isEqualTo(new StoredState(2, bytes("two")));
  }

  @Test
  void anEmptyStateIsAStateNotNothing() throws Exception {
    store.save("counter", "a", token(3), 0, new byte[0]);
    assertThat(store.claim("counter", "a", token(3))).isEqualTo(new StoredState(1, new byte[0]));
  }

  @Test
  void everyByteValueAndTheLargestStateRoundTrip() throws Exception {
    byte[] all = new byte[256];
    for (int i = 0; i < all.length; i++) {
      all[i] = (byte) i;
    }
    store.save("counter", "a", token(3), 0, all);
    assertThat(store.claim("counter", "a", token(3)).bytes()).isEqualTo(all);
    byte[] large = new byte[StateStore.MAX_STATE_BYTES];
    new Random(1).nextBytes(large);
    store.save("counter", "a", token(3), 1, large);
    assertThat(store.claim("counter", "a", token(3)).bytes()).isEqualTo(large);
  }

  @Test
  void aStateLargerThanTheBoundOrANegativeRevisionIsRefusedAndChangesNothing() throws Exception {
    store.save("counter", "a", token(3), 0, bytes("kept"));
    assertThatThrownBy(() -> store.save("counter", "a", token(3), 1, new byte[StateStore.MAX_STATE_BYTES + 1]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("counter/a");
    assertThatThrownBy(() -> store.save("counter", "a", token(3), -1, bytes("x")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("revision -1");
    assertThat(store.claim("counter", "a", token(3))).isEqualTo(new StoredState(1, bytes("kept")));
  }

  @Test
  void aSaveAtARevisionOtherThanTheStoredOneIsAConflictAndChangesNothing() throws Exception {
    store.save("counter", "a", token(3), 0, bytes("one"));
    assertThat(reasonOf(() -> store.save("counter", "a", token(3), 0, bytes("again"))))
        .isEqualTo(StateStoreException.Reason.CONFLICT);
    assertThat(reasonOf(() -> store.save("counter", "a", token(3), 5, bytes("ahead"))))
        .isEqualTo(StateStoreException.Reason.CONFLICT);
    assertThat(store.claim("counter", "a", token(3))).isEqualTo(new StoredState(1, bytes("one")));
  }

  @Test
  void onceAGreaterTokenClaimedTheEntityASmallerOneCanNeitherClaimNorWrite() throws Exception {
    store.claim("counter", "a", token(3));
    store.save("counter", "a", token(3), 0, bytes("by 3"));
    another().claim("counter", "a", token(9));
    assertThat(reasonOf(() -> store.save("counter", "a", token(3), 1, bytes("stale"))))
        .isEqualTo(StateStoreException.Reason.FENCED);
    assertThat(reasonOf(() -> store.claim("counter", "a", token(3)))).isEqualTo(StateStoreException.Reason.FENCED);
    assertThat(reasonOf(() -> store.claim("counter", "a", token(8)))).isEqualTo(StateStoreException.Reason.FENCED);
    assertThat(store.claim("counter", "a", token(9))).isEqualTo(new StoredState(1, bytes("by 3")));
  }

  @Test
  void aLaterLeaseGenerationOfTheSameEpochFencesTheEarlierOne() throws Exception {
    FencingToken first = new FencingToken(7, 5, 0);
    FencingToken renewedLate = new FencingToken(7, 5, 1);
    store.claim("counter", "a", first);
    store.claim("counter", "a", renewedLate);
    assertThat(reasonOf(() -> store.save("counter", "a", first, 0, bytes("stale"))))
        .isEqualTo(StateStoreException.Reason.FENCED);
    assertThat(store.save("counter", "a", renewedLate, 0, bytes("new"))).isEqualTo(1);
    // An earlier epoch loses even with a greater generation.
    assertThat(reasonOf(() -> store.claim("counter", "a", new FencingToken(7, 4, 99))))
        .isEqualTo(StateStoreException.Reason.FENCED);
  }

  @Test
  void aGreaterTokenMayWriteWithoutAClaimAndThenFencesTheSmallerOne() throws Exception {
    // A hand-off carried revision 1 to the new owner, which saves without reading the store.
    store.claim("counter", "a", token(3));
    store.save("counter", "a", token(3), 0, bytes("by 3"));
    StateStore newOwner = another();
    assertThat(newOwner.save("counter", "a", token(4), 1, bytes("by 4"))).isEqualTo(2);
    assertThat(reasonOf(() -> store.save("counter", "a", token(3), 2, bytes("stale"))))
        .isEqualTo(StateStoreException.Reason.FENCED);
    assertThat(reasonOf(() -> store.claim("counter", "a", token(3)))).isEqualTo(StateStoreException.Reason.FENCED);
  }

  @Test
  void aSaveWhoseReplyWasLostIsReadBackByAClaimUnderTheSameToken() throws Exception {
    store.claim("counter", "a", token(3));
    store.save("counter", "a", token(3), 0, bytes("one"));
    // The writer did not hear back: it cannot tell whether revision 1 was written. Writing again
    // at revision 0 cannot apply it twice, and a claim under its own token says what is stored.
    assertThat(reasonOf(() -> store.save("counter", "a", token(3), 0, bytes("one"))))
        .isEqualTo(StateStoreException.Reason.CONFLICT);
    assertThat(store.claim("counter", "a", token(3))).isEqualTo(new StoredState(1, bytes("one")));
  }

  @Test
  void entitiesOfDifferentTypesOrIdsAreApartWhateverTheirNamesHold() throws Exception {
    String longId = "中".repeat(1024); // 3 KB of UTF-8: more than a database index takes as a key
    store.save("a", "b:c", token(3), 0, bytes("a / b:c"));
    store.save("a:b", "c", token(3), 0, bytes("a:b / c"));
    store.save("a", "b", token(3), 0, bytes("a / b"));
    store.save("a", longId, token(3), 0, bytes("long"));
    store.save("a", "x\uD800", token(3), 0, bytes("lone surrogate"));
    store.save("a", "x?", token(3), 0, bytes("question mark"));
    store.save("a", "nul\u0000in", token(3), 0, bytes("nul"));
    store.claim("a", "fenced", token(9));
    assertThat(store.claim("a", "b:c", token(3)).bytes()).isEqualTo(bytes("a / b:c"));
    assertThat(store.claim("a:b", "c", token(3)).bytes()).isEqualTo(bytes("a:b / c"));
    assertThat(store.claim("a", "b", token(3)).bytes()).isEqualTo(bytes("a / b"));
    assertThat(store.claim("a", longId, token(3)).bytes()).isEqualTo(bytes("long"));
    assertThat(store.claim("a", "x\uD800", token(3)).bytes()).isEqualTo(bytes("lone surrogate"));
    assertThat(store.claim("a", "x?", token(3)).bytes()).isEqualTo(bytes("question mark"));
    assertThat(store.claim("a", "nul\u0000in", token(3)).bytes()).isEqualTo(bytes("nul"));
    assertThat(store.claim("b", "fenced", token(3))).isEqualTo(StoredState.NONE);
  }

  @Test
  void whatWasSavedOutlivesARestartOfTheServer() throws Exception {
    store.save("counter", "a", token(3), 0, bytes("kept"));
    if (!restartServer()) {
      return; // a store without a server keeps what it holds in this JVM
    }
    // A client may take a moment to reconnect: until then its calls fail as UNAVAILABLE.
    StoredState read = await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
        .ignoreExceptionsMatching(e -> e instanceof StateStoreException s
            && s.reason() == StateStoreException.Reason.UNAVAILABLE)
        .until(() -> store.claim("counter", "a", token(3)), s -> true);
    assertThat(read).isEqualTo(new StoredState(1, bytes("kept")));
    assertThat(reasonOf(() -> store.claim("counter", "a", token(2)))).isEqualTo(StateStoreException.Reason.FENCED);
  }

  /** One successful save in the race: the writer's token and the revision it made. */
  private record Write(FencingToken token, long revision) {}

  @Test
  void activationsWithDifferentTokensRacingOnOneEntityNeverLetAnOlderOneWriteAfterANewer() throws Exception {
    int writers = 4;
    int rounds = 60;
    List<StateStore> clients = new ArrayList<>(List.of(store));
    for (int i = 1; i < writers; i++) {
      clients.add(another());
    }
    List<Write> writes = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Future<Integer>> fenced = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        StateStore client = clients.get(w);
        long epoch = 10 + w;
        Random random = new Random(w);
        fenced.add(pool.submit((Callable<Integer>) () -> {
          start.await();
          int refusals = 0;
          for (int r = 0; r < rounds; r++) {
            FencingToken t = new FencingToken(7, epoch, random.nextInt(3));
            try {
              // An activation: claim, then a few read-modify-writes of a counter.
              StoredState s = client.claim("counter", "raced", t);
              long revision = s.revision();
              long value = s.bytes() == null ? 0 : ByteBuffer.wrap(s.bytes()).getLong();
              for (int i = 0; i < 3; i++) {
                value++;
                revision = client.save("counter", "raced", t, revision,
                    ByteBuffer.allocate(8).putLong(value).array());
                writes.add(new Write(t, revision));
              }
            } catch (StateStoreException e) {
              assertThat(e.reason()).isIn(StateStoreException.Reason.FENCED, StateStoreException.Reason.CONFLICT);
              refusals++;
            }
          }
          return refusals;
        }));
      }
      start.countDown();
      for (Future<Integer> f : fenced) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    List<Write> byRevision = new ArrayList<>(writes);
    byRevision.sort((a, b) -> Long.compare(a.revision, b.revision));
    // Every revision was written exactly once, and no write's token is smaller than an earlier one's.
    for (int i = 0; i < byRevision.size(); i++) {
      assertThat(byRevision.get(i).revision).isEqualTo(i + 1);
      if (i > 0) {
        assertThat(byRevision.get(i).token).isGreaterThanOrEqualTo(byRevision.get(i - 1).token);
      }
    }
    // Each save incremented what it read: the counter equals the number of saves, none lost.
    FencingToken newest = new FencingToken(7, 99, 0);
    StoredState last = store.claim("counter", "raced", newest);
    assertThat(last.revision()).isEqualTo(byRevision.size());
    if (!byRevision.isEmpty()) {
      assertThat(ByteBuffer.wrap(last.bytes()).getLong()).isEqualTo(byRevision.size());
    }
    assertThat(byRevision).isNotEmpty();
  }
}

package io.atoll.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link AssignmentStore} keeps, written once and run against each store
 * (file, Redis, etcd): subclass it and say how to open a fresh store, a second handle on the same
 * storage (another manager), and how to restart the server behind it.
 *
 * <p>Every promise of the SPI has a test here: compare-and-set, a stale term refused, watch order,
 * lease exclusion and expiry, reconnecting after the server restarts, and a state of 16384 slots
 * and 1000 pods.
 */
public abstract class AssignmentStoreContract {

  /** The handle each test starts with; closed after it. */
  protected AssignmentStore store;
  private final List<AssignmentStore> others = new ArrayList<>();
  private final List<AssignmentStore.Watch> watches = new ArrayList<>();

  /** Opens a store over fresh, empty storage (a new directory, key prefix, ...). */
  protected abstract AssignmentStore openFresh() throws Exception;

  /** Opens another handle on the storage of {@code store}, as a second manager would. */
  protected abstract AssignmentStore openAnother(AssignmentStore store) throws Exception;

  /**
   * Stops the server behind the store and starts it again on the same address and data, returning
   * once it serves again. A store without a server does nothing.
   */
  protected abstract void restartServer() throws Exception;

  /**
   * A short lease time to live that this store honours (its granularity, at least): 1 s, so that a
   * holder renewing every quarter of it survives a stall of the test JVM of most of a second.
   */
  protected Duration shortTtl() {
    return Duration.ofSeconds(1);
  }

  /** How long a lease of {@link #shortTtl()} may take to lapse once it is not renewed. */
  protected Duration lapseDeadline() {
    return shortTtl().multipliedBy(3).plusSeconds(3);
  }

  @BeforeEach
  void openStore() throws Exception {
    store = openFresh();
  }

  @AfterEach
  void closeStores() {
    for (AssignmentStore.Watch w : watches) {
      w.close();
    }
    for (AssignmentStore s : others) {
      s.close();
    }
    if (store != null) {
      store.close();
    }
  }

  /** A second handle on the same storage, closed after the test. */
  protected AssignmentStore another() throws Exception {
    AssignmentStore s = openAnother(store);
    others.add(s);
    return s;
  }

  /** A watch on {@code s}, closed after the test. */
  private AssignmentStore.Watch watch(AssignmentStore s, long afterVersion,
      java.util.function.Consumer<AssignmentStore.Stored> onChange) {
    AssignmentStore.Watch w = s.watch(afterVersion, onChange);
    watches.add(w);
    return w;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  // ---------------------------------------------------------------------------------------
  // State and compare-and-set

  @Test
  void aFreshStoreHoldsNothingAndHasNoLeader() {
    assertThat(store.load()).isEmpty();
    assertThat(store.leader()).isEmpty();
  }

  @Test
  void loadReturnsExactlyTheLastSaveWithItsVersionAndTerm() {
    long term = store.tryAcquire("m1", Duration.ofSeconds(30)).orElseThrow().term();
    assertThat(store.save(bytes("one"), term, 0)).isEqualTo(1);
    assertThat(store.save(bytes("two"), term, 1)).isEqualTo(2);
    AssignmentStore.Stored s = store.load().orElseThrow();
    assertThat(s.version()).isEqualTo(2);
    assertThat(s.term()).isEqualTo(term);
    assertThat(s.data()).isEqualTo(bytes("two"));
  }

  @Test
  void aSaveWithAStaleVersionIsRefusedAndChangesNothing() {
    store.save(bytes("one"), 0, 0);
    store.save(bytes("two"), 0, 1);
    assertThatThrownBy(() -> store.save(bytes("stale"), 0, 1))
        .isInstanceOf(StoreConflictException.class)
        .isNotInstanceOf(StaleTermException.class)
        .hasMessageContaining("expected: 1")
        .satisfies(e -> {
          StoreConflictException c = (StoreConflictException) e;
          assertThat(c.expected()).isEqualTo(1);
          assertThat(c.actual()).isEqualTo(2);
        });
    assertThat(store.load().orElseThrow().data()).isEqualTo(bytes("two"));
  }

  @Test
  void concurrentWritersWithTheSameVersionExactlyOneWins() throws Exception {
    store.save(bytes("base"), 0, 0);
    List<AssignmentStore> handles = List.of(store, another());
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Long>> results = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        byte[] data = bytes("writer-" + i);
        AssignmentStore h = handles.get(i % 2);
        Callable<Long> write = () -> {
          try {
            return h.save(data, 0, 1);
          } catch (StoreConflictException e) {
            return -1L;
          }
        };
        results.add(pool.submit(write));
      }
      int winners = 0;
      for (Future<Long> f : results) {
        if (f.get() == 2L) {
          winners++;
        }
      }
      assertThat(winners).isEqualTo(1);
      assertThat(store.load().orElseThrow().version()).isEqualTo(2);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void emptyDataIsAValidState() {
    store.save(new byte[0], 0, 0);
    assertThat(store.load().orElseThrow().data()).isEmpty();
  }

  @Test
  void aStateLargerThanTheLimitIsRefusedWithTheLimitNamed() {
    assertThatThrownBy(() -> store.save(new byte[store.maxBytes() + 1], 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(String.valueOf(store.maxBytes()));
    assertThat(store.load()).isEmpty();
  }

  @Test
  void aSaveSurvivesReopening() throws Exception {
    byte[] big = new byte[1 << 20];
    new Random(7).nextBytes(big);
    store.save(big, 0, 0);
    store.close();
    store = openAnother(store);
    AssignmentStore.Stored s = store.load().orElseThrow();
    assertThat(s.version()).isEqualTo(1);
    assertThat(s.data()).isEqualTo(big);
    assertThat(store.save(bytes("after"), 0, 1)).isEqualTo(2);
  }

  @Test
  void aStateOf16384SlotsAnd1000PodsRoundTrips() {
    ClusterConfig.Builder b = ClusterConfig.empty(16384).toBuilder();
    List<PodId> ids = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      PodId id = new PodId(new PodAddress("10.0." + (i / 250) + "." + (i % 250), 7000 + i % 7), i + 1);
      ids.add(id);
      b.pod(new PodEntry(new Pod(id, PodVersion.of("1." + (i % 3))), PodStatus.ACTIVE, i + 1));
    }
    for (int slot = 0; slot < 16384; slot++) {
      b.claim(slot, Claim.stable(ids.get(slot % 1000), 1000 + slot));
    }
    ClusterConfig config = b.build();
    byte[] data = config.encode();
    long term = store.tryAcquire("m1", Duration.ofSeconds(30)).orElseThrow().term();
    store.save(data, term, 0);
    AssignmentStore.Stored s = store.load().orElseThrow();
    assertThat(s.data()).isEqualTo(data);
    assertThat(ClusterConfig.decode(s.data())).isEqualTo(config);
  }

  // ---------------------------------------------------------------------------------------
  // Terms

  @Test
  void aDeposedWritersSaveIsRefusedAsStaleAndChangesNothing() throws Exception {
    AssignmentStore other = another();
    AssignmentStore.Lease first = store.tryAcquire("m1", Duration.ofSeconds(30)).orElseThrow();
    store.save(bytes("by m1"), first.term(), 0);
    store.release(first);
    AssignmentStore.Lease second = other.tryAcquire("m2", Duration.ofSeconds(30)).orElseThrow();
    assertThat(second.term()).isGreaterThan(first.term());
    assertThatThrownBy(() -> store.save(bytes("late m1"), first.term(), 1))
        .isInstanceOf(StaleTermException.class)
        .hasMessageContaining("term " + first.term() + " is stale")
        .satisfies(e -> assertThat(((StaleTermException) e).currentTerm()).isEqualTo(second.term()));
    assertThat(store.load().orElseThrow().data()).isEqualTo(bytes("by m1"));
    assertThat(other.save(bytes("by m2"), second.term(), 1)).isEqualTo(2);
    assertThat(store.load().orElseThrow().term()).isEqualTo(second.term());
  }

  @Test
  void aTermNeverGrantedIsRefused() {
    long granted = store.tryAcquire("m1", Duration.ofSeconds(30)).orElseThrow().term();
    assertThatThrownBy(() -> store.save(bytes("x"), granted + 1, 0))
        .isInstanceOf(StoreException.class)
        .isNotInstanceOf(StoreConflictException.class)
        .hasMessageContaining("term " + (granted + 1));
    assertThat(store.load()).isEmpty();
  }

  @Test
  void termZeroIsRefusedOnceALeaseWasGranted() {
    store.tryAcquire("m1", Duration.ofSeconds(30)).orElseThrow();
    assertThatThrownBy(() -> store.save(bytes("x"), 0, 0)).isInstanceOf(StaleTermException.class);
  }

  // ---------------------------------------------------------------------------------------
  // Leadership

  /**
   * Whether this store is told of a lapsed or released lease (rather than finding it by polling):
   * then its leader watch must tell the lapse long before a one-minute poll would.
   */
  protected boolean toldOfLeaseChanges() {
    return false;
  }

  /** A leader watch on {@code s} that collects what it is told, closed after the test. */
  private List<Optional<AssignmentStore.Leader>> watchLeader(AssignmentStore s, Duration poll) {
    List<Optional<AssignmentStore.Leader>> told = new CopyOnWriteArrayList<>();
    watches.add(s.watchLeader(poll, told::add));
    return told;
  }

  @Test
  void aLeaderWatchTellsNoLeaderThenEachGrantReleaseAndLapseOnce() throws Exception {
    AssignmentStore other = another();
    List<Optional<AssignmentStore.Leader>> told = watchLeader(store, Duration.ofMillis(50));
    await().atMost(Duration.ofSeconds(5)).until(() -> told.contains(Optional.empty()));
    AssignmentStore.Lease first = other.tryAcquire("m1", Duration.ofSeconds(30)).orElseThrow();
    Optional<AssignmentStore.Leader> m1 = Optional.of(new AssignmentStore.Leader("m1", first.term()));
    await().atMost(Duration.ofSeconds(5)).until(() -> told.contains(m1));
    other.release(first);
    await().atMost(Duration.ofSeconds(5)).until(() -> told.size() >= 3);
    AssignmentStore.Lease second = other.tryAcquire("m2", shortTtl()).orElseThrow(); // never renewed
    Optional<AssignmentStore.Leader> m2 = Optional.of(new AssignmentStore.Leader("m2", second.term()));
    await().atMost(lapseDeadline()).until(() -> told.size() >= 5);
    assertThat(told).as("each change once, in order").containsExactly(Optional.empty(), m1, Optional.empty(), m2,
        Optional.empty());
  }

  @Test
  void aLeaderWatchTellsALapseOrReleaseWithoutWaitingForItsPoll() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(toldOfLeaseChanges(), "this store polls");
    AssignmentStore other = another();
    AssignmentStore.Lease released = other.tryAcquire("m1", Duration.ofSeconds(30)).orElseThrow();
    Duration minute = Duration.ofMinutes(1);
    List<Optional<AssignmentStore.Leader>> told = watchLeader(store, minute);
    await().atMost(Duration.ofSeconds(5)).until(() -> told.contains(
        Optional.of(new AssignmentStore.Leader("m1", released.term()))));
    other.release(released);
    await().atMost(Duration.ofSeconds(5)).until(() -> told.contains(Optional.empty()));

    AssignmentStore.Lease lapsing = other.tryAcquire("m2", shortTtl()).orElseThrow(); // never renewed
    List<Optional<AssignmentStore.Leader>> second = watchLeader(store, minute);
    await().atMost(Duration.ofSeconds(5)).until(() -> second.contains(
        Optional.of(new AssignmentStore.Leader("m2", lapsing.term()))));
    await().atMost(lapseDeadline()).until(() -> second.contains(Optional.empty()));
  }

  @Test
  void aClosedLeaderWatchTellsNothingMoreAndAMalformedPollIsRefused() throws Exception {
    List<Optional<AssignmentStore.Leader>> told = new CopyOnWriteArrayList<>();
    AssignmentStore.Watch w = store.watchLeader(Duration.ofMillis(20), told::add);
    await().atMost(Duration.ofSeconds(5)).until(() -> !told.isEmpty());
    w.close();
    int before = told.size();
    another().tryAcquire("m1", Duration.ofSeconds(30)).orElseThrow();
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> told.size() == before);
    assertThatThrownBy(() -> store.watchLeader(Duration.ZERO, told::add))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: 1 ms..1 min");
  }

  @Test
  void oneLeaderAtATimeAndEveryoneSeesIt() throws Exception {
    AssignmentStore other = another();
    AssignmentStore.Lease lease = store.tryAcquire("127.0.0.1:7070", Duration.ofSeconds(30)).orElseThrow();
    assertThat(lease.term()).isPositive();
    assertThat(other.tryAcquire("127.0.0.1:7071", Duration.ofSeconds(30))).isEmpty();
    assertThat(store.tryAcquire("127.0.0.1:7070", Duration.ofSeconds(30))).isEmpty();
    assertThat(other.leader()).contains(new AssignmentStore.Leader("127.0.0.1:7070", lease.term()));
  }

  @Test
  void aReleasedLeaseCanBeTakenAtOnceUnderAGreaterTerm() throws Exception {
    AssignmentStore other = another();
    AssignmentStore.Lease first = store.tryAcquire("m1", Duration.ofSeconds(30)).orElseThrow();
    store.release(first);
    assertThat(store.leader()).isEmpty();
    AssignmentStore.Lease second = other.tryAcquire("m2", Duration.ofSeconds(30)).orElseThrow();
    assertThat(second.term()).isGreaterThan(first.term());
    assertThat(store.renew(first)).isFalse();
  }

  @Test
  void aLeaseThatIsNotRenewedLapsesAndTheNextGrantHasAGreaterTerm() throws Exception {
    AssignmentStore other = another();
    AssignmentStore.Lease first = store.tryAcquire("m1", shortTtl()).orElseThrow();
    Optional<AssignmentStore.Lease> second = await().atMost(lapseDeadline()).pollInterval(Duration.ofMillis(50))
        .until(() -> other.tryAcquire("m2", shortTtl()), Optional::isPresent);
    assertThat(second.orElseThrow().term()).isGreaterThan(first.term());
    assertThat(other.leader().orElseThrow().holder()).isEqualTo("m2");
    assertThat(store.renew(first)).as("the lapsed lease of a deposed holder").isFalse();
    assertThatThrownBy(() -> store.save(bytes("late"), first.term(), 0)).isInstanceOf(StaleTermException.class);
  }

  @Test
  void aRenewedLeaseKeepsOthersOut() throws Exception {
    AssignmentStore other = another();
    AssignmentStore.Lease lease = store.tryAcquire("m1", shortTtl()).orElseThrow();
    Duration renewEvery = shortTtl().dividedBy(4);
    // For three lease lengths, the holder renews at a quarter of its lease and the other fails.
    await().during(shortTtl().multipliedBy(3)).atMost(shortTtl().multipliedBy(3).plusSeconds(5))
        .pollInterval(renewEvery)
        .until(() -> store.renew(lease) && other.tryAcquire("m2", shortTtl()).isEmpty());
    assertThat(other.leader().orElseThrow().term()).isEqualTo(lease.term());
  }

  @Test
  void aLapsedLeaseNobodyTookIsRenewedUnderTheSameTerm() {
    AssignmentStore.Lease lease = store.tryAcquire("m1", shortTtl()).orElseThrow();
    await().atMost(lapseDeadline()).pollInterval(Duration.ofMillis(50)).until(() -> store.leader().isEmpty());
    assertThat(store.renew(lease)).isTrue();
    assertThat(store.leader()).contains(new AssignmentStore.Leader("m1", lease.term()));
    assertThat(store.save(bytes("still m1"), lease.term(), 0)).isEqualTo(1);
  }

  @Test
  void malformedLeaseArgumentsAreRefusedWithTheExpectedForm() {
    assertThatThrownBy(() -> store.tryAcquire("", Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: 1..255 characters");
    assertThatThrownBy(() -> store.tryAcquire("a\nb", Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("line break");
    assertThatThrownBy(() -> store.tryAcquire("m", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lease ttl");
    assertThat(store.leader()).isEmpty();
  }

  // ---------------------------------------------------------------------------------------
  // Watch

  @Test
  void aWatchDeliversNewerStatesInVersionOrderEndingWithTheLatest() throws Exception {
    AssignmentStore other = another();
    List<AssignmentStore.Stored> seen = new CopyOnWriteArrayList<>();
    watch(other, 0, seen::add);
    for (int v = 0; v < 50; v++) {
      store.save(bytes("v" + (v + 1)), 0, v);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> !seen.isEmpty() && seen.getLast().version() == 50);
    List<Long> versions = seen.stream().map(AssignmentStore.Stored::version).toList();
    assertThat(versions).isSorted().doesNotHaveDuplicates();
    assertThat(seen.getLast().data()).isEqualTo(bytes("v50"));
    for (AssignmentStore.Stored s : seen) {
      assertThat(s.data()).as("version %d", s.version()).isEqualTo(bytes("v" + s.version()));
    }
  }

  @Test
  void aWatchStartsWithTheCurrentStateWhenItIsNewerThanTheCallersAndNotOtherwise() throws Exception {
    store.save(bytes("v1"), 0, 0);
    store.save(bytes("v2"), 0, 1);
    List<AssignmentStore.Stored> behind = new CopyOnWriteArrayList<>();
    List<AssignmentStore.Stored> current = new CopyOnWriteArrayList<>();
    watch(store, 1, behind::add);
    watch(store, 2, current::add);
    await().atMost(Duration.ofSeconds(10)).until(() -> !behind.isEmpty());
    assertThat(behind.getFirst().version()).isEqualTo(2);
    store.save(bytes("v3"), 0, 2);
    await().atMost(Duration.ofSeconds(10)).until(() -> !current.isEmpty());
    assertThat(current).extracting(AssignmentStore.Stored::version).containsExactly(3L);
  }

  @Test
  void aClosedWatchDeliversNothingMore() throws Exception {
    List<AssignmentStore.Stored> seen = new CopyOnWriteArrayList<>();
    AssignmentStore.Watch w = store.watch(0, seen::add);
    store.save(bytes("v1"), 0, 0);
    await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() == 1);
    w.close();
    store.save(bytes("v2"), 0, 1);
    // A second watch sees v2; the closed one must not have by then.
    List<AssignmentStore.Stored> probe = new CopyOnWriteArrayList<>();
    watch(store, 1, probe::add);
    await().atMost(Duration.ofSeconds(10)).until(() -> !probe.isEmpty());
    assertThat(seen).extracting(AssignmentStore.Stored::version).containsExactly(1L);
  }

  // ---------------------------------------------------------------------------------------
  // Server restarts

  @Test
  void afterTheServerRestartsTheStateIsThereAndTheSameHandlesReadWriteAndWatch() throws Exception {
    AssignmentStore.Lease lease = store.tryAcquire("m1", Duration.ofSeconds(60)).orElseThrow();
    store.save(bytes("before"), lease.term(), 0);
    List<AssignmentStore.Stored> seen = new CopyOnWriteArrayList<>();
    watch(another(), 1, seen::add);
    restartServer();
    AssignmentStore.Stored s = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
        .ignoreExceptionsInstanceOf(StoreException.class)
        .until(() -> store.load().orElseThrow(), x -> true);
    assertThat(s.version()).isEqualTo(1);
    assertThat(s.data()).isEqualTo(bytes("before"));
    assertThat(await().atMost(Duration.ofSeconds(30)).ignoreExceptionsInstanceOf(StoreException.class)
        .until(() -> store.renew(lease), x -> true)).isTrue();
    assertThat(store.save(bytes("after"), lease.term(), 1)).isEqualTo(2);
    await().atMost(Duration.ofSeconds(30)).until(() -> !seen.isEmpty() && seen.getLast().version() == 2);
    assertThat(seen.getLast().data()).isEqualTo(bytes("after"));
  }
}

package io.atoll.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The SPI's default leader watch (a poll of {@code leader()}, for stores that are not told of
 * changes) and the {@link LeaderWatch} delivery every store shares: each answer once, an outage
 * once, nothing after close.
 */
class LeaderWatchTest {

  /** A store whose only working part is {@code leader()}: what {@link #now} holds, or its failure. */
  private static final class LeaderOnly implements AssignmentStore {
    final AtomicReference<Object> now = new AtomicReference<>(Optional.empty());
    final AtomicInteger reads = new AtomicInteger();

    @Override
    @SuppressWarnings("unchecked")
    public Optional<Leader> leader() {
      reads.incrementAndGet();
      Object o = now.get();
      if (o instanceof StoreException e) {
        throw e;
      }
      return (Optional<Leader>) o;
    }

    @Override
    public Optional<Stored> load() {
      throw new UnsupportedOperationException();
    }

    @Override
    public long save(byte[] data, long term, long expectedVersion) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Watch watch(long afterVersion, Consumer<Stored> onChange) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Optional<Lease> tryAcquire(String holder, Duration ttl) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean renew(Lease lease) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void release(Lease lease) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {}
  }

  /** Everything a listener is told, in order: leaders, and "unreachable" as a string. */
  private static final class Told implements AssignmentStore.LeaderListener {
    final List<Object> all = new CopyOnWriteArrayList<>();

    @Override
    public void leader(Optional<AssignmentStore.Leader> leader) {
      all.add(leader);
    }

    @Override
    public void unreachable(StoreException e) {
      all.add("unreachable: " + e.getMessage());
    }
  }

  private static Optional<AssignmentStore.Leader> leader(String holder, long term) {
    return Optional.of(new AssignmentStore.Leader(holder, term));
  }

  @Test
  void aStoreWithoutALimitOfItsOwnAcceptsStatesOf64MiB() {
    assertThat(new LeaderOnly().maxBytes()).isEqualTo(AssignmentStore.MAX_BYTES).isEqualTo(64 << 20);
  }

  @Test
  void theDefaultPollsAndTellsEachChangeOnceAndAnOutageOnce() {
    LeaderOnly store = new LeaderOnly();
    Told told = new Told();
    try (AssignmentStore.Watch w = store.watchLeader(Duration.ofMillis(5), told)) {
      await().atMost(Duration.ofSeconds(5)).until(() -> store.reads.get() >= 5);
      store.now.set(leader("a:1", 1));
      await().atMost(Duration.ofSeconds(5)).until(() -> told.all.size() == 2);
      store.now.set(new StoreException("connection refused"));
      await().atMost(Duration.ofSeconds(5)).until(() -> told.all.size() == 3);
      int reads = store.reads.get();
      await().atMost(Duration.ofSeconds(5)).until(() -> store.reads.get() >= reads + 5); // still failing
      store.now.set(leader("a:1", 1));
      await().atMost(Duration.ofSeconds(5)).until(() -> told.all.size() == 4);
      store.now.set(Optional.empty());
      await().atMost(Duration.ofSeconds(5)).until(() -> told.all.size() == 5);
      assertThat(told.all).containsExactly(Optional.empty(), leader("a:1", 1), "unreachable: connection refused",
          leader("a:1", 1), Optional.empty());
    }
  }

  @Test
  void nothingIsToldAfterCloseAndAThrowingListenerDoesNotStopTheWatch() {
    LeaderOnly store = new LeaderOnly();
    List<Object> told = new CopyOnWriteArrayList<>();
    AssignmentStore.Watch w = store.watchLeader(Duration.ofMillis(5), l -> {
      told.add(l);
      throw new IllegalStateException("a listener bug");
    });
    await().atMost(Duration.ofSeconds(5)).until(() -> told.size() == 1);
    store.now.set(leader("b:2", 2));
    await().atMost(Duration.ofSeconds(5)).until(() -> told.size() == 2);
    w.close();
    w.close(); // idempotent
    store.now.set(Optional.empty());
    int reads = store.reads.get();
    await().during(Duration.ofMillis(100)).atMost(Duration.ofSeconds(2)).until(() -> store.reads.get() == reads);
    assertThat(told).hasSize(2);
  }

  @Test
  void closeDoesNotWaitForAStoreReadUnderWayAndThatReadTellsNothing() throws Exception {
    java.util.concurrent.CountDownLatch reading = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    AtomicInteger reads = new AtomicInteger();
    Told told = new Told();
    LeaderWatch w = new LeaderWatch(() -> {
      if (reads.incrementAndGet() == 2) { // the second read hangs, as a call to a store that went away
        reading.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return leader("late:1", 1);
      }
      return Optional.empty();
    }, told, () -> false, e -> { });
    Thread first = Thread.ofPlatform().start(w::check);
    first.join(5000);
    Thread hung = Thread.ofPlatform().start(w::check);
    assertThat(reading.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    Thread closer = Thread.ofPlatform().start(w::close);
    closer.join(5000);
    assertThat(closer.isAlive()).as("close waited behind the read").isFalse();
    release.countDown();
    hung.join(5000);
    assertThat(told.all).containsExactly(Optional.empty()); // the late answer came after close
  }

  @Test
  void aPollOutsideOneMillisecondToOneMinuteIsRefused() {
    LeaderOnly store = new LeaderOnly();
    for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofNanos(999_999), Duration.ofMinutes(2), null}) {
      assertThatThrownBy(() -> store.watchLeader(bad, new Told())).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("expected: 1 ms..1 min");
    }
  }
}

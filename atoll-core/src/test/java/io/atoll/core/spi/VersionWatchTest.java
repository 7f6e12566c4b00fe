package io.atoll.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The watch delivery every store shares: newer versions only, in order, nothing after close. */
class VersionWatchTest {

  private final AtomicReference<Optional<AssignmentStore.Stored>> stored = new AtomicReference<>(Optional.empty());
  private final List<Long> delivered = new ArrayList<>();
  private final List<Exception> errors = new ArrayList<>();

  private static Optional<AssignmentStore.Stored> at(long version) {
    return Optional.of(new AssignmentStore.Stored(version, 1, new byte[] {(byte) version}));
  }

  private VersionWatch watch(long after) {
    return new VersionWatch(after, s -> delivered.add(s.version()), v -> stored.get(), () -> false, errors::add);
  }

  @Test
  void deliversOnlyVersionsNewerThanTheLastDelivered() {
    VersionWatch w = watch(2);
    stored.set(at(2));
    w.check();
    stored.set(at(3));
    w.check();
    w.check();
    stored.set(at(1)); // an older read (a lagging replica) is never delivered
    w.check();
    stored.set(at(7));
    w.check();
    assertThat(delivered).containsExactly(3L, 7L);
  }

  @Test
  void aFailedReadIsReportedAndTheNextCheckTriesAgain() {
    AtomicInteger reads = new AtomicInteger();
    VersionWatch w = new VersionWatch(0, s -> delivered.add(s.version()), v -> {
      if (reads.incrementAndGet() == 1) {
        throw new IOException("disk gone");
      }
      return at(1);
    }, () -> false, errors::add);
    w.check();
    w.check();
    assertThat(errors).hasSize(1);
    assertThat(delivered).containsExactly(1L);
  }

  @Test
  void nothingIsDeliveredAfterCloseAndCloseStepsRunOnce() {
    AtomicInteger closed = new AtomicInteger();
    VersionWatch w = watch(0).onClose(closed::incrementAndGet);
    w.close();
    w.close();
    stored.set(at(5));
    w.check();
    w.wake(); // no thread of its own: nothing happens
    assertThat(delivered).isEmpty();
    assertThat(closed).hasValue(1);
    AtomicInteger late = new AtomicInteger();
    w.onClose(late::incrementAndGet);
    assertThat(late).as("a step added after close runs at once").hasValue(1);
  }

  @Test
  void aClosedStoreIsNotRead() {
    VersionWatch w = new VersionWatch(0, s -> delivered.add(s.version()), v -> {
      throw new AssertionError("read after the store closed");
    }, () -> true, errors::add);
    w.check();
    assertThat(delivered).isEmpty();
    assertThat(errors).isEmpty();
  }
}

package io.atoll.manager;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.ForwardingAssignmentStore;
import io.atoll.core.spi.StoreException;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A store whose state stops answering, as a stopped server's does (SIGSTOP): while stalled, a save
 * fails at once (its client gave up on it) and a load waits until {@link #resume()} (at most 60 s,
 * then fails). The leadership calls still answer, so that only the state's calls are in question.
 * Thread-safe.
 */
final class StalledStore extends ForwardingAssignmentStore {

  private volatile CountDownLatch stalled;
  private final AtomicInteger waiting = new AtomicInteger();

  StalledStore(AssignmentStore store) {
    super(store);
  }

  /** From now on saves fail and other calls wait. */
  void stall() {
    stalled = new CountDownLatch(1);
  }

  /** Answers again; the waiting calls go on. */
  void resume() {
    CountDownLatch l = stalled;
    stalled = null;
    if (l != null) {
      l.countDown();
    }
  }

  /** How many loads wait for the store now. */
  int waiting() {
    return waiting.get();
  }

  private void await() {
    CountDownLatch l = stalled;
    if (l == null) {
      return;
    }
    waiting.incrementAndGet();
    try {
      if (!l.await(60, TimeUnit.SECONDS)) {
        throw new StoreException("stalled store: no answer in 60 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreException("stalled store: interrupted");
    } finally {
      waiting.decrementAndGet();
    }
  }

  @Override
  public Optional<Stored> load() {
    await();
    return super.load();
  }

  @Override
  public long save(byte[] data, long term, long expectedVersion) {
    if (stalled != null) {
      throw new StoreException("stalled store: save timed out (injected)");
    }
    return super.save(data, term, expectedVersion);
  }

  @Override
  public void close() {
    resume();
    super.close();
  }
}

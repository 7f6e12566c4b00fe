package io.atoll.testkit;

import io.atoll.core.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock a test can move forward: the system's monotonic clock plus an offset that only grows.
 * Give it to a {@link LocalCluster} and every member (manager and pods) reads it, so
 * {@link #advance} makes leases, timeouts and idle times run out for all of them at once without
 * sleeping. Time still passes on its own: the members' schedulers run on real time, and only the
 * readings jump. Thread-safe.
 */
public final class VirtualTicker implements Ticker {

  private final AtomicLong offset = new AtomicLong();

  /** A clock that reads as the system clock until it is advanced. */
  public VirtualTicker() {}

  @Override
  public long nanoTime() {
    return System.nanoTime() + offset.get();
  }

  /**
   * Moves the clock forward by {@code by}.
   *
   * @throws IllegalArgumentException if {@code by} is negative (the clock is monotonic)
   */
  public void advance(Duration by) {
    if (by.isNegative()) {
      throw new IllegalArgumentException("advance: " + by + " (expected: >= 0; the clock is monotonic)");
    }
    offset.addAndGet(by.toNanos());
  }

  /** How far the clock has been moved ahead of the system clock in total. */
  public Duration advanced() {
    return Duration.ofNanos(offset.get());
  }
}

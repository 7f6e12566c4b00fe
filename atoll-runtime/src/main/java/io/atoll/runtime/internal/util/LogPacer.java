package io.atoll.runtime.internal.util;

import java.time.Duration;

/**
 * When a condition that keeps holding (a registration that keeps failing) is worth a log line: not
 * before it has held for {@code quiet} (a blip says nothing), then at most once per {@code period}
 * (a retry loop must not flood the log). One pacer per spell of the condition: the first call
 * starts it. Times are a {@link io.atoll.core.Ticker}'s nanoseconds, passed in, so tests move a
 * virtual clock. Thread-safe.
 */
public final class LogPacer {

  private final long quietNanos;
  private final long periodNanos;
  @GuardedBy("this")
  private boolean holding;
  @GuardedBy("this")
  private long since;
  @GuardedBy("this")
  private boolean logged;
  @GuardedBy("this")
  private long loggedAt;

  /**
   * @throws IllegalArgumentException if {@code quiet} is negative or {@code period} not positive
   */
  public LogPacer(Duration quiet, Duration period) {
    if (quiet.isNegative() || period.isNegative() || period.isZero()) {
      throw new IllegalArgumentException("quiet " + quiet + ", period " + period
          + " (expected: quiet >= 0, period > 0)");
    }
    this.quietNanos = quiet.toNanos();
    this.periodNanos = period.toNanos();
  }

  /** The condition holds at {@code now}: whether to log it now. */
  public synchronized boolean due(long now) {
    if (!holding) {
      holding = true;
      since = now;
    }
    if (now - since < quietNanos || (logged && now - loggedAt < periodNanos)) {
      return false;
    }
    logged = true;
    loggedAt = now;
    return true;
  }
}

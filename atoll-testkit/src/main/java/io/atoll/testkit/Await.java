package io.atoll.testkit;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition with a deadline, polling it. For harness code that must not depend on a
 * test library (the demo and the load generator use it too); tests may as well use Awaitility.
 */
public final class Await {

  private static final Duration POLL = Duration.ofMillis(20);

  private Await() {}

  /**
   * Polls {@code condition} every 20 ms until it holds.
   *
   * @param what what is awaited, for the error message ("every shard owned by a live pod")
   * @throws ConditionTimeoutException if it does not hold within {@code timeout}
   * @throws IllegalStateException if the waiting thread is interrupted (the flag stays set)
   */
  public static void until(String what, Duration timeout, BooleanSupplier condition) {
    until(what, timeout, POLL, condition);
  }

  /** As {@link #until(String, Duration, BooleanSupplier)}, polling every {@code poll}. */
  public static void until(String what, Duration timeout, Duration poll, BooleanSupplier condition) {
    Objects.requireNonNull(condition, "condition");
    if (timeout.isNegative() || poll.isNegative() || poll.isZero()) {
      throw new IllegalArgumentException("timeout: " + timeout + ", poll: " + poll
          + " (expected: timeout >= 0, poll > 0)");
    }
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline >= 0) {
        throw new ConditionTimeoutException(what + " did not happen within " + timeout.toMillis() + " ms");
      }
      if (Thread.currentThread().isInterrupted()) {
        throw new IllegalStateException("interrupted while waiting for " + what);
      }
      LockSupport.parkNanos(Math.min(poll.toNanos(), Math.max(1, deadline - System.nanoTime())));
    }
  }

  /** A condition did not hold before its deadline. */
  public static final class ConditionTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** With a message saying what did not happen in how long. */
    public ConditionTimeoutException(String message) {
      super(message);
    }

    /** With a message and the timeout it adds detail to. */
    public ConditionTimeoutException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}

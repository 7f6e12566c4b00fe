package io.atoll.runtime.internal.util;

import java.time.Duration;

/**
 * The one exponential back-off of a pod: each wait doubles the previous one, starting at
 * {@code initial} and capped at {@code max}. Callers keep their own previous wait in a {@code long}
 * (0 after a success, which starts the next series at {@code initial}), so a step allocates
 * nothing and a policy is shared freely. Immutable and thread-safe.
 *
 * <p>Used by the shard routes after a refusal, the peer clients after a failed connect, and the
 * manager link for fetching the config, registering and re-watching.
 */
public final class BackoffPolicy {

  private final long initialNanos;
  private final long maxNanos;

  private BackoffPolicy(long initialNanos, long maxNanos) {
    this.initialNanos = initialNanos;
    this.maxNanos = maxNanos;
  }

  /**
   * A policy waiting {@code initial} first, then twice as long each time, never more than {@code max}.
   *
   * @throws IllegalArgumentException if {@code initial} is not positive or {@code max} is below it
   */
  public static BackoffPolicy exponential(Duration initial, Duration max) {
    long i = initial.toNanos();
    long m = max.toNanos();
    if (i <= 0) {
      throw new IllegalArgumentException("initial back-off: " + initial + " (expected: > 0)");
    }
    if (m < i) {
      throw new IllegalArgumentException("max back-off: " + max + " (expected: >= initial " + initial + ")");
    }
    return new BackoffPolicy(i, m);
  }

  /**
   * The wait after one more failure, given the previous wait ({@code 0} for the first failure
   * after a success).
   */
  public long nextNanos(long previousNanos) {
    if (previousNanos <= 0) {
      return initialNanos;
    }
    return previousNanos >= maxNanos / 2 ? maxNanos : Math.max(previousNanos * 2, initialNanos);
  }

  /** The first wait. */
  public long initialNanos() {
    return initialNanos;
  }

  /** The longest wait. */
  public long maxNanos() {
    return maxNanos;
  }

  @Override
  public String toString() {
    return "BackoffPolicy[" + Duration.ofNanos(initialNanos) + " doubling to " + Duration.ofNanos(maxNanos) + "]";
  }
}

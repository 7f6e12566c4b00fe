package io.atoll.server.demo;

/**
 * The send rate of an open-loop load that backs off when the cluster says it is overloaded, as a
 * well-behaved client does: each OVERLOADED refusal cuts the rate to 70 % (at most one cut a
 * second, so a burst of refusals, e.g. while a handed-off shard's entities activate, counts once),
 * and every second without one gives back 10 % of the target, up to the target. Between those, sends are spaced by the current rate, with at most
 * 100 ms of unused credit saved up. Pure logic on a caller's clock; not thread-safe (one sender),
 * but {@link #overloaded} may be called from any thread.
 */
final class Pacer {

  static final long CUT_SPACING_NANOS = 1_000_000_000L;
  static final long RECOVERY_STEP_NANOS = 1_000_000_000L;

  private final double target;
  private final double floor;
  private volatile double rate;
  private volatile long lastCut;
  private volatile boolean cut;
  private long lastRecovery;
  private long last;
  private double credit;

  /** Paces {@code target} sends per second (at least 1), starting at {@code nowNanos}. */
  Pacer(int target, long nowNanos) {
    if (target < 1) {
      throw new IllegalArgumentException("target rate " + target + " (expected: >= 1)");
    }
    this.target = target;
    this.floor = Math.max(1, target / 100.0);
    this.rate = target;
    this.last = nowNanos;
    this.lastRecovery = nowNanos;
    this.lastCut = nowNanos - CUT_SPACING_NANOS;
  }

  /** A send was refused as overloaded at {@code nowNanos}. */
  synchronized void overloaded(long nowNanos) {
    if (nowNanos - lastCut < CUT_SPACING_NANOS) {
      return;
    }
    lastCut = nowNanos;
    cut = true;
    rate = Math.max(floor, rate * 0.7);
  }

  /** Whether one more send may go at {@code nowNanos}; if so, it is counted. */
  boolean trySend(long nowNanos) {
    recover(nowNanos);
    double r = rate;
    credit = Math.min(credit + (nowNanos - last) * r / 1e9, Math.max(1, r / 10));
    last = nowNanos;
    if (credit < 1) {
      return false;
    }
    credit -= 1;
    return true;
  }

  /** The current rate, sends per second. */
  int rate() {
    return (int) Math.round(rate);
  }

  private synchronized void recover(long nowNanos) {
    if (cut) {
      cut = false;
      lastRecovery = Math.max(lastRecovery, lastCut);
    }
    if (nowNanos - lastRecovery >= RECOVERY_STEP_NANOS && nowNanos - lastCut >= RECOVERY_STEP_NANOS) {
      rate = Math.min(target, rate + target / 10);
      lastRecovery = nowNanos;
    }
  }
}

package io.atoll.runtime.internal.host;

/**
 * How long a batch of one stream spent in transit, from the sender's clock stamp and this pod's
 * clock: the stream's fastest batch so far is taken as no delay, and every other batch is late by
 * how much more its stamp lags this pod's clock. The two monotonic clocks have unrelated origins
 * and may run at slightly different rates, so the reference ages by {@link #DRIFT_PPM} per unit
 * of time: a clock drift up to that rate never reads as delay. The estimate never exceeds the true
 * delay by more than that drift. Confined to the stream's transport thread (gRPC calls
 * {@code onNext} of one stream one at a time).
 */
final class TransitClock {

  /** Clock rate difference taken as drift, not delay: 200 parts per million. */
  static final long DRIFT_PPM = 200;

  private boolean seen;
  private long base;
  private long baseAt;

  /**
   * The delay of a batch stamped {@code senderClock} (0: not stamped) that arrived at {@code now}
   * on this pod's clock, in nanoseconds; 0 for the fastest batch yet.
   */
  long delay(long senderClock, long now) {
    if (senderClock == 0) {
      return 0;
    }
    long offset = now - senderClock;
    long aged = base + (now - baseAt) / 1_000_000 * DRIFT_PPM;
    if (!seen || offset - aged <= 0) {
      seen = true;
      base = offset;
      baseAt = now;
      return 0;
    }
    return offset - aged;
  }
}

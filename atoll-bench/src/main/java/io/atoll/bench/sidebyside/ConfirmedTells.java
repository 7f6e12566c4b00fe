package io.atoll.bench.sidebyside;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The tell load both sides run, the same code for Atoll and Pekko: one platform thread sends
 * tells round-robin over the counters and ignores whatever a tell returns; the counters count the
 * tells they handled, and the sender confirms that count in batches and keeps at most
 * {@code window} tells unconfirmed. Locally it reads the count (every 64 sends, and when the
 * window is half used); remotely it asks the pod for it once half the window is unconfirmed,
 * without waiting unless the window is full. The figure is handled tells per second. Not API.
 */
public final class ConfirmedTells {

  private ConfirmedTells() {}

  /**
   * Runs the load: {@code warmup} seconds, then {@code seconds} measured.
   *
   * @param send sends the {@code i}-th tell, {@code i} in {@code [0, targets)}
   * @param targets how many counters
   * @param window the most tells unconfirmed
   * @param local reads the count handled in this JVM, or null when the counters are remote
   * @param remote asks the remote pod for its count (used when {@code local} is null)
   */
  public static Map<String, Double> run(IntConsumer send, int targets, int window, int warmup, int seconds,
      LongSupplier local, Supplier<CompletableFuture<Long>> remote) throws Exception {
    if (targets < 1 || window < 2) {
      throw new IllegalArgumentException("targets " + targets + ", window " + window + " (expected: >= 1, >= 2)");
    }
    long start = System.nanoTime();
    long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
    long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
    long base = count(local, remote);
    long sent = 0;
    long confirmed = 0;
    long atMeasureStart = -1;
    long measureStartNanos = 0;
    CompletableFuture<Long> confirming = null;
    int i = 0;
    while (true) {
      long now = System.nanoTime();
      if (atMeasureStart < 0 && now >= measureFrom) {
        atMeasureStart = count(local, remote);
        measureStartNanos = System.nanoTime();
      }
      if (now >= end) {
        break;
      }
      if (local != null) {
        if ((sent & 63) == 0 || sent - confirmed >= window / 2) {
          confirmed = local.getAsLong() - base;
        }
      } else {
        if (confirming != null && confirming.isDone()) {
          confirmed = Math.max(confirmed, confirming.join() - base);
          confirming = null;
        }
        if (confirming == null && sent - confirmed >= window / 2) {
          confirming = remote.get();
        }
      }
      if (sent - confirmed >= window) {
        LockSupport.parkNanos(20_000); // the window is full: let the handlers run
        continue;
      }
      send.accept(i);
      sent++;
      i = i + 1 == targets ? 0 : i + 1;
    }
    long atEnd = count(local, remote);
    long measureNanos = System.nanoTime() - measureStartNanos;
    Map<String, Double> r = new LinkedHashMap<>();
    r.put("msg/s", (atEnd - atMeasureStart) / (measureNanos / 1e9));
    r.put("failed", 0.0); // neither side's tell is observed in this shape
    return r;
  }

  private static long count(LongSupplier local, Supplier<CompletableFuture<Long>> remote) throws Exception {
    return local != null ? local.getAsLong() : remote.get().get(30, TimeUnit.SECONDS);
  }
}

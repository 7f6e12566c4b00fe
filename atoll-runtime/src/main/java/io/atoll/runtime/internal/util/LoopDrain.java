package io.atoll.runtime.internal.util;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a stream's drain on the stream's own event loop, with at most one run pending, so that
 * writes happen on the loop (no cross-thread buffer hand-off) and whatever queues while a run is
 * pending leaves with it. Without a known loop the caller drains itself. Thread-safe.
 */
public final class LoopDrain {

  private final AtomicBoolean scheduled = new AtomicBoolean();
  private final Runnable drain;
  private final Runnable job;

  public LoopDrain(Runnable drain) {
    this.drain = drain;
    this.job = () -> {
      scheduled.set(false);
      drain.run();
    };
  }

  /** Asks for a drain on {@code loop}, or drains now if {@code loop} is null. */
  public void request(Executor loop) {
    if (loop == null) {
      drain.run();
    } else if (scheduled.compareAndSet(false, true)) {
      loop.execute(job);
    }
  }
}

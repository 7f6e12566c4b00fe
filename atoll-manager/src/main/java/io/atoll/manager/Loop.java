package io.atoll.manager;

import java.time.Duration;
import java.util.concurrent.Executor;

/**
 * The manager's one serial executor: every piece of manager state is touched only by tasks
 * running here, one at a time, so none of it needs a lock. Nothing blocks on the loop.
 *
 * <p>Production runs it on one platform thread ({@link ExecutorLoop}); tests run it on a virtual
 * clock, one task at a time, from a seeded queue.
 */
interface Loop extends Executor {

  /** Runs {@code task} on the loop, after the tasks already queued. */
  @Override
  void execute(Runnable task);

  /** Runs {@code task} on the loop after {@code delay}; the returned handle cancels it. */
  Cancellable schedule(Runnable task, Duration delay);

  /** Whether the caller runs on the loop. */
  boolean onLoop();

  /**
   * Throws unless the caller runs on the loop (grpc-java's
   * {@code throwIfNotInThisSynchronizationContext}): loop-only methods call it first.
   */
  default void checkOnLoop() {
    if (!onLoop()) {
      throw new IllegalStateException("shard manager: called from " + Thread.currentThread().getName()
          + " (expected: the manager's loop)");
    }
  }

  /** Stops running tasks; queued and scheduled tasks are dropped. */
  void shutdown();

  /** A scheduled task's handle. */
  @FunctionalInterface
  interface Cancellable {
    /** Cancels the task if it has not run yet. */
    void cancel();
  }
}

package io.atoll.runtime.internal.util;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The pod's one timer thread: periodic chores (timeouts, lease check, gossip, passivation) and
 * delayed retries. Tasks must be short and never block. Thread-safe.
 */
public final class PodTimer implements Scheduler, AutoCloseable {

  private final ScheduledExecutorService executor;
  private volatile Thread thread;

  /** A timer whose thread is named {@code name}. */
  public PodTimer(String name) {
    this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      thread = t;
      return t;
    });
  }

  @Override
  public void schedule(Runnable task, long delayNanos) {
    try {
      executor.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // closed: the task would find nothing to do
    }
  }

  /** Runs {@code task} every {@code periodMillis}, first after one period. */
  public void every(long periodMillis, Runnable task) {
    try {
      executor.scheduleWithFixedDelay(task, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // closed
    }
  }

  /**
   * Throws unless called on this timer's thread: the check of methods annotated
   * {@code @GuardedBy("the pod timer")} (as grpc-java's {@code throwIfNotInThisSynchronizationContext}).
   *
   * @throws IllegalStateException on any other thread
   */
  public void checkInTimer() {
    if (Thread.currentThread() != thread) {
      throw new IllegalStateException("not on the pod timer thread: " + Thread.currentThread().getName()
          + " (expected: " + (thread == null ? "the timer, not yet started" : thread.getName()) + ")");
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}

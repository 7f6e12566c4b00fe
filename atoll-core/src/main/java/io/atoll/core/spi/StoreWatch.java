package io.atoll.core.spi;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * What every watch of a store shares: checks run one at a time, on the watch's own timer
 * ({@link #pollEvery}) or soon after a change notice ({@link #wake}), and nothing is told after
 * {@link #close} returns; steps added with {@link #onClose} run once, when it closes. What a check
 * reads and tells is the subclass's: {@link VersionWatch} delivers newer states under the
 * delivery lock (so its close waits for a read under way), {@link LeaderWatch} reads outside it and
 * tells under it ({@link #tell}), so its close waits for a listener call under way but not for a
 * store read: a read that returns after the close tells nothing.
 *
 * @param <W> the watch's own type, for chained calls
 */
public abstract sealed class StoreWatch<W extends StoreWatch<W>> implements AssignmentStore.Watch
    permits LeaderWatch, VersionWatch {

  private final BooleanSupplier storeClosed;
  private final ReentrantLock checking = new ReentrantLock(); // one check at a time
  private final ReentrantLock delivering = new ReentrantLock(); // what a check tells, and close
  private final List<Runnable> onClose = new ArrayList<>(2); // guarded by delivering
  private volatile boolean stopped; // written under delivering
  private volatile ScheduledExecutorService thread;

  /** @param storeClosed whether the store was closed (no check reads it then) */
  StoreWatch(BooleanSupplier storeClosed) {
    this.storeClosed = storeClosed;
  }

  /** This watch, for chained calls. */
  abstract W self();

  /**
   * One read and what it tells, one at a time, only while neither is closed; it tells through
   * {@link #tell} (or runs whole under the delivery lock, as {@link VersionWatch} does).
   */
  abstract void poll();

  /** Runs {@code step} under the delivery lock unless the watch is closed; whether it ran. */
  final boolean tell(Runnable step) {
    delivering.lock();
    try {
      if (stopped) {
        return false;
      }
      step.run();
      return true;
    } finally {
      delivering.unlock();
    }
  }

  /** Checks now and then every {@code period} on a daemon thread of its own named {@code name}. */
  public W pollEvery(Duration period, String name) {
    ScheduledExecutorService t = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name(name).daemon().factory());
    thread = t;
    onClose(t::shutdownNow);
    t.scheduleWithFixedDelay(this::check, 0, period.toNanos(), TimeUnit.NANOSECONDS);
    return self();
  }

  /** Checks soon on the watch's own thread (a change notice arrived); nothing once closed. */
  public void wake() {
    ScheduledExecutorService t = thread;
    if (t == null) {
      return;
    }
    try {
      t.execute(this::check);
    } catch (RejectedExecutionException e) {
      // closed
    }
  }

  /** Adds a step to run once when the watch closes, after the last check. */
  public W onClose(Runnable step) {
    delivering.lock();
    try {
      if (!stopped) {
        onClose.add(step);
        return self();
      }
    } finally {
      delivering.unlock();
    }
    step.run();
    return self();
  }

  /** Reads the store and tells what changed, unless the watch or the store was closed. */
  public void check() {
    checking.lock();
    try {
      if (stopped || storeClosed.getAsBoolean()) {
        return;
      }
      poll();
    } finally {
      checking.unlock();
    }
  }

  @Override
  public void close() {
    List<Runnable> steps;
    delivering.lock();
    try {
      if (stopped) {
        return;
      }
      stopped = true;
      steps = List.copyOf(onClose);
      onClose.clear();
    } finally {
      delivering.unlock();
    }
    steps.forEach(Runnable::run);
  }
}

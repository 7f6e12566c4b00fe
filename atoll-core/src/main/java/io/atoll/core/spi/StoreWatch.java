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
 * What every watch of a store shares: checks run one at a time under one lock, on the watch's own
 * timer ({@link #pollEvery}) or soon after a change notice ({@link #wake}), and none runs after
 * {@link #close} returns; steps added with {@link #onClose} run once, after the last check. What a
 * check reads and tells is the subclass's: {@link VersionWatch} delivers newer states,
 * {@link LeaderWatch} tells leader changes.
 *
 * @param <W> the watch's own type, for chained calls
 */
public abstract sealed class StoreWatch<W extends StoreWatch<W>> implements AssignmentStore.Watch
    permits LeaderWatch, VersionWatch {

  private final BooleanSupplier storeClosed;
  private final ReentrantLock delivering = new ReentrantLock();
  private final List<Runnable> onClose = new ArrayList<>(2); // guarded by delivering
  private boolean stopped; // guarded by delivering
  private volatile ScheduledExecutorService thread;

  /** @param storeClosed whether the store was closed (no check reads it then) */
  StoreWatch(BooleanSupplier storeClosed) {
    this.storeClosed = storeClosed;
  }

  /** This watch, for chained calls. */
  abstract W self();

  /** One read and what it tells; runs under the delivery lock, only while neither is closed. */
  abstract void poll();

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
    delivering.lock();
    try {
      if (stopped || storeClosed.getAsBoolean()) {
        return;
      }
      poll();
    } finally {
      delivering.unlock();
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

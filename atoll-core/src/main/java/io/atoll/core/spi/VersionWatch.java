package io.atoll.core.spi;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The delivery half of {@link AssignmentStore#watch}, shared by the stores: each {@link #check}
 * reads the state and hands it to the listener if its version is newer than the last delivered,
 * so states arrive in strictly increasing version order, one at a time, and never after
 * {@link #close} returns. A store decides when to check: on a timer of its own ({@link #pollEvery})
 * plus {@link #wake} on a change notice, or from a shared scheduler.
 */
public final class VersionWatch implements AssignmentStore.Watch {

  /** Reads the stored state, or may answer empty when it knows nothing is newer than {@code version}. */
  @FunctionalInterface
  public interface Source {
    /** The stored state; may be empty if none is newer than {@code version}. */
    Optional<AssignmentStore.Stored> read(long version) throws Exception;
  }

  private final Consumer<AssignmentStore.Stored> onChange;
  private final Source source;
  private final BooleanSupplier storeClosed;
  private final Consumer<Exception> onError;
  private final ReentrantLock delivering = new ReentrantLock();
  private final List<Runnable> onClose = new ArrayList<>(2); // guarded by delivering
  private long last; // guarded by delivering
  private boolean stopped; // guarded by delivering
  private volatile ScheduledExecutorService thread;

  /**
   * A watch that delivers states newer than {@code afterVersion}.
   *
   * @param storeClosed whether the store was closed (no check reads it then)
   * @param onError told of a failed read; the next check tries again
   */
  public VersionWatch(long afterVersion, Consumer<AssignmentStore.Stored> onChange, Source source,
      BooleanSupplier storeClosed, Consumer<Exception> onError) {
    this.last = afterVersion;
    this.onChange = onChange;
    this.source = source;
    this.storeClosed = storeClosed;
    this.onError = onError;
  }

  /** Checks now and then every {@code period} on a daemon thread of its own named {@code name}. */
  public VersionWatch pollEvery(Duration period, String name) {
    ScheduledExecutorService t = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name(name).daemon().factory());
    thread = t;
    onClose(t::shutdownNow);
    t.scheduleWithFixedDelay(this::check, 0, period.toNanos(), TimeUnit.NANOSECONDS);
    return this;
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

  /** Adds a step to run once when the watch closes, after the last delivery. */
  public VersionWatch onClose(Runnable step) {
    delivering.lock();
    try {
      if (!stopped) {
        onClose.add(step);
        return this;
      }
    } finally {
      delivering.unlock();
    }
    step.run();
    return this;
  }

  /** Reads the state and delivers it if it is newer than the last delivered. */
  public void check() {
    delivering.lock();
    try {
      if (stopped || storeClosed.getAsBoolean()) {
        return;
      }
      Optional<AssignmentStore.Stored> s = source.read(last);
      if (s.isPresent() && s.get().version() > last) {
        last = s.get().version();
        onChange.accept(s.get());
      }
    } catch (Exception e) {
      onError.accept(e);
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

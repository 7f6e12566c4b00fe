package io.atoll.manager;

import io.atoll.core.Ticker;
import java.time.Duration;
import java.util.PriorityQueue;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;

/**
 * A virtual clock with one queue of timed tasks, run one at a time on the test's thread: the
 * simulation's whole world. Tasks at equal times run in the order they were queued. A task
 * belongs to an owner that may die (a crashed manager): its tasks are then dropped.
 */
final class VirtualTime implements Ticker {

  private record Task(long at, long seq, BooleanSupplier alive, Runnable run) {}

  private final PriorityQueue<Task> queue = new PriorityQueue<>(
      (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
  private long now = 1_000_000_000L;
  private long seq;
  private long tasksRun;
  private Runnable afterEachTask = () -> {};

  @Override
  public long nanoTime() {
    return now;
  }

  /** Called after every task (the simulation checks its invariants there). */
  void afterEachTask(Runnable check) {
    this.afterEachTask = check;
  }

  void at(long delayNanos, BooleanSupplier alive, Runnable run) {
    queue.add(new Task(now + Math.max(0, delayNanos), seq++, alive, run));
  }

  void after(Duration delay, Runnable run) {
    at(delay.toNanos(), () -> true, run);
  }

  /** An executor whose tasks run after {@code delayNanos}, for as long as {@code alive} holds. */
  Executor executor(long delayNanos, BooleanSupplier alive) {
    return r -> at(delayNanos, alive, r);
  }

  /** The most tasks one {@link #advance} may run: more means the world spins without time passing. */
  static final int MAX_TASKS_PER_ADVANCE = 200_000;

  /** Runs every task due up to {@code now + d}, then sets the clock there. */
  void advance(Duration d) {
    long until = now + d.toNanos();
    int ran = 0;
    while (!queue.isEmpty() && queue.peek().at <= until) {
      if (++ran > MAX_TASKS_PER_ADVANCE) {
        throw new AssertionError("more than " + MAX_TASKS_PER_ADVANCE + " tasks within " + d.toMillis()
            + " ms of virtual time: something reschedules itself without delay");
      }
      Task t = queue.poll();
      now = Math.max(now, t.at);
      if (t.alive.getAsBoolean()) {
        t.run.run();
        tasksRun++;
        afterEachTask.run();
      }
    }
    now = until;
  }

  long tasksRun() {
    return tasksRun;
  }

  /** A loop on this clock, alive until {@link SimLoop#shutdown()}. */
  SimLoop newLoop() {
    return new SimLoop();
  }

  /** A {@link Loop} on the virtual clock; its tasks die with it (a crash). */
  final class SimLoop implements Loop {
    private boolean alive = true;
    private boolean running;
    private long pausedUntil = Long.MIN_VALUE;

    @Override
    public void execute(Runnable task) {
      at(0, () -> alive, () -> runWhenAwake(task, () -> alive));
    }

    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
      boolean[] cancelled = {false};
      at(delay.toNanos(), () -> alive && !cancelled[0], () -> runWhenAwake(task, () -> alive && !cancelled[0]));
      return () -> cancelled[0] = true;
    }

    /** The loop's process is stopped for {@code d} (SIGSTOP): its tasks wait, in order; the clock goes on. */
    void pause(Duration d) {
      pausedUntil = Math.max(pausedUntil, now + d.toNanos());
    }

    private void runWhenAwake(Runnable task, BooleanSupplier stillAlive) {
      if (now < pausedUntil) {
        at(pausedUntil - now, stillAlive, () -> runWhenAwake(task, stillAlive));
      } else {
        runAsLoop(task);
      }
    }

    /** Calls {@code s} now, as a task of this loop, and returns what it returned. */
    <T> T callAsLoop(java.util.function.Supplier<T> s) {
      Object[] out = new Object[1];
      runAsLoop(() -> out[0] = s.get());
      @SuppressWarnings("unchecked")
      T t = (T) out[0];
      return t;
    }

    /** Runs {@code task} now, as a task of this loop (for the test's own reads and starts). */
    void runAsLoop(Runnable task) {
      boolean was = running;
      running = true;
      try {
        task.run();
      } finally {
        running = was;
      }
    }

    @Override
    public boolean onLoop() {
      return running && alive;
    }

    @Override
    public void shutdown() {
      alive = false;
    }

    boolean alive() {
      return alive;
    }
  }
}

package io.atoll.manager;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The production {@link Loop}: one daemon platform thread. A task that throws is logged and the
 * loop goes on (the thread stays the same, so {@link #onLoop()} stays true for it). Delays are
 * measured by the executor on the system's monotonic clock, the same clock as
 * {@link io.atoll.core.Ticker#SYSTEM}.
 */
final class ExecutorLoop implements Loop {

  private static final Logger log = LoggerFactory.getLogger(ExecutorLoop.class);

  private final ScheduledExecutorService executor;
  private volatile Thread thread;

  ExecutorLoop(String name) {
    ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      thread = t;
      return t;
    });
    this.executor = e;
  }

  @Override
  public void execute(Runnable task) {
    executor.execute(() -> run(task));
  }

  @Override
  public Cancellable schedule(Runnable task, Duration delay) {
    var f = executor.schedule(() -> run(task), delay.toNanos(), TimeUnit.NANOSECONDS);
    return () -> f.cancel(false);
  }

  private static void run(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      log.error("shard manager: a task on the loop failed", e);
    }
  }

  @Override
  public boolean onLoop() {
    return Thread.currentThread() == thread;
  }

  @Override
  public void shutdown() {
    executor.shutdownNow();
  }
}

package io.atoll.runtime.internal.send;

import io.atoll.runtime.EntityType;
import io.atoll.runtime.internal.host.TypeRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicLong;

/** Small fakes for the send room's unit tests: a virtual clock and scheduler, pendings. */
final class Fakes {

  static final TypeRuntime TYPE = new TypeRuntime(EntityType.of("t", String.class), null, null, -1);

  private Fakes() {}

  /** A clock that moves only when told, and a scheduler that runs due tasks when told. */
  static final class VirtualTime implements io.atoll.core.Ticker, io.atoll.runtime.internal.util.Scheduler {
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final PriorityQueue<long[]> due = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
    private final List<Runnable> tasks = new ArrayList<>();

    @Override
    public long nanoTime() {
      return now.get();
    }

    @Override
    public synchronized void schedule(Runnable task, long delayNanos) {
      tasks.add(task);
      due.add(new long[] {now.get() + Math.max(0, delayNanos), tasks.size() - 1});
    }

    synchronized int scheduled() {
      return due.size();
    }

    /** Moves the clock and runs every task due by then, in due order. */
    void advance(long nanos) {
      long until = now.addAndGet(nanos);
      for (;;) {
        Runnable r;
        synchronized (this) {
          long[] next = due.peek();
          if (next == null || next[0] > until) {
            return;
          }
          due.poll();
          r = tasks.get((int) next[1]);
        }
        r.run();
      }
    }
  }

  /** Records what the pendings report. */
  static final class Owner implements Pending.Owner {
    final List<Pending> completed = new ArrayList<>();
    final List<Pending> resolved = new ArrayList<>();
    ShardRoute route;

    @Override
    public synchronized void completed(Pending p) {
      completed.add(p);
    }

    @Override
    public void resolved(Pending p, boolean retry) {
      synchronized (this) {
        resolved.add(p);
      }
      if (route != null) {
        route.resolved(p, retry);
      }
    }

    @Override
    public void handled(int shard, Pending first) {
      for (Pending p = first; p != null; p = p.nextHandled) {
        if (p.settledInBatch) {
          completed(p);
        }
      }
      synchronized (this) {
        for (Pending p = first; p != null; p = p.nextHandled) {
          resolved.add(p);
        }
      }
      if (route != null) {
        route.resolvedAll(first);
      }
    }
  }

  static Pending pending(Pending.Owner owner, long now, long timeoutMillis, String message) {
    return new Pending(owner, TYPE, "e", 1, message, false, timeoutMillis * 1_000_000, now);
  }
}

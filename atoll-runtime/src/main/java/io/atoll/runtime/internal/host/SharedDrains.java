package io.atoll.runtime.internal.host;

import io.atoll.runtime.internal.util.Draining;
import io.atoll.runtime.internal.util.GuardedBy;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The drains a pod shares between the entities of types whose handlers never block
 * ({@link io.atoll.runtime.EntityType#withNonBlockingHandlers}): one queue of the entities that
 * have messages ready, and a few virtual threads that take them in turn, a bounded batch from
 * each.
 *
 * <p><b>Why.</b> An entity with a thread of its own costs the sender a virtual-thread start, a
 * hand-off to the scheduler, per message that finds it idle. Here such a message only queues the
 * entity; a drain starts only when none runs (handed that entity directly), so a steady stream
 * of messages to many entities costs a start per burst, not per message.
 *
 * <p><b>A handler that blocks anyway.</b> A drain runs one handler at a time, so a handler that
 * blocks holds back the entities queued behind it. The pod timer calls {@link #watch} every
 * {@link #WATCH_MILLIS} ms: if entities wait and the drains took none since the last look, it
 * starts another drain. So an entity waits behind a blocked handler for about two periods of the
 * watchdog, plus the scheduler's delay. (An entity handed straight to a drain that a sender
 * started, and that has not begun, is not counted as waiting: that drain waits only for a carrier.)
 *
 * <p><b>A busy pod.</b> If entities waited at two looks in a row while the drains did make
 * progress, the drains are busy rather than blocked: the watchdog starts another, up to
 * {@code busyLimit} drains, so handlers spread over the cores as entities with threads of their
 * own would.
 *
 * <p><b>Order and bounds.</b> An entity is in the queue or in a drain's hands only while its
 * {@code scheduled} flag is set, which only its holder clears ({@link EntityInstance#drain}), be
 * that a drain, the entity's own thread or a sender handling a message inline
 * ({@link EntityInstance#runHere}): no entity is drained by two threads at once, and its messages
 * stay in order. The watchdog starts a
 * drain only while entities wait and no drain it started is still to begin, at most one a period,
 * and a drain ends when it finds the queue empty. A handler slower than a period counts as
 * blocked, so under such handlers the drains grow a period at a time, up to the entities that have
 * work. A thread that cannot be made (out of memory) is counted out again and its entity queued,
 * so neither senders nor the watchdog wait for a drain that never came.
 */
final class SharedDrains {

  /** Messages a drain handles from one entity before it turns to the next one ready. */
  static final int BATCH = 16;
  /** The watchdog's period. */
  static final long WATCH_MILLIS = 5;
  /** Entity turns between two yields of a drain's carrier, so other virtual threads get it too. */
  private static final int TURNS_BEFORE_YIELD = 64;

  private final ConcurrentLinkedQueue<EntityInstance> ready = new ConcurrentLinkedQueue<>();
  private final AtomicInteger drains = new AtomicInteger();
  private final ThreadFactory threads;
  private final int busyLimit;
  /** A drain the watchdog starts: it clears {@link #starting} as it begins. */
  private final Runnable watchdogDrain = () -> loop(null, true);
  /** A drain a sender starts after the last one ended as the sender queued its entity. */
  private final Runnable senderDrain = () -> loop(null, false);
  /** Bumped by a drain at each entity it takes; the watchdog looks for a change. */
  private volatile long progress;
  /** Set by the watchdog when it starts a drain, cleared when that drain begins. */
  private volatile boolean starting;
  @GuardedBy("the watchdog's caller")
  private long seen;
  @GuardedBy("the watchdog's caller")
  private boolean waitedBefore;

  /**
   * @param threads makes the drains' threads (virtual: a handler that blocks anyway unmounts)
   * @param busyLimit the most drains the watchdog keeps for a busy pod (at least 1); more start
   *     only for handlers that block
   */
  SharedDrains(ThreadFactory threads, int busyLimit) {
    if (busyLimit < 1) {
      throw new IllegalArgumentException("busyLimit: " + busyLimit + " (expected: >= 1)");
    }
    this.threads = threads;
    this.busyLimit = busyLimit;
  }

  /** The busy limit for this machine: one core is left to the senders and the network. */
  static int defaultBusyLimit() {
    return Math.max(1, Runtime.getRuntime().availableProcessors() - 1);
  }

  /** Queues an entity whose {@code scheduled} flag its caller has just set. */
  void submit(EntityInstance i) {
    if (drains.get() == 0 && drains.compareAndSet(0, 1)) {
      try {
        threads.newThread(() -> loop(i, false)).start(); // none runs: the new drain takes this one first
      } catch (Throwable t) {
        // No thread (out of memory): queued, and not counted, so the next sender or the watchdog
        // starts a drain for it.
        ready.offer(i);
        drains.decrementAndGet();
        throw t;
      }
    } else {
      ready.offer(i);
      if (drains.get() == 0 && drains.compareAndSet(0, 1)) {
        start(senderDrain); // the last drain ended as this one was queued
      }
    }
  }

  /** Starts a counted drain; if no thread can be made, it is counted out again. */
  private void start(Runnable drain) {
    try {
      threads.newThread(drain).start();
    } catch (Throwable t) {
      drains.decrementAndGet();
      throw t;
    }
  }

  /**
   * The watchdog: starts another drain if entities wait and either the drains took none since
   * the last call (a handler blocks) or they waited at the last call too and fewer than the busy
   * limit run. Call from one thread, periodically.
   */
  void watch() {
    long p = progress;
    boolean waiting = !ready.isEmpty();
    boolean progressed = p != seen;
    boolean waitedLastTime = waitedBefore;
    seen = p;
    waitedBefore = waiting;
    if (shouldStart(waiting, starting, progressed, waitedLastTime, drains.get(), busyLimit)) {
      starting = true;
      drains.incrementAndGet();
      try {
        start(watchdogDrain);
      } catch (Throwable t) {
        starting = false; // or no drain would ever be started again
        throw t;
      }
    }
  }

  /**
   * The watchdog's rule: another drain starts when entities wait, no drain the watchdog started is
   * still to begin, and either the running drains took no entity since the last look (handlers
   * block) or entities waited at the last look too and fewer than {@code busyLimit} drains run
   * (the drains are busy).
   */
  static boolean shouldStart(boolean waiting, boolean starting, boolean progressed, boolean waitedBefore,
      int running, int busyLimit) {
    if (!waiting || starting) {
      return false;
    }
    boolean blocked = !progressed && running > 0;
    boolean busy = waitedBefore && running < busyLimit;
    return blocked || busy;
  }

  /** Drains counted as running now. */
  int drains() {
    return drains.get();
  }

  /** A drain: takes {@code first} (if not null), then the entities ready, until none is. */
  private void loop(EntityInstance first, boolean fromWatchdog) {
    if (fromWatchdog) {
      starting = false;
    }
    int turns = 0;
    EntityInstance next = first;
    boolean[] mark = Draining.enter(); // a handler's sends to other entities queue them, never run them here
    try {
      for (;;) {
        EntityInstance i = next != null ? next : ready.poll();
        next = null;
        if (i == null) {
          drains.decrementAndGet();
          if (ready.isEmpty()) {
            return;
          }
          // Queued after this drain looked, by a sender that saw it still counted: go on.
          drains.incrementAndGet();
          continue;
        }
        progress++; // racy between drains: the watchdog only looks for a change
        boolean more = i.drain(BATCH);
        Thread.interrupted(); // a handler's interrupt of its own thread is not the next entity's
        if (more) {
          ready.offer(i); // more queued: behind the others ready, for fairness
        }
        if (++turns % TURNS_BEFORE_YIELD == 0) {
          Thread.yield();
        }
      }
    } catch (Throwable t) {
      // An error outside the handlers (they are caught in the instance): this thread ends, but
      // the pod must not be left with a count of drains nobody runs.
      drains.decrementAndGet();
      throw t;
    } finally {
      Draining.exit(mark);
    }
  }
}

package io.atoll.runtime.internal.send;

import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.internal.util.BackoffPolicy;
import io.atoll.runtime.internal.util.GuardedBy;
import io.atoll.runtime.internal.util.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The sending side of one shard on this pod: where its messages go, and the bounded buffer where
 * they wait while its owner is unknown, moving, or just refused them.
 *
 * <p><b>Order.</b> Each send takes a sequence number. A message goes straight to the owner only
 * when nothing is waiting and no earlier message is still unresolved at another pod; otherwise it
 * waits. Refused messages come back into the buffer in sequence order, and the buffer is flushed
 * only when no message of the shard is unresolved anywhere, so messages of one sender to one entity
 * are handled in send order across hand-offs and retries. (The receiving pod helps: after refusing
 * a shard on a stream it refuses every later envelope of that shard on that stream, until one
 * marked {@code resume}.)
 *
 * <p>After a refusal it waits before resending to the same owner under the same claim, backing
 * off from 2 ms to 500 ms while the refusals go on.
 *
 * <p>It reads owners from, and hands messages to, its {@link Callback} (the router); it calls
 * nothing else. Thread-safe: its state is guarded by its monitor, which is held only briefly and
 * never while waiting.
 */
final class ShardRoute {

  private static final Comparator<Pending> BY_SEQ = Comparator.comparingLong(p -> p.seq);
  static final BackoffPolicy REFUSAL_BACKOFF = BackoffPolicy.exponential(Duration.ofMillis(2), Duration.ofMillis(500));

  /** What a route needs from the rest of the pod. */
  interface Callback {
    /**
     * The live owner of {@code shard}: {@link Router#SERVED_HERE} when this pod serves it, null
     * while it has none this pod can deliver to.
     */
    PodId ownerOf(int shard);

    /** As {@link #ownerOf(int)}, with the time read moments ago by the caller. */
    default PodId ownerOf(int shard, long now) {
      return ownerOf(shard);
    }

    /** The epoch of the shard's claim in the current view. */
    long claimEpoch(int shard);

    /** Hands a message to {@code to}; false if refused at once (the route keeps it). */
    boolean dispatch(Pending p, PodId to);

    /**
     * As {@link #dispatch(Pending, PodId)}; {@code sending} on the send's own call (see
     * {@link ShardRoute#send(Pending, boolean)}).
     */
    default boolean dispatch(Pending p, PodId to, boolean sending) {
      return dispatch(p, to);
    }

    /** The route began ({@code on}) or stopped holding messages back: kick it when things change. */
    void holding(ShardRoute route, boolean on);
  }

  private final Callback callback;
  private final Ticker ticker;
  private final Scheduler scheduler;
  private final int bufferSize;
  final int shard;

  @GuardedBy("this")
  private long nextSeq;
  @GuardedBy("this")
  private int outstanding;
  @GuardedBy("this")
  private PodId dest;
  @GuardedBy("this")
  private PriorityQueue<Pending> waiting;
  @GuardedBy("this")
  private boolean holding;
  @GuardedBy("this")
  private PodId refusedBy;
  @GuardedBy("this")
  private boolean refusedSinceFlush;
  @GuardedBy("this")
  private long refusedAtEpoch;
  @GuardedBy("this")
  private long backoffUntil;
  @GuardedBy("this")
  private long backoffNanos;
  @GuardedBy("this")
  private boolean timerSet;

  /** The route of {@code shard}, holding at most {@code bufferSize} messages. */
  ShardRoute(int shard, int bufferSize, Ticker ticker, Scheduler scheduler, Callback callback) {
    this.shard = shard;
    this.bufferSize = bufferSize;
    this.ticker = ticker;
    this.scheduler = scheduler;
    this.callback = callback;
  }

  void send(Pending p) {
    send(p, false);
  }

  /**
   * Sends {@code p}; {@code sending} on the send's own call: the sender's thread, holding no lock
   * of the pod, moments after {@code p} was made. Then its start time stands for now in the
   * checks before it is handed over (the entity's drain checks the lease again with the clock),
   * and a local entity whose handlers never block may handle it on this thread.
   */
  void send(Pending p, boolean sending) {
    PodId target;
    synchronized (this) {
      p.seq = nextSeq++;
      if (holding) {
        hold(p);
        return;
      }
      target = sending ? callback.ownerOf(shard, p.startNanos) : callback.ownerOf(shard);
      if (target == null || (outstanding > 0 && !target.equals(dest))) {
        holding = true;
        callback.holding(this, true);
        hold(p);
        // A config may have arrived between reading the owner and being listed as holding, and
        // its kick missed us: look once more.
        if (outstanding == 0 && callback.ownerOf(shard) != null) {
          flushLocked();
        }
        return;
      }
      outstanding++;
      dest = target;
      p.markDispatched();
    }
    if (!callback.dispatch(p, target, sending)) {
      resolved(p, true);
    }
  }

  /**
   * How many messages wait in this route's buffer now, not counting those already failed (a
   * timed-out message leaves the buffer only at the next flush). For metrics: O(buffer).
   */
  synchronized int waiting() {
    if (waiting == null) {
      return 0;
    }
    int n = 0;
    for (Pending p : waiting) {
      if (!p.isDone()) {
        n++;
      }
    }
    return n;
  }

  /** A message of this shard was resolved: handled, failed, or refused ({@code retry}). */
  void resolved(Pending p, boolean retry) {
    synchronized (this) {
      if (p.clearDispatched()) {
        outstanding--;
      } else if (!retry) {
        return; // resolved before, e.g. timed out
      }
      if (retry && !p.isDone()) {
        if (waiting == null) {
          waiting = new PriorityQueue<>(BY_SEQ);
        }
        p.where = "waiting in shard " + shard + "'s buffer after " + (dest == null ? "a refusal" : dest + " refused it");
        waiting.add(p);
        refused();
      } else if (!retry) {
        backoffNanos = 0;
      }
      if (holding && outstanding == 0) {
        flushLocked();
      }
    }
  }

  /**
   * Messages of this shard, linked from {@code first} through {@code nextHandled}, were handled:
   * as {@link #resolved} for each, under one hold of the monitor.
   */
  void resolvedAll(Pending first) {
    synchronized (this) {
      boolean any = false;
      for (Pending p = first; p != null; p = p.nextHandled) {
        if (p.clearDispatched()) {
          outstanding--;
          any = true;
        }
      }
      if (!any) {
        return; // each resolved before, e.g. timed out
      }
      backoffNanos = 0;
      if (holding && outstanding == 0) {
        flushLocked();
      }
    }
  }

  /** A message timed out: if it was unresolved at its owner, it no longer holds the shard back. */
  void timedOut(Pending p) {
    synchronized (this) {
      if (p.clearDispatched()) {
        outstanding--;
        if (holding && outstanding == 0) {
          flushLocked();
        }
      }
    }
  }

  @GuardedBy("this")
  private void refused() {
    if (!holding) {
      holding = true;
      callback.holding(this, true);
    }
    refusedBy = dest;
    refusedSinceFlush = true;
    refusedAtEpoch = callback.claimEpoch(shard);
    backoffNanos = REFUSAL_BACKOFF.nextNanos(backoffNanos);
    backoffUntil = ticker.nanoTime() + backoffNanos;
  }

  /** Something changed (config, a shard became served here, a timer fired): try to flush. */
  void kick() {
    synchronized (this) {
      timerSet = false;
      if (holding && outstanding == 0) {
        flushLocked();
      }
    }
  }

  @GuardedBy("this")
  private void hold(Pending p) {
    if (waiting == null) {
      waiting = new PriorityQueue<>(BY_SEQ);
    }
    if (waiting.size() >= bufferSize) {
      waiting.removeIf(Pending::isDone);
      if (waiting.size() >= bufferSize) {
        p.failWith(new DeliveryException(DeliveryException.Reason.BUFFER_FULL, "send to " + p.describe()
            + " failed: shard " + shard + "'s buffer is full (" + waiting.size()
            + " messages waiting for its owner); nothing was sent, try again later"));
        return;
      }
    }
    p.where = "waiting in shard " + shard + "'s buffer: its owner is unknown or moving";
    waiting.add(p);
  }

  @GuardedBy("this")
  private void flushLocked() {
    PodId target = callback.ownerOf(shard);
    if (target == null) {
      return; // a new config or a served shard kicks us
    }
    long now = ticker.nanoTime();
    if (target.equals(refusedBy) && callback.claimEpoch(shard) == refusedAtEpoch && now - backoffUntil < 0) {
      if (!timerSet) {
        timerSet = true;
        scheduler.schedule(this::kick, backoffUntil - now);
      }
      return;
    }
    holding = false;
    callback.holding(this, false);
    refusedBy = null;
    if (waiting == null || waiting.isEmpty()) {
      return;
    }
    List<Pending> batch = new ArrayList<>(waiting.size());
    Pending p;
    while ((p = waiting.poll()) != null) {
      if (!p.isDone()) {
        outstanding++;
        p.markDispatched();
        p.resume = batch.isEmpty() && refusedSinceFlush;
        batch.add(p);
      }
    }
    if (!batch.isEmpty()) {
      refusedSinceFlush = false;
    }
    dest = target;
    // Dispatch under the monitor so that no later send overtakes the flushed ones.
    for (Pending q : batch) {
      if (!callback.dispatch(q, target)) {
        resolved(q, true);
      }
    }
  }

  /** Fails everything waiting (the sharding is closing). */
  void failAll(DeliveryException e) {
    synchronized (this) {
      if (waiting != null) {
        Pending p;
        while ((p = waiting.poll()) != null) {
          p.failWith(e);
        }
      }
    }
  }
}

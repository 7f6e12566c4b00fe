package io.atoll.runtime.internal;

import io.atoll.core.PodId;
import io.atoll.runtime.DeliveryException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;

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
 * <p>Thread-safe: its state is guarded by its monitor, which is held only briefly and never while
 * waiting.
 */
final class ShardRoute {

  private static final Comparator<Pending> BY_SEQ = Comparator.comparingLong(p -> p.seq);
  private static final int MAX_BACKOFF_MILLIS = 500;

  private final Router router;
  final int shard;

  // guarded by this
  private long nextSeq;
  private int outstanding;
  private PodId dest;
  private PriorityQueue<Pending> waiting;
  private boolean holding;
  private PodId refusedBy;
  private boolean refusedSinceFlush;
  private long refusedAtEpoch;
  private long backoffUntil;
  private int backoffMillis;
  private boolean timerSet;

  ShardRoute(Router router, int shard) {
    this.router = router;
    this.shard = shard;
  }

  void send(Pending p) {
    PodId target;
    synchronized (this) {
      p.seq = nextSeq++;
      if (holding) {
        hold(p);
        return;
      }
      target = router.ownerOf(shard);
      if (target == null || (outstanding > 0 && !target.equals(dest))) {
        holding = true;
        router.holding(this, true);
        hold(p);
        // A config may have arrived between reading the owner and being listed as holding, and
        // its kick missed us: look once more.
        if (outstanding == 0 && router.ownerOf(shard) != null) {
          flushLocked();
        }
        return;
      }
      outstanding++;
      dest = target;
      p.markDispatched();
    }
    if (!router.dispatch(p, target)) {
      resolved(p, true);
    }
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
        backoffMillis = 0;
      }
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

  private void refused() {
    if (!holding) {
      holding = true;
      router.holding(this, true);
    }
    refusedBy = dest;
    refusedSinceFlush = true;
    refusedAtEpoch = router.claimEpoch(shard);
    backoffMillis = Math.min(Math.max(backoffMillis * 2, 2), MAX_BACKOFF_MILLIS);
    backoffUntil = router.now() + TimeUnit.MILLISECONDS.toNanos(backoffMillis);
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

  private void hold(Pending p) {
    if (waiting == null) {
      waiting = new PriorityQueue<>(BY_SEQ);
    }
    if (waiting.size() >= router.bufferSize()) {
      waiting.removeIf(Pending::isDone);
      if (waiting.size() >= router.bufferSize()) {
        p.failWith(new DeliveryException(DeliveryException.Reason.BUFFER_FULL, "send to " + p.describe()
            + " failed: shard " + shard + "'s buffer is full (" + waiting.size()
            + " messages waiting for its owner); nothing was sent, try again later"));
        return;
      }
    }
    p.where = "waiting in shard " + shard + "'s buffer: its owner is unknown or moving";
    waiting.add(p);
  }

  private void flushLocked() {
    PodId target = router.ownerOf(shard);
    if (target == null) {
      return; // a new config or a served shard kicks us
    }
    long now = router.now();
    if (target.equals(refusedBy) && router.claimEpoch(shard) == refusedAtEpoch && now - backoffUntil < 0) {
      if (!timerSet) {
        timerSet = true;
        router.schedule(this::kick, backoffUntil - now);
      }
      return;
    }
    holding = false;
    router.holding(this, false);
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
      if (!router.dispatch(q, target)) {
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

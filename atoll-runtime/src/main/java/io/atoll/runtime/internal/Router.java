package io.atoll.runtime.internal;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.runtime.DeliveryException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Sends this pod's messages: picks each message's shard route, reads the shard's owner from the
 * current config (one volatile read of an immutable snapshot), and hands the message to the local
 * host or to the client of the owning pod. Thread-safe.
 */
final class Router {

  /**
   * What {@link #ownerOf} returns when this pod owns and serves the shard: decided once, so the
   * local/remote choice cannot change between choosing a target and dispatching to it.
   */
  static final PodId SELF = new PodId(new io.atoll.core.PodAddress("this-pod", 1), 0);

  private final PodRuntime rt;
  private final ShardRoute[] routes;
  private final Set<ShardRoute> holding = ConcurrentHashMap.newKeySet();

  Router(PodRuntime rt, int numberOfShards) {
    this.rt = rt;
    this.routes = new ShardRoute[numberOfShards + 1];
    for (int s = 1; s <= numberOfShards; s++) {
      routes[s] = new ShardRoute(this, s);
    }
  }

  void send(Pending p) {
    if (!rt.timeouts.add(p)) {
      p.completeExceptionally(new DeliveryException(DeliveryException.Reason.TOO_MANY_IN_FLIGHT, "send to "
          + p.describe() + " failed: " + rt.settings.maxInFlight() + " messages of this pod are already in flight;"
          + " nothing was sent, wait for some to complete"));
      return;
    }
    routes[p.shard].send(p);
  }

  /** The live owner of a shard, or null while it has none this pod can deliver to. */
  PodId ownerOf(int shard) {
    PodEntry me = rt.selfEntry;
    ClusterConfig view = rt.view();
    PodEntry owner = view.ownerEntry(shard - 1);
    if (owner == null || owner.status() != PodStatus.ACTIVE) {
      return null;
    }
    // By identity: the entry of this pod in the view it was read with (a view read after a
    // change may find no match and fall back to comparing ids).
    PodId self = rt.self();
    // Identity first (the entry of this pod in the current view); else the incarnation, a random
    // long, rules out other pods before the full comparison.
    boolean mine = owner == me
        || (owner.id().incarnation() == self.incarnation() && owner.id().equals(self));
    if (mine) {
      return rt.host != null && rt.host.accepts(shard) ? SELF : null;
    }
    return owner.id();
  }

  /** The epoch of the shard's claim in the current config. */
  long claimEpoch(int shard) {
    return rt.view().epoch(shard - 1);
  }

  /** Hands a message to its owner; false if refused at once (the route keeps it). */
  boolean dispatch(Pending p, PodId to) {
    if (to == SELF) {
      p.where = "in the mailbox of the entity on this pod";
      return rt.host != null && rt.host.deliverLocal(p);
    }
    PeerClient c = rt.client(to);
    p.where = "sent to pod " + to + ", no answer yet";
    c.enqueue(p);
    return true;
  }

  /** A message was resolved by its owner: handled or failed, or refused ({@code retry}). */
  void resolved(Pending p, boolean retry) {
    routes[p.shard].resolved(p, retry);
  }

  void holding(ShardRoute r, boolean on) {
    if (on) {
      holding.add(r);
    } else {
      holding.remove(r);
    }
  }

  /** The config changed, or a shard became served here: waiting messages may go now. */
  void kickAll() {
    for (ShardRoute r : holding) {
      r.kick();
    }
  }

  void kick(int shard) {
    routes[shard].kick();
  }

  /** Fails messages past their deadline, saying where each one waited. */
  void expire() {
    List<Pending> expired = rt.timeouts.expired(rt.ticker.nanoTime());
    if (!expired.isEmpty()) {
      // Failing a future runs its callers' continuations: never on the pod's timer thread.
      Thread.ofVirtual().name("atoll-timeouts").start(() -> fail(expired));
    }
  }

  private void fail(List<Pending> expired) {
    for (Pending p : expired) {
      long waited = TimeUnit.NANOSECONDS.toMillis(rt.ticker.nanoTime() - p.startNanos);
      DeliveryException e = new DeliveryException(DeliveryException.Reason.TIMEOUT,
          (p.ask ? "ask to " : "tell to ") + p.describe() + " timed out after " + waited + " ms; it was "
              + p.where);
      if (p.completeExceptionally(e)) {
        PeerClient c = p.client;
        if (c != null) {
          c.forget(p);
        }
      }
      routes[p.shard].timedOut(p);
    }
  }

  /** Fails every message in flight (the sharding is closing). */
  void failAll(String why) {
    DeliveryException e = new DeliveryException(DeliveryException.Reason.SHUT_DOWN, why);
    for (ShardRoute r : routes) {
      if (r != null) {
        r.failAll(e);
      }
    }
    for (Pending p : rt.timeouts.all()) {
      p.completeExceptionally(e);
    }
  }

  int bufferSize() {
    return rt.settings.bufferSize();
  }

  long now() {
    return rt.ticker.nanoTime();
  }

  void schedule(Runnable r, long delayNanos) {
    rt.schedule(r, delayNanos);
  }
}

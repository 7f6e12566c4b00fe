package io.atoll.runtime.internal;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Sharding;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving side of a pod: which shards it serves, under which epoch, and the entities living
 * in them.
 *
 * <p>A shard is served ({@code ACTIVE}) from when a config names this pod its owner at an epoch
 * no older than any release the pod has done of it, until it is released (hand-off, graceful
 * stop), fenced (the lease ran out), or a config names another owner. Messages queued before a
 * release are handled first; messages after it are bounced back to their senders, who retry at
 * the new owner.
 *
 * <p>Delivery and release meet at a per-shard gate: a delivery enters the gate, checks that the
 * shard is active, queues the message, and leaves; a release changes the state and then waits for
 * the gate to empty before it stops the entities. So no message slips into an entity after its
 * stop marker unnoticed, and no entity starts in a shard being released.
 */
final class EntityHost {

  private static final Logger log = LoggerFactory.getLogger(EntityHost.class);

  static final int NONE = 0;
  static final int ACTIVE = 1;
  static final int RELEASING = 2;

  /** One shard on this pod. State changes happen under the host's monitor. */
  static final class ShardState {
    final int shard;
    volatile int state = NONE;
    /** The epoch of the claim this pod serves the shard under; new activations take it as token. */
    volatile long epoch;
    /** Never serve the shard again under a claim older than this (set by releases). */
    long releasedBelow;
    /** Completes when the release in progress (state RELEASING) has stopped every entity. */
    java.util.concurrent.CompletableFuture<Void> stopped = java.util.concurrent.CompletableFuture.completedFuture(null);
    final AtomicInteger gate = new AtomicInteger();
    final ConcurrentHashMap<String, EntityInstance>[] entities;

    @SuppressWarnings({"unchecked", "rawtypes"}) // generic arrays cannot be created directly
    ShardState(int shard, int types) {
      this.shard = shard;
      this.entities = new ConcurrentHashMap[types];
    }

    ConcurrentHashMap<String, EntityInstance> map(int type) {
      ConcurrentHashMap<String, EntityInstance> m = entities[type];
      if (m == null) {
        synchronized (this) {
          m = entities[type];
          if (m == null) {
            m = new ConcurrentHashMap<>(4);
            entities[type] = m;
          }
        }
      }
      return m;
    }

    List<EntityInstance> instances() {
      List<EntityInstance> all = new ArrayList<>();
      for (ConcurrentHashMap<String, EntityInstance> m : entities) {
        if (m != null) {
          all.addAll(m.values());
        }
      }
      return all;
    }

  }

  private final PodRuntime rt;
  private final ShardState[] shards;
  private final TypeRuntime[] types;
  private volatile boolean stopping;
  private final AtomicInteger activations = new AtomicInteger();

  EntityHost(PodRuntime rt, int numberOfShards, TypeRuntime[] hostedTypes) {
    this.rt = rt;
    this.types = hostedTypes;
    this.shards = new ShardState[numberOfShards + 1];
    for (int s = 1; s <= numberOfShards; s++) {
      shards[s] = new ShardState(s, hostedTypes.length);
    }
  }

  long now() {
    return rt.ticker.nanoTime();
  }

  PodId self() {
    return rt.self();
  }

  Sharding sharding() {
    return rt.sharding;
  }

  void start(EntityInstance instance) {
    rt.startEntityThread(instance);
  }

  /** Whether a new message for the shard is accepted here now. */
  boolean accepts(int shard) {
    return !stopping && shards[shard].state == ACTIVE && rt.leaseValid();
  }

  /** Whether a queued message of the shard may still be handled here. */
  boolean serving(ShardState s) {
    return serving(s, now());
  }

  /** The same, with the current time already read. */
  boolean serving(ShardState s, long now) {
    int st = s.state;
    return (st == ACTIVE || st == RELEASING) && rt.leaseValid(now);
  }

  /** Delivers a local send; false if the shard is not accepted here (the route keeps it). */
  boolean deliverLocal(Pending p) {
    TypeRuntime t = p.type.hosted() ? p.type : null;
    if (t == null) {
      p.failed(new DeliveryException(DeliveryException.Reason.UNKNOWN_ENTITY_TYPE, "send to " + p.describe()
          + " failed: this pod owns the shard but does not host entity type '" + p.type.name
          + "'; register it on every pod"));
      return true;
    }
    return deliver(shards[p.shard], t, p.entityId, p);
  }

  /** Delivers a message from another pod; false if the shard is not accepted here. */
  boolean deliverRemote(int shard, TypeRuntime t, String entityId, InboundDelivery d) {
    return deliver(shards[shard], t, entityId, d);
  }

  private boolean deliver(ShardState s, TypeRuntime t, String entityId, Delivery d) {
    s.gate.incrementAndGet();
    try {
      if (s.state != ACTIVE || stopping || !rt.leaseValid()) {
        return false;
      }
      ConcurrentHashMap<String, EntityInstance> map = s.map(t.index);
      for (;;) {
        EntityInstance inst = map.get(entityId);
        if (inst == null) {
          EntityInstance fresh = new EntityInstance(this, s, t, entityId);
          inst = map.putIfAbsent(entityId, fresh);
          if (inst == null) {
            inst = fresh;
          }
        }
        int r = inst.offer(d);
        if (r == EntityInstance.ACCEPTED) {
          return true;
        }
        if (r == EntityInstance.CLOSED) {
          return false;
        }
        map.remove(entityId, inst); // passivated meanwhile: start a new one
      }
    } finally {
      s.gate.decrementAndGet();
    }
  }

  private static void awaitGate(ShardState s) {
    while (s.gate.get() != 0) {
      Thread.onSpinWait();
    }
  }

  // ---- Config, release and fencing. Serialized by this monitor.

  /** Applies a new view: starts serving shards it gives this pod, drops shards it gives away. */
  void onView(ClusterConfig view, PodId self, boolean selfActive) {
    List<ShardState> lost = new ArrayList<>();
    List<Integer> gained = new ArrayList<>();
    synchronized (this) {
      for (int pos = 0; pos < view.size(); pos++) {
        ShardState s = shards[pos + 1];
        PodEntry owner = view.ownerEntry(pos);
        boolean mine = selfActive && owner != null && owner.id().equals(self);
        long epoch = view.epoch(pos);
        if (mine) {
          if (s.state == NONE && epoch >= s.releasedBelow && !stopping) {
            s.epoch = epoch;
            s.state = ACTIVE;
            gained.add(s.shard);
          } else if (s.state == ACTIVE && epoch > s.epoch) {
            s.epoch = epoch; // re-issued to us: new activations carry the newer token
          }
        } else if (s.state == ACTIVE) {
          // Given away without a release (we were taken for dead): stop at once.
          s.state = NONE;
          lost.add(s);
        }
      }
    }
    for (ShardState s : lost) {
      log.warn("shard {} was given to another pod without a hand-off; stopping its entities", s.shard);
      fenceShard(s);
    }
    for (int shard : gained) {
      rt.observer.shardActivated(shard, shards[shard].epoch);
      rt.router.kick(shard);
    }
  }

  /**
   * Stops serving shards for a hand-off: queued messages are handled, each activation gets its
   * termination message, and activations still busy after {@code timeoutMillis} are fenced (their
   * queued messages bounced). It returns only once no handler of these shards is running any more:
   * a shard is never reported released while one of its entities could still be live here. (If a
   * handler blocks longer than the manager waits, the manager gives up, re-grants the shard to
   * this pod, and it is served again once the handler ends.)
   *
   * @return the shards this pod no longer serves (all asked for, except any it serves under a
   *     claim at least as new as {@code newEpoch})
   */
  List<Integer> release(List<Integer> shardIds, long newEpoch, long timeoutMillis) {
    List<ShardState> mine = new ArrayList<>();
    List<ShardState> others = new ArrayList<>(); // already being released by someone else
    List<Integer> released = new ArrayList<>();
    synchronized (this) {
      for (int id : shardIds) {
        ShardState s = shards[id];
        s.releasedBelow = Math.max(s.releasedBelow, newEpoch);
        if (s.state == ACTIVE && s.epoch >= newEpoch) {
          continue; // already re-issued to us at a newer epoch
        }
        if (s.state == ACTIVE) {
          s.state = RELEASING;
          s.stopped = new java.util.concurrent.CompletableFuture<>();
          mine.add(s);
        } else if (s.state == RELEASING) {
          others.add(s);
        }
        released.add(id);
      }
    }
    stopShards(mine, timeoutMillis);
    for (ShardState s : others) {
      s.stopped.join(); // never reported released while another release still stops its entities
    }
    rt.reapplyView(); // a claim that gave a shard back while it was being released takes effect now
    return released;
  }

  /** Graceful stop: refuses new messages and stops every shard with termination messages. */
  void releaseAll(long timeoutMillis) {
    List<ShardState> all = new ArrayList<>();
    synchronized (this) {
      stopping = true;
      for (int s = 1; s < shards.length; s++) {
        shards[s].releasedBelow = Long.MAX_VALUE;
        if (shards[s].state == ACTIVE) {
          shards[s].state = RELEASING;
          shards[s].stopped = new java.util.concurrent.CompletableFuture<>();
          all.add(shards[s]);
        }
      }
    }
    stopShards(all, timeoutMillis);
  }

  private void stopShards(List<ShardState> list, long timeoutMillis) {
    if (list.isEmpty()) {
      return;
    }
    List<EntityInstance> instances = new ArrayList<>();
    for (ShardState s : list) {
      awaitGate(s);
      instances.addAll(s.instances());
    }
    CountDownLatch done = new CountDownLatch(instances.size());
    for (EntityInstance i : instances) {
      i.release(done);
    }
    boolean inTime;
    try {
      inTime = done.await(timeoutMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      inTime = false;
    }
    if (!inTime) {
      log.warn("{} entities did not stop within {} ms; fencing them and waiting for handlers still running",
          done.getCount(), timeoutMillis);
      for (EntityInstance i : instances) {
        i.fence();
      }
      for (EntityInstance i : instances) {
        while (i.busy()) {
          java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // a handler's end has no signal
        }
      }
    }
    synchronized (this) {
      for (ShardState s : list) {
        if (s.state == RELEASING) {
          s.state = NONE;
        }
      }
    }
    for (EntityInstance i : instances) {
      removed(i);
    }
    for (ShardState s : list) {
      s.stopped.complete(null);
      rt.observer.shardReleased(s.shard);
    }
  }

  /** The lease ran out: stop serving everything at once, without termination messages. */
  void fenceAll() {
    List<ShardState> fenced = new ArrayList<>();
    synchronized (this) {
      for (int s = 1; s < shards.length; s++) {
        if (shards[s].state != NONE) {
          shards[s].state = NONE;
          fenced.add(shards[s]);
        }
      }
    }
    for (ShardState s : fenced) {
      fenceShard(s);
    }
  }

  private void fenceShard(ShardState s) {
    awaitGate(s);
    for (EntityInstance i : s.instances()) {
      i.fence();
      removed(i); // only what was fenced: the shard may already be served again
    }
    rt.observer.shardReleased(s.shard);
  }

  /** Forgets releases (a new incarnation starts clean). */
  synchronized void resetForNewIncarnation() {
    stopping = false;
    for (int s = 1; s < shards.length; s++) {
      shards[s].releasedBelow = 0;
    }
  }

  /** Passivates entities idle longer than their type's idle time. */
  void passivateIdle() {
    long now = now();
    for (int s = 1; s < shards.length; s++) {
      ShardState st = shards[s];
      if (st.state != ACTIVE) {
        continue;
      }
      for (TypeRuntime t : types) {
        if (t.idleNanos <= 0) {
          continue;
        }
        ConcurrentHashMap<String, EntityInstance> m = st.entities[t.index];
        if (m == null) {
          continue;
        }
        long idleBefore = now - t.idleNanos;
        for (EntityInstance i : m.values()) {
          if (i.lastActive - idleBefore < 0 && i.passivateIfIdle(idleBefore)) {
            m.remove(i.id, i);
          }
        }
      }
    }
  }

  void removed(EntityInstance i) {
    ConcurrentHashMap<String, EntityInstance> m = i.shard.entities[i.type.index];
    if (m != null) {
      m.remove(i.id, i);
    }
  }

  void activated(EntityInstance i) {
    activations.incrementAndGet();
    rt.observer.entityActivated(i.type.name, i.id, i.token());
  }

  void deactivated(EntityInstance i) {
    activations.decrementAndGet();
    rt.observer.entityDeactivated(i.type.name, i.id, i.token());
  }

  void terminationFailed(EntityInstance i, Throwable t) {
    log.warn("entity {} failed on its termination message: {}", i, t.toString());
  }

  /** How many activations are live on this pod. */
  int activeEntities() {
    return activations.get();
  }

  /** The shards this pod serves now. */
  List<Integer> servedShards() {
    List<Integer> out = new ArrayList<>();
    for (int s = 1; s < shards.length; s++) {
      if (shards[s].state == ACTIVE) {
        out.add(s);
      }
    }
    return out;
  }

  static boolean active(PodEntry e) {
    return e != null && e.status() == PodStatus.ACTIVE;
  }
}

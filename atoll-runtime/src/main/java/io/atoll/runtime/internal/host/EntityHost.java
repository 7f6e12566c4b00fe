package io.atoll.runtime.internal.host;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.OverloadCause;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.runtime.internal.cluster.Lease;
import io.atoll.runtime.internal.cluster.View;
import io.atoll.runtime.internal.util.Draining;
import io.atoll.runtime.internal.util.GuardedBy;
import io.atoll.runtime.internal.util.PodContext;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving side of a pod: which shards it serves, under which epoch, and the entities living
 * in them.
 *
 * <p>Every transition of a shard's serving state (a view gives it, a release or a fence takes it,
 * a new incarnation forgets releases) happens under this one monitor, and delivery meets those
 * transitions at the per-shard gate: the state machine, the gate and the stops stay in this file
 * to keep that lock and its invariants in one place. The mailbox and activation are in
 * {@link EntityInstance}, the per-shard data in {@link ShardState}, and the counts, events and
 * threads of the activations, which the instances report to, in {@link Activations}.
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
 *
 * <p>It reads the lease ({@link Lease#valid()}) on every delivery and reports upward through
 * {@link Callback}: a shard became served here, a release finished.
 *
 * <p><b>Why some 420 lines.</b> What is left here is one state machine and the one lock that
 * guards it: the serving state of every shard (view, release, fence, new incarnation, growth) and
 * the delivery that must meet each of those transitions at the shard's gate. Everything that does
 * not take this monitor has already left ({@link EntityInstance}, {@link ShardState},
 * {@link Activations}); splitting the transitions from the delivery would put the two sides of
 * the gate's invariant (no message after a stop marker, no start in a shard being released) in
 * two files that must take the same lock in the same order.
 */
public final class EntityHost {

  private static final Logger log = LoggerFactory.getLogger(EntityHost.class);

  /**
   * Most messages one entity's mailbox links (or the pod's {@code maxQueued}, if lower); more are
   * refused as overloaded. Half of what one inbound stream lets wait, so that an entity whose
   * handler blocks cannot fill a stream's backlog alone and stop the stream for every other entity
   * (several can, until their messages' deadlines pass: see {@link InboundStream}), while a burst
   * of a couple of thousand messages to one entity still queues.
   */
  static final int MAX_QUEUED_PER_ENTITY = InboundStream.MAX_QUEUED / 2;

  /** What the host reports upward. */
  public interface Callback {
    /** The host began serving {@code shard}: messages waiting for it may go now. */
    void shardServed(int shard);

    /** A release finished: a claim that gave a shard back meanwhile may take effect now. */
    void releaseFinished();
  }

  private final PodContext ctx;
  private final View view;
  private final Lease lease;
  private final Callback callback;
  private final ShardingObserver observer;
  /** By shard number (index 0 unused); replaced by a longer copy when spaces are appended ({@link #grow}). */
  private volatile ShardState[] shards;
  private final TypeRuntime[] types;
  private final Map<String, TypeRuntime> typesByName;
  private final Activations activations;
  private final Admission admission;
  /** States that shards' previous owners carried here in hand-offs, for the first activations. */
  private final CarriedStates carried = new CarriedStates();
  @GuardedBy("this") // for writes
  private volatile boolean stopping;

  /**
   * A host of {@code hostedTypes} for the pod of {@code view}, serving while {@code lease} is valid.
   *
   * @param sharding the facade entities see as {@link io.atoll.runtime.EntityContext#sharding()}
   */
  public EntityHost(PodContext ctx, View view, Lease lease, TypeRuntime[] hostedTypes, Sharding sharding,
      Callback callback) {
    this.ctx = ctx;
    this.view = view;
    this.lease = lease;
    this.callback = callback;
    this.observer = ctx.settings().observer();
    this.types = hostedTypes.clone();
    Map<String, TypeRuntime> byName = new LinkedHashMap<>();
    for (TypeRuntime t : types) {
      byName.put(t.name, t);
      if (t.inlineLocalSends) {
        Draining.enable(); // from now on this JVM's threads say when they must not run a handler
      }
    }
    this.typesByName = Collections.unmodifiableMap(byName);
    int numberOfShards = view.numberOfShards();
    this.shards = new ShardState[numberOfShards + 1];
    for (int s = 1; s <= numberOfShards; s++) {
      shards[s] = new ShardState(s, types.length);
    }
    this.admission = new Admission(types.length, ctx.settings().maxQueueTime().toNanos(), ctx.ticker().nanoTime());
    this.activations = new Activations(ctx.ticker(), view::self, lease, sharding, observer, () -> shards, types,
        admission, carried);
  }

  /**
   * The layout grew to {@code size} shards (spaces appended at run time): states for the new
   * shards, before the view publishes a config that numbers them. A stopping host never serves
   * them.
   */
  public synchronized void grow(int size) {
    ShardState[] old = shards;
    if (size + 1 <= old.length) {
      return;
    }
    ShardState[] next = java.util.Arrays.copyOf(old, size + 1);
    for (int s = old.length; s <= size; s++) {
      next[s] = new ShardState(s, types.length);
      if (stopping) {
        next[s].releasedBelow = Long.MAX_VALUE;
      }
    }
    shards = next;
  }

  /** Whether this pod hosts a type named {@code name}. */
  public boolean hosts(String name) {
    return typesByName.containsKey(name);
  }

  /** The hosted type named {@code name}, or null. */
  TypeRuntime hostedType(String name) {
    return typesByName.get(name);
  }

  /** The names of the hosted types, for error messages. */
  String hostedTypeNames() {
    return String.join(", ", typesByName.keySet());
  }

  /** Whether a new message for the shard is accepted here now. */
  public boolean accepts(int shard) {
    return accepts(shard, ctx.ticker().nanoTime());
  }

  /** As {@link #accepts(int)}, with the time read moments ago by the caller. */
  public boolean accepts(int shard, long now) {
    return !stopping && shards[shard].state == ShardState.ACTIVE && lease.valid(now);
  }

  /**
   * Delivers a message sent on this pod; false if the shard is not accepted here (the sender's
   * route keeps it). A type this pod does not host fails the delivery.
   */
  public boolean deliverLocal(int shard, TypeRuntime type, String entityId, Delivery d) {
    return deliverLocal(shard, type, entityId, d, false, ctx.ticker().nanoTime());
  }

  /**
   * As {@link #deliverLocal(int, TypeRuntime, String, Delivery)}; {@code callerMayRun} if the
   * calling thread is the sender's own and holds no lock of the pod: if the type declares inline
   * local sends and the entity is idle and active, the message is handled on this thread before
   * this returns (see {@link EntityInstance#runHere}). {@code now} was read moments ago by the caller; the gate's
   * lease check uses it, and the drain checks the lease again with the clock before the handler.
   */
  public boolean deliverLocal(int shard, TypeRuntime type, String entityId, Delivery d, boolean callerMayRun,
      long now) {
    if (!type.hosted()) {
      d.failed(new DeliveryException(DeliveryException.Reason.UNKNOWN_ENTITY_TYPE, "send to " + type.name + "/"
          + entityId + " (shard " + shard + ") failed: this pod owns the shard but does not host entity type '"
          + type.name + "'; register it on every pod"));
      return true;
    }
    return deliver(shards[shard], type, entityId, d, callerMayRun, now);
  }

  /** Delivers a message from another pod; false if the shard is not accepted here. */
  boolean deliverRemote(int shard, TypeRuntime t, String entityId, InboundDelivery d) {
    return deliver(shards[shard], t, entityId, d, false, ctx.ticker().nanoTime());
  }

  private boolean deliver(ShardState s, TypeRuntime t, String entityId, Delivery d, boolean callerMayRun,
      long now) {
    boolean[] draining = callerMayRun && t.inlineLocalSends ? Draining.mark() : null;
    Object r;
    s.gate.incrementAndGet();
    try {
      r = enter(s, t, entityId, d, draining != null && !draining[0], now);
    } finally {
      s.gate.decrementAndGet();
    }
    if (r instanceof EntityInstance i) {
      i.runHere(d, draining); // out of the gate: a release waiting for it need not wait for a handler
      return true;
    }
    if (r instanceof Refused no) {
      // Out of the gate too: the sender's continuations run now, and may block or send again.
      try {
        activations.refused(t, no.cause());
      } finally {
        d.failed(new DeliveryException(DeliveryException.Reason.OVERLOADED, no.why(),
            java.time.Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(no.waitNanos()))));
      }
      return true;
    }
    return r == Boolean.TRUE;
  }

  /** A delivery refused as overloaded inside the gate, to be told to its sender outside it. */
  private record Refused(OverloadCause cause, long waitNanos, String why) {}

  /**
   * A delivery inside the shard's gate: false if the shard is not accepted here, true if the
   * message was queued or failed, the instance whose drain the caller must run now, or a
   * {@link Refused} the caller tells the sender once out of the gate.
   */
  private Object enter(ShardState s, TypeRuntime t, String entityId, Delivery d, boolean runHere, long now) {
    if (s.state != ShardState.ACTIVE || stopping || !lease.valid(now)) {
      return false;
    }
    int maxQueued = ctx.settings().maxQueued();
    if (activations.queued() >= maxQueued) {
      return new Refused(OverloadCause.POD_QUEUE_FULL, admission.standing(now), "message to " + t.name + "/"
          + entityId + " refused by pod " + view.self() + ": overloaded, " + maxQueued + " messages already wait for"
          + " their entities here (maxQueued); send less or add pods");
    }
    InstanceTable map = s.table(t.index);
    for (;;) {
      EntityInstance inst = map.get(entityId);
      // Before a new instance is made: a refused message leaves nothing behind.
      int ahead = inst == null ? 0 : inst.ahead();
      Admission.Refusal late = admission.admit(t.index, ahead, now, d.deadlineNanos());
      if (late != null) {
        return new Refused(late.cause(), late.waitNanos(), refusal(t, entityId, late, now, d.deadlineNanos()));
      }
      if (inst == null) {
        EntityInstance fresh = new EntityInstance(activations, s, t, entityId);
        inst = map.putIfAbsent(fresh);
        if (inst == null) {
          inst = fresh;
        }
      }
      // Only a message that waits behind no other of its entity's measures the pod's standing delay.
      d.queuedAt(ahead == 0 ? now : Delivery.NOT_QUEUED);
      EntityInstance.Offer r = inst.offer(d, Math.min(maxQueued, MAX_QUEUED_PER_ENTITY), runHere);
      if (r == EntityInstance.Offer.ACCEPTED) {
        return true;
      }
      if (r == EntityInstance.Offer.RUN_HERE) {
        return inst;
      }
      if (r == EntityInstance.Offer.FULL) {
        return new Refused(OverloadCause.ENTITY_QUEUE_FULL, inst.ahead() * admission.handlerNanos(t.index, now),
            "message to " + t.name + "/" + entityId + " refused by pod " + view.self() + ": overloaded, "
            + Math.min(maxQueued, MAX_QUEUED_PER_ENTITY)
            + " messages already wait for this entity (its handler is slow or blocked); send less to it");
      }
      if (r == EntityInstance.Offer.CLOSED) {
        // Fenced earlier and still finishing a handler (the shard is served again): a successor
        // takes the messages and starts only once that handler has returned.
        map.replace(inst, new EntityInstance(inst));
        continue;
      }
      map.remove(inst); // passivated meanwhile: start a new one
    }
  }

  private String refusal(TypeRuntime t, String entityId, Admission.Refusal r, long now, long deadline) {
    String waits = "about " + TimeUnit.NANOSECONDS.toMillis(r.waitNanos()) + " ms";
    return "message to " + t.name + "/" + entityId + " refused by pod " + view.self() + ": overloaded, "
        + switch (r.cause()) {
          case QUEUE_TIME -> "it would wait " + waits + " for its entity, more than this pod's maxQueueTime of "
              + ctx.settings().maxQueueTime().toMillis() + " ms";
          default -> "it would be done in " + waits + ", past its sender's deadline in "
              + TimeUnit.NANOSECONDS.toMillis(deadline - now) + " ms";
        } + "; retry after that, send less, or add pods";
  }

  private static void awaitGate(ShardState s) {
    while (s.gate.get() != 0) {
      Thread.onSpinWait();
    }
  }

  // ---- Config, release and fencing. Serialized by this monitor (and by the view's guard).

  /** Applies a new view: starts serving shards it gives this pod, drops shards it gives away. */
  public void onView(ClusterConfig view, PodId self, boolean selfActive) {
    List<ShardState> lost = new ArrayList<>();
    List<Integer> gained = new ArrayList<>();
    synchronized (this) {
      for (int pos = 0; pos < view.size(); pos++) {
        ShardState s = shards[pos + 1];
        PodEntry owner = view.ownerEntry(pos);
        boolean mine = selfActive && owner != null && owner.id().equals(self);
        long epoch = view.epoch(pos);
        if (mine) {
          if (s.state == ShardState.NONE && epoch >= s.releasedBelow && !stopping) {
            s.epoch = epoch;
            s.state = ShardState.ACTIVE;
            gained.add(s.shard);
          } else if (s.state == ShardState.ACTIVE && epoch > s.epoch) {
            s.epoch = epoch; // re-issued to us: new activations carry the newer token
          }
        } else if (s.state == ShardState.ACTIVE) {
          // Given away without a release (we were taken for dead): stop at once.
          s.state = ShardState.NONE;
          lost.add(s);
        }
      }
    }
    for (ShardState s : lost) {
      log.warn("shard {} was given to another pod without a hand-off; stopping its entities", s.shard);
      fenceShard(s);
    }
    for (int shard : gained) {
      observer.shardActivated(shard, shards[shard].epoch);
      callback.shardServed(shard);
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
   *     claim at least as new as {@code newEpoch}), and what the durable activations this release
   *     ended left, by shard
   */
  public Released release(List<Integer> shardIds, long newEpoch, long timeoutMillis) {
    List<ShardState> mine = new ArrayList<>();
    List<ShardState> others = new ArrayList<>(); // already being released by someone else
    List<Integer> released = new ArrayList<>();
    synchronized (this) {
      for (int id : shardIds) {
        ShardState s = shards[id];
        s.releasedBelow = Math.max(s.releasedBelow, newEpoch);
        if (s.state == ShardState.ACTIVE && s.epoch >= newEpoch) {
          continue; // already re-issued to us at a newer epoch
        }
        if (s.state == ShardState.ACTIVE) {
          s.state = ShardState.RELEASING;
          s.stopped = new CompletableFuture<>();
          mine.add(s);
        } else if (s.state == ShardState.RELEASING) {
          others.add(s);
        }
        released.add(id);
      }
    }
    Map<Integer, List<Left>> left = stopShards(mine, timeoutMillis);
    for (ShardState s : others) {
      s.stopped.join(); // never reported released while another release still stops its entities
    }
    callback.releaseFinished(); // a claim that gave a shard back while it was being released takes effect now
    return new Released(released, left);
  }

  /**
   * What a release did: the shards this pod no longer serves, and per shard what its durable
   * activations left for the next owner (only those this release ended, none that a fence ended).
   */
  public record Released(List<Integer> shards, Map<Integer, List<Left>> left) {}

  /**
   * Keeps what the previous owner of {@code shard} carried here in the hand-off that gives it to
   * this pod under the claim at {@code epoch}, for the first activation of each entity under that
   * claim. Refused (0) once this pod has served the shard under that claim or a newer one, even if
   * it stopped since (a lapsed lease): an activation may already have read the store, saved and
   * ended, and a late carried state would then be older than the store. ({@code ShardState.epoch}
   * is the claim last served, and claims of a shard only grow.)
   *
   * @return how many states were kept
   */
  public int keepCarried(int shard, long epoch, List<Left> left) {
    synchronized (this) {
      ShardState s = shard >= 1 && shard < shards.length ? shards[shard] : null;
      if (s == null || stopping || s.epoch >= epoch || epoch < s.releasedBelow) {
        return 0;
      }
      return carried.keep(shard, epoch, left, ctx.ticker().nanoTime());
    }
  }

  /** How many carried states wait for their activations (for tests and metrics). */
  public int carriedWaiting() {
    return carried.size();
  }

  /** Drops carried states that waited past their time (the pod's timer calls it). */
  public void expireCarried() {
    carried.expire(ctx.ticker().nanoTime());
  }

  /** Graceful stop: refuses new messages and stops every shard with termination messages. */
  public void releaseAll(long timeoutMillis) {
    List<ShardState> all = new ArrayList<>();
    synchronized (this) {
      stopping = true;
      for (int s = 1; s < shards.length; s++) {
        shards[s].releasedBelow = Long.MAX_VALUE;
        if (shards[s].state == ShardState.ACTIVE) {
          shards[s].state = ShardState.RELEASING;
          shards[s].stopped = new CompletableFuture<>();
          all.add(shards[s]);
        }
      }
    }
    stopShards(all, timeoutMillis);
  }

  private Map<Integer, List<Left>> stopShards(List<ShardState> list, long timeoutMillis) {
    if (list.isEmpty()) {
      return Map.of();
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
    }
    // Also when every stop was counted in time: a fence from elsewhere (the lease ran out:
    // fenceAll) finishes the stop markers of instances whose handlers still run. An instance
    // stopped by its marker is no longer busy, so this costs a released shard nothing.
    for (EntityInstance i : instances) {
      while (i.busy()) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // a handler's end has no signal
      }
    }
    synchronized (this) {
      for (ShardState s : list) {
        if (s.state == ShardState.RELEASING) {
          s.state = ShardState.NONE;
        }
      }
    }
    Map<Integer, List<Left>> left = new java.util.HashMap<>();
    for (EntityInstance i : instances) {
      activations.removed(i);
      io.atoll.core.spi.StoredState c = i.left();
      if (c != null) {
        left.computeIfAbsent(i.shard.shard, k -> new ArrayList<>()).add(new Left(i.type.name, i.id, c));
      }
    }
    for (ShardState s : list) {
      s.stopped.complete(null);
      observer.shardReleased(s.shard);
    }
    return left;
  }

  /** The lease ran out: stop serving everything at once, without termination messages. */
  public void fenceAll() {
    List<ShardState> fenced = new ArrayList<>();
    synchronized (this) {
      for (int s = 1; s < shards.length; s++) {
        if (shards[s].state != ShardState.NONE) {
          shards[s].state = ShardState.NONE;
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
      i.fence(); // it leaves the map when its activation has ended, which may be later
    }
    observer.shardReleased(s.shard);
  }

  /** Forgets releases (a new incarnation starts clean). */
  public synchronized void resetForNewIncarnation() {
    stopping = false;
    for (int s = 1; s < shards.length; s++) {
      shards[s].releasedBelow = 0;
    }
  }

  /** Whether a hosted type's entities run on the pod's shared drains: then {@link #watchDrains} is due. */
  public boolean sharesDrains() {
    for (TypeRuntime t : types) {
      if (t.sharedDrains) {
        return true;
      }
    }
    return false;
  }

  /**
   * The shared drains' watchdog: starts another drain when entities wait behind handlers that
   * block or behind busy drains. Call from the pod timer every {@link #WATCH_DRAINS_MILLIS} ms.
   */
  public void watchDrains() {
    activations.watchDrains();
  }

  /** The period of {@link #watchDrains}, in milliseconds. */
  public static final long WATCH_DRAINS_MILLIS = SharedDrains.WATCH_MILLIS;

  /** Passivates entities idle longer than their type's idle time. */
  public void passivateIdle() {
    activations.passivateIdle();
  }

  /** How many activations are live on this pod. */
  public int activeEntities() {
    return activations.active();
  }

  /** The shards this pod serves now. */
  public List<Integer> servedShards() {
    List<Integer> out = new ArrayList<>();
    for (int s = 1; s < shards.length; s++) {
      if (shards[s].state == ShardState.ACTIVE) {
        out.add(s);
      }
    }
    return out;
  }

  static boolean active(PodEntry e) {
    return e != null && e.status() == io.atoll.core.PodStatus.ACTIVE;
  }
}

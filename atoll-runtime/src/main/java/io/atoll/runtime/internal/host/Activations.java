package io.atoll.runtime.internal.host;

import io.atoll.core.FencingToken;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.runtime.OverloadCause;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.runtime.internal.cluster.Lease;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bookkeeping of the activations on this pod, and the door each {@link EntityInstance}
 * reports through ({@link InstanceHost}): how many activations live and how many messages wait in
 * mailboxes, the observer's entity events, the entity threads and the drains shared by entities
 * whose handlers never block ({@link SharedDrains}), and the fencing token of an
 * activation starting now; and passivation of idle entities. {@link EntityHost} decides which shards are served and delivers into
 * the instances; this class only counts and reports what the instances tell it. Thread-safe.
 */
final class Activations implements InstanceHost {

  private static final Logger log = LoggerFactory.getLogger(Activations.class);

  private final Ticker ticker;
  private final Supplier<PodId> self;
  private final Lease lease;
  private final Sharding sharding;
  private final ShardingObserver observer;
  private final Supplier<ShardState[]> shards;
  private final TypeRuntime[] types;
  private final Admission admission;
  private final CarriedStates carried;
  private final ThreadFactory entityThreads = Thread.ofVirtual().name("atoll-entity").factory();
  private final SharedDrains sharedDrains =
      new SharedDrains(Thread.ofVirtual().name("atoll-drain").factory(), SharedDrains.defaultBusyLimit());
  private final AtomicInteger activations = new AtomicInteger();
  /** Messages waiting in mailboxes (not yet taken by a drain), bounded by {@code maxQueued}. */
  private final AtomicInteger queued = new AtomicInteger();

  /**
   * @param self this pod's identity now (a new incarnation changes it)
   * @param lease read for whether a shard is still served and for the tokens' generation
   * @param sharding the facade entities see as {@link io.atoll.runtime.EntityContext#sharding()}
   * @param shards the host's shards by number (index 0 unused), read for passivation; the array
   *     grows when spaces are appended, so it is read afresh each time
   * @param types the hosted types, by index
   * @param admission told how long messages waited and handlers ran; asked whether a message is too
   *     late to begin
   * @param carried the states hand-offs carried here, taken by activations
   */
  Activations(Ticker ticker, Supplier<PodId> self, Lease lease, Sharding sharding, ShardingObserver observer,
      Supplier<ShardState[]> shards, TypeRuntime[] types, Admission admission, CarriedStates carried) {
    this.admission = admission;
    this.carried = carried;
    this.ticker = ticker;
    this.self = self;
    this.lease = lease;
    this.sharding = sharding;
    this.observer = observer;
    this.shards = shards;
    this.types = types;
  }

  /** Passivates entities of served shards idle longer than their type's idle time. */
  void passivateIdle() {
    long now = now();
    ShardState[] all = shards.get();
    for (int s = 1; s < all.length; s++) {
      ShardState st = all[s];
      if (st.state != ShardState.ACTIVE) {
        continue;
      }
      for (TypeRuntime t : types) {
        if (t.idleNanos <= 0) {
          continue;
        }
        InstanceTable m = st.existingTable(t.index);
        if (m == null) {
          continue;
        }
        long idleBefore = now - t.idleNanos;
        for (EntityInstance i : m.values()) {
          if (i.lastActive - idleBefore < 0 && i.passivateIfIdle(idleBefore)) {
            m.remove(i);
          }
        }
      }
    }
  }

  /** Messages waiting in mailboxes now. */
  int queued() {
    return queued.get();
  }

  /** How many activations are live. */
  int active() {
    return activations.get();
  }

  @Override
  public void queued(int delta) {
    queued.addAndGet(delta);
  }

  @Override
  public long now() {
    return ticker.nanoTime();
  }

  @Override
  public void began(long waited, long now) {
    admission.began(waited, now);
  }

  @Override
  public boolean lateToBegin(TypeRuntime type, long now, long deadline) {
    return admission.lateToBegin(type.index, now, deadline);
  }

  @Override
  public void handlerTime(TypeRuntime type, long nanos, long now) {
    admission.handled(type.index, nanos, now);
  }

  @Override
  public void refused(TypeRuntime type, OverloadCause cause) {
    observer.messageRefused(type.name, cause);
  }

  @Override
  public PodId self() {
    return self.get();
  }

  @Override
  public Sharding sharding() {
    return sharding;
  }

  @Override
  public void start(EntityInstance instance) {
    if (instance.type.sharedDrains && !instance.waitsForPredecessor()) {
      sharedDrains.submit(instance);
    } else {
      // A successor waits for its fenced predecessor's handler on a thread of its own, never
      // holding a shared drain meanwhile.
      entityThreads.newThread(instance).start();
    }
  }

  /** The shared drains' watchdog ({@link SharedDrains#watch}); on the pod timer. */
  void watchDrains() {
    sharedDrains.watch();
  }

  @Override
  public boolean serving(ShardState s, long now) {
    int st = s.state;
    return (st == ShardState.ACTIVE || st == ShardState.RELEASING) && lease.valid(now);
  }

  @Override
  public FencingToken token(ShardState s) {
    return s.token(lease.generation());
  }

  @Override
  public io.atoll.core.spi.StoredState takeCarried(ShardState s, FencingToken token, String type, String id) {
    return carried.take(s.shard, token.epoch(), type, id, ticker.nanoTime());
  }

  @Override
  public void removed(EntityInstance i) {
    InstanceTable m = i.shard.existingTable(i.type.index);
    if (m != null) {
      m.remove(i);
    }
  }

  @Override
  public void activated(EntityInstance i) {
    activations.incrementAndGet();
    observer.entityActivated(i.type.name, i.id, i.token());
  }

  @Override
  public void deactivated(EntityInstance i) {
    activations.decrementAndGet();
    observer.entityDeactivated(i.type.name, i.id, i.token());
  }

  @Override
  public void hookFailed(EntityInstance i, String hook, Throwable t) {
    log.warn("entity {}: reporting its {} failed: {}", i, hook, t.toString());
  }

  @Override
  public void terminationFailed(EntityInstance i, Throwable t) {
    log.warn("entity {} failed on its termination message: {}", i, t.toString());
  }
}

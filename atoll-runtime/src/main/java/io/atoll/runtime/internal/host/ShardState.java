package io.atoll.runtime.internal.host;

import io.atoll.runtime.internal.util.GuardedBy;
import java.util.ArrayList;
import java.util.List;
import io.atoll.core.FencingToken;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One shard on this pod: whether it is served, under which epoch, and its entities by type. State
 * changes happen under the {@link EntityHost}'s monitor; the hot path reads {@link #state}
 * without it.
 */
final class ShardState {

  /** Not served here. */
  static final int NONE = 0;
  /** Served: new messages are accepted. */
  static final int ACTIVE = 1;
  /** Being released: queued messages are handled, new ones are refused. */
  static final int RELEASING = 2;

  final int shard;
  @GuardedBy("the host") // for writes
  volatile int state = NONE;
  /** The epoch of the claim this pod serves the shard under; new activations take it as token. */
  @GuardedBy("the host") // for writes
  volatile long epoch;
  /** Never serve the shard again under a claim older than this (set by releases). */
  @GuardedBy("the host")
  long releasedBelow;
  /** Completes when the release in progress (state RELEASING) has stopped every entity. */
  @GuardedBy("the host")
  CompletableFuture<Void> stopped = CompletableFuture.completedFuture(null);
  /** Deliveries in progress; a release waits for it to drain. */
  final AtomicInteger gate = new AtomicInteger();
  private static final VarHandle TABLE = MethodHandles.arrayElementVarHandle(InstanceTable[].class);

  /** Its entities by hosted type index; a type's table is made by its first entity here. */
  private final InstanceTable[] entities;
  /**
   * The token of the activations starting now, shared by all of them (an entity keeps a reference,
   * not its own copy): replaced when the epoch or the lease's generation changes. A benign race:
   * any thread may replace it with an equal one.
   */
  private volatile FencingToken token;

  ShardState(int shard, int types) {
    this.shard = shard;
    this.entities = new InstanceTable[types];
  }

  /** The table of a hosted type's entities here, made if it is not yet. */
  InstanceTable table(int type) {
    InstanceTable m = existingTable(type);
    if (m == null) {
      synchronized (this) {
        m = entities[type];
        if (m == null) {
          m = new InstanceTable();
          TABLE.setRelease(entities, type, m); // published whole to the lock-free readers
        }
      }
    }
    return m;
  }

  /** The table of a hosted type's entities here, or null if none ever lived here. */
  InstanceTable existingTable(int type) {
    return (InstanceTable) TABLE.getAcquire(entities, type);
  }

  /** The token of an activation starting now under {@code generation} of the lease. */
  FencingToken token(long generation) {
    long e = epoch;
    FencingToken t = token;
    if (t == null || t.epoch() != e || t.generation() != generation) {
      t = new FencingToken(shard, e, generation);
      token = t;
    }
    return t;
  }

  List<EntityInstance> instances() {
    List<EntityInstance> all = new ArrayList<>();
    for (int type = 0; type < entities.length; type++) {
      InstanceTable m = existingTable(type);
      if (m != null) {
        all.addAll(m.values());
      }
    }
    return all;
  }
}

package io.atoll.runtime.internal.host;

import io.atoll.runtime.internal.util.GuardedBy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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

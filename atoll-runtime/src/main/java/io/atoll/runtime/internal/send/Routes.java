package io.atoll.runtime.internal.send;

import io.atoll.core.ShardHasher;
import io.atoll.core.Space;
import io.atoll.core.Spaces;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.internal.host.TypeRuntime;
import io.atoll.runtime.internal.util.GuardedBy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The router's shard routes and the layout of spaces they follow, and the messages waiting for a
 * space of their role. Thread-safe.
 *
 * <p>The layout only grows, by spaces appended at run time ({@link #grow}); the routes and the
 * layout are replaced together as one immutable {@link Layout}, so one volatile read gives a
 * shard number and a route array that holds it. A message of a type whose role has no space
 * yet waits here, in send order and bounded, and goes to its shard's route when the layout grows;
 * sends that read the grown layout pass through the same lock while any wait, so an entity's
 * earlier messages reach its route first.
 */
final class Routes {

  /** A layout of spaces and the routes of its shards (index 0 unused). */
  private record Layout(Spaces spaces, ShardRoute[] routes, boolean single) {}

  private final ShardHasher hasher;
  private final int bound;
  private final IntFunction<ShardRoute> newRoute;
  private volatile Layout layout;
  @GuardedBy("waiting")
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
  /** The size of {@link #waiting}, read without its lock on the hot path. */
  private volatile int waitingCount;

  /**
   * @param bound the most messages that may wait for a space
   * @param newRoute makes the route of a shard
   */
  Routes(Spaces spaces, ShardHasher hasher, int bound, IntFunction<ShardRoute> newRoute) {
    this.hasher = hasher;
    this.bound = bound;
    this.newRoute = newRoute;
    this.layout = new Layout(spaces, extend(new ShardRoute[1], spaces.size()), spaces.isSingle());
  }

  private ShardRoute[] extend(ShardRoute[] old, int size) {
    ShardRoute[] r = Arrays.copyOf(old, size + 1);
    for (int s = old.length; s < r.length; s++) {
      r[s] = newRoute.apply(s);
    }
    return r;
  }

  /** The layout the routes follow now. */
  Spaces spaces() {
    return layout.spaces;
  }

  /** The global shard of {@code entityId} in its type's space, or 0 if the role has no space. */
  int shardOf(TypeRuntime t, String entityId) {
    Layout l = layout;
    ShardHasher h = t.hasher != null ? t.hasher : hasher; // the type's own, else the pod's
    if (l.single && t.role.isEmpty()) {
      return checked(h, entityId, l.routes.length - 1, t);
    }
    Space s = l.spaces.of(t.role);
    return s == null ? 0 : s.globalShard(checked(h, entityId, s.count(), t));
  }

  /** {@link #shardOf}, or -1 with {@code p} failed if its type's hasher put it outside the space. */
  private int shardOrFail(Pending p) {
    try {
      return shardOf(p.type, p.entityId);
    } catch (IllegalArgumentException e) {
      p.settleExceptionally(new DeliveryException(DeliveryException.Reason.BAD_REQUEST, "send to " + p.type.name
          + "/" + p.entityId + " failed: " + e.getMessage() + "; nothing was sent"));
      return -1;
    }
  }

  /**
   * The hasher's shard of {@code entityId} among {@code count}, refused outside {@code 1..count}:
   * a shard beyond its space would be another space's (and the receiver, with the same hasher,
   * would agree), so the message would reach an entity of another role's space, or none.
   */
  private static int checked(ShardHasher h, String entityId, int count, TypeRuntime t) {
    int shard = h.shardOf(entityId, count);
    if (shard < 1 || shard > count) {
      throw new IllegalArgumentException("the shard hasher " + h.getClass().getName() + " of entity type '"
          + t.name + "' put entity '" + entityId + "' in shard " + shard + " (expected: 1.." + count + ")");
    }
    return shard;
  }

  /** The route of {@code shard}, a shard of the current layout or an earlier one. */
  ShardRoute route(int shard) {
    return layout.routes[shard];
  }

  /** Every route, index 0 null. */
  ShardRoute[] all() {
    return layout.routes;
  }

  /**
   * Gives {@code p} its shard if it has none yet, or waits for any grow in progress: true if the
   * caller sends it to {@code route(p.shard)}; false if it waits here for a space of its role, or
   * was failed because too many wait.
   */
  boolean place(Pending p) {
    if (p.shard > 0 && waitingCount == 0) {
      return true;
    }
    synchronized (waiting) {
      if (p.shard < 1) {
        p.shard = shardOrFail(p); // the layout may have grown since it was read
      }
      if (p.shard > 0) {
        return true;
      }
      if (p.shard < 0) {
        return false; // failed: its type's hasher put it outside the space
      }
      if (waiting.size() >= bound) {
        waiting.removeIf(Pending::isDone);
      }
      if (waiting.size() >= bound) {
        p.settleExceptionally(new DeliveryException(DeliveryException.Reason.BUFFER_FULL, "send to " + p.type.name
            + "/" + p.entityId + " failed: " + waiting.size() + " messages already wait for a shard space of a"
            + " role (entity type '" + p.type.name + "' is on role '" + p.type.role + "', which has none in "
            + layout.spaces + "); nothing was sent, start a pod of the role or try again later"));
        return false;
      }
      p.where = "waiting for a shard space of " + Router.roleName(p.type.role) + ": the cluster has none yet"
          + " (spaces: " + layout.spaces + ")";
      waiting.add(p);
      waitingCount = waiting.size();
      return false;
    }
  }

  /**
   * The layout grew by spaces appended at run time: routes for the new shards, then the messages
   * that waited for a space of their role go to their shards' routes, in send order (held there
   * until the config that gives the shards owners is published).
   */
  void grow(Spaces longer) {
    synchronized (waiting) {
      Layout l = layout;
      if (!longer.extendsLayout(l.spaces) || longer.equals(l.spaces)) {
        return;
      }
      Layout next = new Layout(longer, extend(l.routes, longer.size()), longer.isSingle());
      layout = next;
      List<Pending> placed = new ArrayList<>();
      for (Iterator<Pending> it = waiting.iterator(); it.hasNext();) {
        Pending p = it.next();
        int shard = shardOrFail(p);
        if (shard != 0) {
          it.remove();
        }
        if (shard > 0) {
          p.shard = shard;
          placed.add(p);
        }
      }
      waitingCount = waiting.size();
      for (Pending p : placed) {
        if (!p.isDone()) {
          next.routes[p.shard].send(p);
        }
      }
    }
  }

  /** {@code p} timed out while waiting for a space: it waits no more. */
  void forget(Pending p) {
    synchronized (waiting) {
      waiting.remove(p);
      waitingCount = waiting.size();
    }
  }

  /** Fails every message waiting for a space. */
  void failWaiting(DeliveryException e) {
    synchronized (waiting) {
      waiting.forEach(p -> p.failWith(e));
      waiting.clear();
      waitingCount = 0;
    }
  }

  /** Messages waiting for a space. */
  int waitingForSpace() {
    return waitingCount;
  }
}

package io.atoll.manager.pods;

import io.atoll.core.PodId;
import io.atoll.transport.grpc.proto.UnassignRequest;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Unassign requests waiting for their pod's renewals: the way to a pod that renews over its own
 * connection but that the manager cannot reach on its port. A request goes with every renewal's
 * answer until the pod answers it with Released (releasing is idempotent, so a lost answer, or a
 * lost Released, costs a renewal period, not the whole deadline), matched by an id of its own. The
 * caller bounds the wait (completing the returned future withdraws the request), and {@link
 * #withdraw} fails it at once when the pod stops renewing. At most one per pod: a newer one
 * replaces (and fails) the one before. Thread-safe.
 */
public final class RelayedUnassigns {

  /** A request, with the id it travels under. */
  public record Relayed(long id, UnassignRequest request) {}

  private record Waiting(Relayed relayed, CompletableFuture<Set<Integer>> answer) {}

  private final ConcurrentHashMap<PodId, Waiting> waiting = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();

  /**
   * Queues {@code request} for {@code pod}'s renewals; completes with the shards the pod released,
   * or exceptionally if it refused, was withdrawn or replaced.
   */
  public CompletableFuture<Set<Integer>> offer(PodId pod, UnassignRequest request) {
    Waiting w = new Waiting(new Relayed(ids.incrementAndGet(), request), new CompletableFuture<>());
    Waiting before = waiting.put(pod, w);
    if (before != null) {
      before.answer.completeExceptionally(new IllegalStateException("replaced by a newer unassign"));
    }
    w.answer.whenComplete((r, e) -> waiting.remove(pod, w));
    return w.answer;
  }

  /** The request waiting for {@code pod}'s renewal, for this renewal's answer; null if none. */
  public Relayed take(PodId pod) {
    Waiting w = waiting.get(pod);
    return w == null || w.answer.isDone() ? null : w.relayed;
  }

  /**
   * {@code pod} answered the request {@code id}: {@code released} (shards it asked for), or
   * {@code failure} (non-empty). An answer to no waiting request (late, or made up), or naming
   * shards the request did not ask for, changes nothing; returns whether it was taken.
   */
  public boolean answered(PodId pod, long id, List<Integer> released, String failure) {
    Waiting w = waiting.get(pod);
    if (w == null || w.relayed.id() != id) {
      return false;
    }
    if (!failure.isEmpty()) {
      return w.answer.completeExceptionally(new IllegalStateException("pod " + pod + " refused the unassign"
          + " relayed through its renewal: " + failure));
    }
    Set<Integer> asked = new HashSet<>(w.relayed.request().getShardsList());
    if (!asked.containsAll(released)) {
      return false;
    }
    return w.answer.complete(Set.copyOf(released));
  }

  /** {@code pod} no longer renews (it died, or was declared gone): its request fails now. */
  public void withdraw(PodId pod) {
    Waiting w = waiting.get(pod);
    if (w != null) {
      w.answer.completeExceptionally(new IllegalStateException("pod " + pod + " stopped renewing"));
    }
  }

  /** Requests waiting. */
  public int size() {
    return waiting.size();
  }
}

package io.atoll.manager.pods;

import io.atoll.core.PodId;
import io.atoll.transport.grpc.proto.UnassignRequest;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Unassign requests waiting for their pod's next renewal: the way to a pod that renews over its
 * own connection but that the manager cannot reach on its port. Each request is handed out once
 * (in one renewal's answer) and answered by the pod's Released call; one that is not answered
 * within its deadline fails, as an Unassign that timed out does. At most one per pod: a newer one
 * replaces (and fails) the one before. Thread-safe.
 */
public final class RelayedUnassigns {

  private static final class Waiting {
    final UnassignRequest request;
    final CompletableFuture<Set<Integer>> answer = new CompletableFuture<>();
    volatile boolean taken;

    Waiting(UnassignRequest request) {
      this.request = request;
    }
  }

  private final ConcurrentHashMap<PodId, Waiting> waiting = new ConcurrentHashMap<>();

  /**
   * Queues {@code request} for {@code pod}'s next renewal; completes with the shards the pod
   * released, or exceptionally if it refused. The caller bounds the wait: completing the returned
   * future (a deadline) withdraws the request.
   */
  public CompletableFuture<Set<Integer>> offer(PodId pod, UnassignRequest request) {
    Waiting w = new Waiting(request);
    Waiting before = waiting.put(pod, w);
    if (before != null) {
      before.answer.completeExceptionally(new IllegalStateException("replaced by a newer unassign"));
    }
    w.answer.whenComplete((r, e) -> waiting.remove(pod, w));
    return w.answer;
  }

  /** The request waiting for {@code pod}'s renewal, once; null if none (or handed out already). */
  public UnassignRequest take(PodId pod) {
    Waiting w = waiting.get(pod);
    if (w == null || w.answer.isDone()) {
      return null;
    }
    synchronized (w) {
      if (w.taken) {
        return null;
      }
      w.taken = true;
    }
    return w.request;
  }

  /**
   * {@code pod} answered the request of {@code newEpoch}: {@code released}, or {@code failure}
   * (non-empty). An answer to no waiting request (late, or made up) changes nothing; returns
   * whether it was taken.
   */
  public boolean answered(PodId pod, long newEpoch, List<Integer> released, String failure) {
    Waiting w = waiting.get(pod);
    if (w == null || !w.taken || w.request.getNewEpoch() != newEpoch) {
      return false;
    }
    if (failure.isEmpty()) {
      return w.answer.complete(Set.copyOf(released));
    }
    return w.answer.completeExceptionally(new IllegalStateException("the pod refused the relayed unassign: "
        + failure));
  }

  /** Requests waiting (handed out or not). */
  public int size() {
    return waiting.size();
  }
}

package io.atoll.manager.pods;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * What the shard manager asks of pods. Every call is asynchronous and bounded by the deadline it
 * is given; none throws — a failure completes the future exceptionally. Implementations are
 * thread-safe, and complete futures on their own threads (the manager moves results back onto
 * its loop).
 */
public interface Pods extends AutoCloseable {

  /**
   * Pings a pod.
   *
   * @return completes with true if the pod answered in time as {@code pod} (the same address and
   *     incarnation), false otherwise; never exceptionally
   */
  CompletableFuture<Boolean> ping(PodId pod, Duration timeout);

  /**
   * Asks a pod to stop serving shards for a hand-off.
   *
   * @param shards the shard ids
   * @param newEpoch the epoch at which the shards will be claimed next; the pod will not serve
   *     them again under an older claim
   * @param termination how long the pod may take to stop the shards' entities
   * @param term the manager's term; a pod that has seen a newer term refuses
   * @param deadline how long the call may take in all
   * @return completes with the shards the pod released, or exceptionally if it did not answer
   */
  CompletableFuture<Set<Integer>> unassign(PodId pod, List<Integer> shards, long newEpoch, Duration termination,
      long term, Duration deadline);

  /**
   * As {@link #unassign(PodId, List, long, Duration, long, Duration)}, also telling the pod where
   * each shard goes ({@code targets}, parallel to {@code shards}), so that a pod whose shards hold
   * data (an Atoll KV node) can move it there before it releases a shard. By default the targets
   * are not sent.
   */
  default CompletableFuture<Set<Integer>> unassign(PodId pod, List<Integer> shards, List<PodId> targets,
      long newEpoch, Duration termination, long term, Duration deadline) {
    return unassign(pod, shards, newEpoch, termination, term, deadline);
  }

  /**
   * As {@link #unassign(PodId, List, List, long, Duration, long, Duration)}, for a pod that renews
   * its lease but cannot be reached on its port: the request goes in the answer to its next
   * renewal ({@link #relayedFor}) and the pod answers with Released ({@link #relayedReleased}). By
   * default as a direct unassign.
   */
  default CompletableFuture<Set<Integer>> unassignByRenewal(PodId pod, List<Integer> shards, List<PodId> targets,
      long newEpoch, Duration termination, long term, Duration deadline) {
    return unassign(pod, shards, targets, newEpoch, termination, term, deadline);
  }

  /** The unassign waiting for {@code pod}'s renewal (with every renewal until answered); null if none. */
  default RelayedUnassigns.Relayed relayedFor(PodId pod) {
    return null;
  }

  /**
   * {@code pod} answered the relayed unassign {@code id}: the shards it released, or why it did
   * not ({@code failure}, non-empty).
   */
  default void relayedReleased(PodId pod, long id, List<Integer> released, String failure) {
  }

  /** {@code pod} stopped renewing: a relayed unassign waiting for it fails now. */
  default void withdrawRelayed(PodId pod) {
  }

  /**
   * The cluster the manager serves, set once it is known (after the store is read); requests to
   * pods carry it so that a pod of another cluster at a reused address refuses them.
   */
  default void clusterId(io.atoll.core.ClusterId id) {}

  /** Pushes a config to a pod, best effort: a pod that misses it learns it by watch or gossip. */
  void push(PodId pod, ClusterConfig config, Duration deadline);

  /** Releases the connections. */
  @Override
  void close();
}

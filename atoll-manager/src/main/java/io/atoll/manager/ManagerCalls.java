package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.concurrent.CompletableFuture;

/**
 * What the gRPC face ({@link ManagerService}) asks of the manager, and nothing more: the calls a
 * pod or an operator makes, and the figures their answers carry. {@link ShardManager} hands its
 * service an implementation that hops each call onto its loop; a test hands it a fake.
 */
interface ManagerCalls {

  /** The cluster served; {@link ClusterId#NONE} before the store was read. */
  ClusterId clusterId();

  /** The current term. */
  long term();

  /** The lease a renewal grants, in milliseconds. */
  long leaseTtlMillis();

  /** The number of shards. */
  int numberOfShards();

  /**
   * A pod registers as the TLS identity {@code holder} ("" without TLS), {@code vouched} if it
   * presented that incarnation's credential; completes with the config once its entry is saved.
   */
  CompletableFuture<ClusterConfig> register(Pod pod, String holder, boolean vouched);

  /**
   * As {@link #register(Pod, String, boolean)}, the pod declaring the entity types it hosts (name
   * to role and hasher; empty from pods that predate them). By default the types are not kept.
   */
  default CompletableFuture<ClusterConfig> register(Pod pod,
      java.util.SortedMap<String, io.atoll.core.TypeDeclaration> entityTypes, String holder, boolean vouched) {
    return register(pod, holder, vouched);
  }

  /** The entity types the pods of the installed config declared, by name (none by default). */
  default CompletableFuture<java.util.SortedMap<String, io.atoll.core.TypeDeclaration>> entityTypes() {
    return CompletableFuture.completedFuture(java.util.Collections.emptySortedMap());
  }

  /**
   * The roles the manager has allocation settings for ({@code --space-settings}) that have no
   * shard space yet, sorted (none by default).
   */
  default CompletableFuture<java.util.List<String>> settingsWithoutSpace() {
    return CompletableFuture.completedFuture(java.util.List.of());
  }

  /**
   * What a renewal answers.
   *
   * @param granted the lease is renewed (false: the pod is unknown, gone or dying)
   * @param declareTypes the pod must send its Register again: the manager started after it
   *     registered and does not know its entity types
   * @param unassign an Unassign for the pod that could not reach it on its port, with its id
   *     (null: none)
   */
  record Renewal(boolean granted, boolean declareTypes,
      io.atoll.manager.pods.RelayedUnassigns.Relayed unassign) {

    /** A renewal's answer without an Unassign. */
    Renewal(boolean granted, boolean declareTypes) {
      this(granted, declareTypes, null);
    }
  }

  /**
   * As {@link #renew(PodId, boolean)}; {@code takesRelayed}: the pod handles an Unassign in the
   * answer, which then carries one if it waits for the pod. By default as without it.
   */
  default CompletableFuture<Renewal> renew(PodId pod, boolean declaresTypes, boolean takesRelayed) {
    return renew(pod, declaresTypes);
  }

  /**
   * {@code pod} answered the Unassign {@code id} that came in a renewal's answer: the shards it
   * released, or why not ({@code failure}, non-empty). Any thread.
   */
  default void released(PodId pod, long id, java.util.List<Integer> released, String failure) {
  }

  /**
   * Renews a pod's lease; {@code declaresTypes}: the pod declares its types again when asked.
   * By default as {@link #renew(PodId)}, never asking.
   */
  default CompletableFuture<Renewal> renew(PodId pod, boolean declaresTypes) {
    return renew(pod).thenApply(g -> new Renewal(g, false));
  }

  /** A pod leaves for good, having stopped its entities. */
  CompletableFuture<Void> unregister(PodId pod);

  /** A pod asks to drain: its shards move to the others; it stays a member. */
  CompletableFuture<Void> drain(PodId pod);

  /** Renews a pod's lease: true if renewed, false if the pod is unknown or gone. */
  CompletableFuture<Boolean> renew(PodId pod);

  /** {@code reporter} found {@code pod} unresponsive. Any thread. */
  void reportUnhealthy(PodId pod, PodId reporter);

  /** The installed config. */
  CompletableFuture<ClusterConfig> assignments();

  /** Opens a watch stream: the installed config now, and every config installed after. */
  void watch(ServerCallStreamObserver<ConfigBytes> observer);

  /** Runs a rebalance round now (or right after the one running). */
  CompletableFuture<ShardManager.RoundResult> rebalance();
}

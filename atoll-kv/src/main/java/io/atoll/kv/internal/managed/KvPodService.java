package io.atoll.kv.internal.managed;

import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.PingRequest;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodRef;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.PushConfigResponse;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.atoll.transport.grpc.proto.UnassignResponse;
import io.atoll.transport.grpc.security.ManagerTrust;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The pod face of a KV node, for the shard manager: Ping (identity, epoch, lease), PushConfig, and
 * Unassign, which becomes a hand-off of each slot's keys to its target ({@link HandOffs}) before
 * the slot is reported released. Deliver and Gossip are entity pods' and stay unimplemented.
 *
 * <p>A pushed config and an Unassign count only if signed by the manager's key, as learned from
 * the manager's own answers ({@link ManagerTrust}): anyone else who reaches the port is refused
 * (PERMISSION_DENIED, or FAILED_PRECONDITION before the node has registered).
 */
final class KvPodService extends PodServiceGrpc.PodServiceImplBase {

  private final Pod me;
  private final NodeLease lease;
  private final Supplier<ClusterId> clusterId;
  private final LongSupplier term;
  private final LongSupplier epoch;
  private final Consumer<io.atoll.core.ClusterConfig> onConfig;
  private final HandOffs handOffs;
  private final ManagerTrust trust;

  KvPodService(Pod me, NodeLease lease, Supplier<ClusterId> clusterId, LongSupplier term, LongSupplier epoch,
      Consumer<io.atoll.core.ClusterConfig> onConfig, HandOffs handOffs, ManagerTrust trust) {
    this.trust = trust;
    this.me = me;
    this.lease = lease;
    this.clusterId = clusterId;
    this.term = term;
    this.epoch = epoch;
    this.onConfig = onConfig;
    this.handOffs = handOffs;
  }

  @Override
  public void ping(PingRequest request, StreamObserver<PingResponse> out) {
    out.onNext(PingResponse.newBuilder().setPod(Wire.info(me)).setConfigEpoch(epoch.getAsLong())
        .setServing(lease.valid()).setLeaseRenewedMillisAgo(lease.renewedMillisAgo())
        .setClusterId(clusterId.get().toString()).build());
    out.onCompleted();
  }

  @Override
  public void pushConfig(ConfigBytes request, StreamObserver<PushConfigResponse> out) {
    try {
      onConfig.accept(trust.fromPeer(request, "a push to kv node " + me.id()));
    } catch (StatusRuntimeException e) {
      out.onError(e);
      return;
    } catch (RuntimeException e) {
      out.onError(Status.INVALID_ARGUMENT.withDescription("config refused: " + e.getMessage()).asRuntimeException());
      return;
    }
    out.onNext(PushConfigResponse.newBuilder().setEpoch(epoch.getAsLong()).build());
    out.onCompleted();
  }

  @Override
  public void unassign(UnassignRequest request, StreamObserver<UnassignResponse> out) {
    try {
      trust.checkUnassign(request, me.id());
    } catch (StatusRuntimeException e) {
      out.onError(e);
      return;
    }
    ClusterId mine = clusterId.get();
    if (!request.getClusterId().isEmpty() && !mine.equals(ClusterId.NONE)
        && !request.getClusterId().equals(mine.toString())) {
      out.onError(Status.FAILED_PRECONDITION.withDescription("unassign from cluster " + request.getClusterId()
          + ", but kv node " + me.id() + " belongs to cluster " + mine).asRuntimeException());
      return;
    }
    if (request.getManagerTerm() < term.getAsLong()) {
      out.onError(Status.FAILED_PRECONDITION.withDescription("unassign from manager term " + request.getManagerTerm()
          + ", older than term " + term.getAsLong() + " seen by kv node " + me.id()).asRuntimeException());
      return;
    }
    List<PodId> targets = new ArrayList<>();
    try {
      for (PodRef r : request.getTargetsList()) {
        targets.add(Wire.podId(r));
      }
    } catch (RuntimeException e) {
      out.onError(Wire.invalid("unassign: a malformed target: " + e.getMessage()));
      return;
    }
    if (!targets.isEmpty() && targets.size() != request.getShardsCount()) {
      out.onError(Wire.invalid("unassign: " + targets.size() + " targets for " + request.getShardsCount()
          + " shards (expected: one per shard)"));
      return;
    }
    List<Integer> shards = List.copyOf(request.getShardsList());
    // The manager planned these moves on its config at new_epoch - 1 (it saved that config first).
    long planned = Math.max(0, request.getNewEpoch() - 1);
    long budget = Math.max(200, request.getTerminationTimeoutMillis());
    Thread.ofVirtual().name("kv-handoff").start(() -> {
      try {
        Set<Integer> released = handOffs.run(shards, targets, planned, budget);
        out.onNext(UnassignResponse.newBuilder().addAllReleased(released).build());
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(Status.INTERNAL.withDescription("hand-off failed: " + e).asRuntimeException());
      }
    });
  }
}

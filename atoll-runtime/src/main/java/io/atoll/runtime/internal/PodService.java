package io.atoll.runtime.internal;

import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.ClusterMismatchException;
import io.atoll.core.Pod;
import io.atoll.core.spi.StoredState;
import io.atoll.runtime.internal.cluster.Lease;
import io.atoll.runtime.internal.cluster.ManagerLink;
import io.atoll.runtime.internal.cluster.SignedConfigs;
import io.atoll.runtime.internal.cluster.View;
import io.atoll.runtime.internal.host.EntityHost;
import io.atoll.runtime.internal.host.InboundStream;
import io.atoll.runtime.internal.util.PodContext;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.CarriedEntity;
import io.atoll.transport.grpc.proto.CarryStateRequest;
import io.atoll.transport.grpc.proto.CarryStateResponse;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.DeliverBatch;
import io.atoll.transport.grpc.proto.GossipRequest;
import io.atoll.transport.grpc.proto.GossipResponse;
import io.atoll.transport.grpc.proto.PingRequest;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.PushConfigResponse;
import io.atoll.transport.grpc.proto.ReplyBatch;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.atoll.transport.grpc.proto.UnassignResponse;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A pod's gRPC face: messages from other pods, hand-offs from the manager, configs, pings and
 * gossip. Every request is validated; a bad one gets INVALID_ARGUMENT naming what was wrong and
 * changes nothing. It holds the rooms it serves, not the pod.
 */
final class PodService extends PodServiceGrpc.PodServiceImplBase {

  private final PodContext ctx;
  private final View view;
  private final Lease lease;
  private final EntityHost host;
  private final ManagerLink manager;
  private final BooleanSupplier closing;
  private final SignedConfigs configs;
  private final StateCarrier carrier;

  PodService(PodContext ctx, View view, Lease lease, EntityHost host, ManagerLink manager, BooleanSupplier closing,
      SignedConfigs configs, StateCarrier carrier) {
    this.configs = configs;
    this.carrier = carrier;
    this.ctx = ctx;
    this.view = view;
    this.lease = lease;
    this.host = host;
    this.manager = manager;
    this.closing = closing;
  }

  @Override
  public StreamObserver<DeliverBatch> deliver(StreamObserver<ReplyBatch> out) {
    return new InboundStream(ctx.settings(), ctx.ticker(), ctx.scheduler(), view, host, (ServerCallStreamObserver<ReplyBatch>) out);
  }

  /**
   * Whether a caller of cluster {@code claimed} (empty: an old caller that sends none) may act on
   * this pod; if not, it is answered FAILED_PRECONDITION.
   */
  private boolean sameCluster(String claimed, String what, StreamObserver<?> out) {
    ClusterId mine = view.clusterId();
    if (claimed.isEmpty() || claimed.equals(mine.toString())) {
      return true;
    }
    out.onError(Status.FAILED_PRECONDITION.withDescription(what + " from cluster " + claimed + " refused: pod "
        + view.self() + " belongs to cluster " + (mine.isNone() ? "none" : mine) + " (expected: the same)")
        .asRuntimeException());
    return false;
  }

  @Override
  public void unassign(UnassignRequest request, StreamObserver<UnassignResponse> out) {
    if (!sameCluster(request.getClusterId(), "unassign", out)) {
      return;
    }
    List<Integer> shards = new ArrayList<>(request.getShardsCount());
    int n = view.numberOfShards();
    for (int s : request.getShardsList()) {
      if (s < 1 || s > n) {
        out.onError(Wire.invalid("shard: " + s + " (expected: 1.." + n + ")"));
        return;
      }
      shards.add(s);
    }
    if (request.getNewEpoch() < 1) {
      out.onError(Wire.invalid("new epoch: " + request.getNewEpoch() + " (expected: >= 1)"));
      return;
    }
    try {
      configs.checkUnassign(request, view.self());
    } catch (StatusRuntimeException e) {
      refused("unassign", e, out);
      return;
    }
    long term = manager.term();
    if (request.getManagerTerm() < term) {
      out.onError(Status.FAILED_PRECONDITION.withDescription("manager term " + request.getManagerTerm()
          + " is older than term " + term + " this pod has seen: the caller was deposed")
          .asRuntimeException());
      return;
    }
    manager.seeTerm(request.getManagerTerm()); // a newer manager: grants of older terms are void now
    long timeout = Math.max(0, Math.min(request.getTerminationTimeoutMillis(), 60_000));
    io.grpc.Deadline deadline = io.grpc.Context.current().getDeadline(); // the manager's, if it set one
    Thread.ofVirtual().name("atoll-unassign").start(() -> {
      try {
        EntityHost.Released released = host.release(shards, request.getNewEpoch(), timeout);
        // Before the answer: the new owner holds the states before the manager's claim reaches it,
        // within what the manager's deadline leaves (less a margin for the answer itself).
        long budget = deadline == null ? StateCarrier.DEADLINE_MILLIS
            : deadline.timeRemaining(java.util.concurrent.TimeUnit.MILLISECONDS) - 300;
        carrier.carry(request, released.left(), budget);
        out.onNext(UnassignResponse.newBuilder().addAllReleased(released.shards()).build());
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(Status.INTERNAL.withDescription("unassign failed: " + e).asRuntimeException());
      }
    });
  }

  /** Answers a refused request and logs it once per caller and kind. */
  private void refused(String what, StatusRuntimeException e, StreamObserver<?> out) {
    String caller = WireSecurity.peerName().isEmpty() ? "a caller without TLS" : WireSecurity.peerName();
    ctx.settings().security().refuse(what + " " + caller, "pod " + view.self() + ": refused " + what + " from "
        + caller + ": " + e.getStatus().getDescription());
    out.onError(e);
  }

  @Override
  public void pushConfig(ConfigBytes request, StreamObserver<PushConfigResponse> out) {
    try {
      view.onConfig(configs.fromPeer(request, "a push from " + WireSecurity.peerName()));
      out.onNext(PushConfigResponse.newBuilder().setEpoch(view.config().epoch()).build());
      out.onCompleted();
    } catch (StatusRuntimeException e) {
      refused("a config push", e, out);
    } catch (ClusterMismatchException e) {
      out.onError(Status.FAILED_PRECONDITION.withDescription("config refused: " + e.getMessage()).asRuntimeException());
    }
  }

  @Override
  public void ping(PingRequest request, StreamObserver<PingResponse> out) {
    if (view.self() == null) {
      out.onError(Status.UNAVAILABLE.withDescription("pod starting").asRuntimeException());
      return;
    }
    out.onNext(PingResponse.newBuilder()
        .setPod(Wire.info(ctx.settings().pod(view.self())))
        .setConfigEpoch(view.config().epoch())
        .setServing(lease.valid() && !closing.getAsBoolean())
        .setLeaseRenewedMillisAgo(lease.renewedMillisAgo())
        .setClusterId(view.clusterId().toString())
        .build());
    out.onCompleted();
  }

  /**
   * States a shard's previous owner carried here during its hand-off (see {@link StateCarrier}).
   * The caller proves it is that owner with the manager's Unassign, addressed to it and naming
   * this pod as the shard's target (signed, when the cluster signs them); its states are kept
   * only until this pod serves the shard under that claim.
   */
  @Override
  public void carryState(CarryStateRequest request, StreamObserver<CarryStateResponse> out) {
    UnassignRequest u = request.getUnassign();
    if (!sameCluster(u.getClusterId(), "carried state", out)) {
      return;
    }
    int shard = request.getShard();
    int n = view.numberOfShards();
    if (shard < 1 || shard > n) {
      out.onError(Wire.invalid("carried state: shard " + shard + " (expected: 1.." + n + ")"));
      return;
    }
    int at = u.getShardsList().indexOf(shard);
    if (at < 0 || u.getTargetsCount() != u.getShardsCount() || u.getNewEpoch() < 1) {
      out.onError(Wire.invalid("carried state of shard " + shard + ": the Unassign does not hand it off"
          + " (expected: the manager's Unassign listing the shard, with a target per shard and a new epoch >= 1)"));
      return;
    }
    List<io.atoll.runtime.internal.host.Left> left = new ArrayList<>(request.getEntitiesCount());
    for (CarriedEntity e : request.getEntitiesList()) {
      String what = "carried state of " + e.getEntityType() + "/" + e.getEntityId();
      if (!host.hosts(e.getEntityType())) {
        out.onError(Wire.invalid(what + ": pod " + view.self() + " hosts no such type"));
        return;
      }
      if (e.getState().size() > io.atoll.core.spi.StateStore.MAX_STATE_BYTES) {
        out.onError(Wire.invalid(what + ": " + e.getState().size() + " bytes (expected: at most "
            + io.atoll.core.spi.StateStore.MAX_STATE_BYTES + ", as a store takes)"));
        return;
      }
      try {
        new io.atoll.core.EntityAddress(e.getEntityType(), e.getEntityId()); // the id's bounds, as for a message
        left.add(new io.atoll.runtime.internal.host.Left(e.getEntityType(), e.getEntityId(), new StoredState(
            e.getRevision(), e.getRevision() == 0 && e.getState().isEmpty() ? null : e.getState().toByteArray())));
      } catch (IllegalArgumentException bad) {
        out.onError(Wire.invalid(what + ": " + bad.getMessage()));
        return;
      }
    }
    io.atoll.core.PodId from;
    try {
      from = Wire.podId(request.getFrom());
      if (!Wire.podId(u.getTargets(at)).equals(view.self())) {
        out.onError(Status.FAILED_PRECONDITION.withDescription("carried state of shard " + shard + ": it goes to "
            + Wire.podId(u.getTargets(at)) + ", not to pod " + view.self()).asRuntimeException());
        return;
      }
      configs.checkUnassign(u, from);
    } catch (StatusRuntimeException e) {
      refused("carried state", e, out);
      return;
    }
    if (u.getManagerTerm() < manager.term()) {
      out.onError(Status.FAILED_PRECONDITION.withDescription("carried state of shard " + shard + ": manager term "
          + u.getManagerTerm() + " is older than term " + manager.term() + " this pod has seen").asRuntimeException());
      return;
    }
    int kept = host.keepCarried(shard, u.getNewEpoch(), left);
    out.onNext(CarryStateResponse.newBuilder().setKept(kept).build());
    out.onCompleted();
  }

  @Override
  public void gossip(GossipRequest request, StreamObserver<GossipResponse> out) {
    if (!sameCluster(request.getClusterId(), "gossip", out)) {
      return;
    }
    try {
      if (request.hasConfig()) {
        view.onConfig(configs.fromPeer(request.getConfig(), "gossip from " + WireSecurity.peerName()));
      }
      ClusterConfig v = view.config();
      GossipResponse.Builder r = GossipResponse.newBuilder().setEpoch(v.epoch());
      ConfigBytes signed = configs.newest();
      if (v.epoch() > request.getEpoch() && signed != null) {
        r.setConfig(signed);
      }
      out.onNext(r.build());
      out.onCompleted();
    } catch (StatusRuntimeException e) {
      refused("a gossiped config", e, out);
    } catch (ClusterMismatchException e) {
      out.onError(Status.FAILED_PRECONDITION.withDescription("gossip refused: " + e.getMessage()).asRuntimeException());
    }
  }
}

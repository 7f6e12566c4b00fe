package io.atoll.runtime.internal;

import io.atoll.core.ClusterConfig;
import io.atoll.transport.grpc.Wire;
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
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;

/**
 * A pod's gRPC face: messages from other pods, hand-offs from the manager, configs, pings and
 * gossip. Every request is validated; a bad one gets INVALID_ARGUMENT naming what was wrong and
 * changes nothing.
 */
final class PodService extends PodServiceGrpc.PodServiceImplBase {

  private final PodRuntime rt;

  PodService(PodRuntime rt) {
    this.rt = rt;
  }

  @Override
  public StreamObserver<DeliverBatch> deliver(StreamObserver<ReplyBatch> out) {
    return new InboundStream(rt, (ServerCallStreamObserver<ReplyBatch>) out);
  }

  @Override
  public void unassign(UnassignRequest request, StreamObserver<UnassignResponse> out) {
    List<Integer> shards = new ArrayList<>(request.getShardsCount());
    int n = rt.numberOfShards();
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
    if (request.getManagerTerm() < rt.managerTerm()) {
      out.onError(Status.FAILED_PRECONDITION.withDescription("manager term " + request.getManagerTerm()
          + " is older than term " + rt.managerTerm() + " this pod has seen: the caller was deposed")
          .asRuntimeException());
      return;
    }
    long timeout = Math.max(0, Math.min(request.getTerminationTimeoutMillis(), 60_000));
    Thread.ofVirtual().name("atoll-unassign").start(() -> {
      try {
        List<Integer> released = rt.host.release(shards, request.getNewEpoch(), timeout);
        out.onNext(UnassignResponse.newBuilder().addAllReleased(released).build());
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(Status.INTERNAL.withDescription("unassign failed: " + e).asRuntimeException());
      }
    });
  }

  @Override
  public void pushConfig(ConfigBytes request, StreamObserver<PushConfigResponse> out) {
    try {
      rt.onConfig(Wire.config(request));
      out.onNext(PushConfigResponse.newBuilder().setEpoch(rt.view().epoch()).build());
      out.onCompleted();
    } catch (StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void ping(PingRequest request, StreamObserver<PingResponse> out) {
    if (rt.self() == null) {
      out.onError(Status.UNAVAILABLE.withDescription("pod starting").asRuntimeException());
      return;
    }
    out.onNext(PingResponse.newBuilder()
        .setPod(Wire.info(rt.selfPod()))
        .setConfigEpoch(rt.view().epoch())
        .setServing(rt.holdsLease() && !rt.isClosing())
        .setLeaseRenewedMillisAgo(rt.leaseRenewedMillisAgo())
        .build());
    out.onCompleted();
  }

  @Override
  public void gossip(GossipRequest request, StreamObserver<GossipResponse> out) {
    try {
      if (request.hasConfig()) {
        rt.onConfig(Wire.config(request.getConfig()));
      }
      ClusterConfig v = rt.view();
      GossipResponse.Builder r = GossipResponse.newBuilder().setEpoch(v.epoch());
      if (v.epoch() > request.getEpoch()) {
        r.setConfig(Wire.bytes(v));
      }
      out.onNext(r.build());
      out.onCompleted();
    } catch (StatusRuntimeException e) {
      out.onError(e);
    }
  }
}

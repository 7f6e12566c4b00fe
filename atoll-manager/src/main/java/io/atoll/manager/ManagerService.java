package io.atoll.manager;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodRequest;
import io.atoll.transport.grpc.proto.ReleasedRequest;
import io.atoll.transport.grpc.proto.ReleasedResponse;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodResponse;
import io.atoll.transport.grpc.proto.RebalanceRequest;
import io.atoll.transport.grpc.proto.RebalanceResponse;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RegisterResponse;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.RenewLeaseResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnregisterRequest;
import io.atoll.transport.grpc.proto.UnregisterResponse;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * The manager's gRPC face. Validates each request, hands it to the manager's loop, and answers
 * when the loop is done; a bad request gets INVALID_ARGUMENT naming the field, and changes nothing.
 */
final class ManagerService extends ShardManagerServiceGrpc.ShardManagerServiceImplBase {

  private final ManagerCalls manager;
  private final ManagerSecurity security;

  ManagerService(ManagerCalls manager, ManagerSecurity security) {
    this.manager = manager;
    this.security = security;
  }

  /**
   * Whether the caller may act for incarnation {@code pod}: it presents the credential Register
   * gave that incarnation, and (with TLS) holds the certificate that registered it. A refusal is
   * answered PERMISSION_DENIED, logged once per caller and pod, and changes nothing.
   */
  private boolean actsFor(PodId pod, ByteString credential, String what, StreamObserver<?> out) {
    String holder = WireSecurity.peerName();
    if (security.signer().checkCredential(manager.clusterId().toString(), pod, holder, credential)) {
      return true;
    }
    String caller = holder.isEmpty() ? "a caller without TLS" : holder;
    security.wire().refuse("credential " + holder + " " + pod, "refused " + what + " for pod " + pod + " from "
        + caller + ": " + (credential.isEmpty() ? "no credential" : "wrong credential"));
    out.onError(Status.PERMISSION_DENIED.withDescription(what + " for pod " + pod + " refused: "
        + (credential.isEmpty() ? "no" : "a wrong") + " credential (expected: the one Register returned to that"
        + " incarnation, presented by the process that registered it)").asRuntimeException());
    return false;
  }

  @Override
  public void register(RegisterRequest request, StreamObserver<RegisterResponse> out) {
    Pod pod = parse(() -> Wire.pod(request.getPod()), out);
    if (pod == null || !sameCluster(request.getClusterId(), pod.id(), out)) {
      return;
    }
    java.util.SortedMap<String, io.atoll.core.TypeDeclaration> types = parse(() -> Wire.entityTypes(request.getPod(), pod), out);
    if (types == null) {
      return;
    }
    String holder = WireSecurity.peerName(); // read here: the answer is made on the manager's loop
    boolean vouched = !request.getCredential().isEmpty()
        && security.signer().checkCredential(manager.clusterId().toString(), pod.id(), holder, request.getCredential());
    answer(manager.register(pod, types, holder, vouched).whenComplete((c, e) -> {
      Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      if (cause instanceof SecurityException) {
        security.wire().refuse("register " + holder + " " + pod.id(), "refused register for pod " + pod.id()
            + " from " + (holder.isEmpty() ? "a caller without TLS" : holder) + ": " + cause.getMessage());
      }
    }), c -> RegisterResponse.newBuilder()
        .setKvNodeKey(pod.version().equals(PodVersion.KV)
            ? security.signer().kvNodeKey(manager.clusterId().toString()) : ByteString.EMPTY)
        .setConfig(security.signer().bytes(c))
        .setLeaseTtlMillis(manager.leaseTtlMillis())
        .setNumberOfShards(c.size()) // the layout may have grown: the config's, not the settings'
        .setManagerTerm(manager.term())
        .setClusterId(manager.clusterId().toString())
        .setCredential(security.signer().credential(manager.clusterId().toString(), pod.id(), holder))
        .build(), out);
  }

  /**
   * Whether a pod that says it belongs to {@code claimed} (empty: to no cluster yet) may talk to
   * this manager; if not, it is answered FAILED_PRECONDITION (or INVALID_ARGUMENT for a malformed
   * id), and nothing changes.
   */
  private boolean sameCluster(String claimed, PodId pod, StreamObserver<?> out) {
    ClusterId id = parse(() -> {
      try {
        return ClusterId.parse(claimed);
      } catch (IllegalArgumentException e) {
        throw Wire.invalid(e.getMessage());
      }
    }, out);
    if (id == null) {
      return false;
    }
    ClusterId mine = manager.clusterId();
    if (!id.isNone() && !mine.isNone() && !id.equals(mine)) {
      out.onError(Status.FAILED_PRECONDITION.withDescription("pod " + pod + " belongs to cluster " + id
          + ", but this shard manager serves cluster " + mine + " (expected: the same; is the pod pointed at"
          + " the right manager?)").asRuntimeException());
      return false;
    }
    return true;
  }

  @Override
  public void unregister(UnregisterRequest request, StreamObserver<UnregisterResponse> out) {
    PodId pod = parse(() -> Wire.podId(request.getPod()), out);
    if (pod == null || !actsFor(pod, request.getCredential(), "unregister", out)) {
      return;
    }
    answer(request.getDrain() ? manager.drain(pod) : manager.unregister(pod),
        v -> UnregisterResponse.getDefaultInstance(), out);
  }

  @Override
  public void renewLease(RenewLeaseRequest request, StreamObserver<RenewLeaseResponse> out) {
    PodId pod = parse(() -> Wire.podId(request.getPod()), out);
    if (pod == null || !sameCluster(request.getClusterId(), pod, out)
        || !actsFor(pod, request.getCredential(), "lease renewal", out)) {
      return;
    }
    answer(manager.renew(pod, request.getDeclaresTypes(), request.getTakesRelayedUnassign()), r -> {
      RenewLeaseResponse.Builder b = RenewLeaseResponse.newBuilder()
          .setStatus(r.granted() ? RenewLeaseResponse.Status.RENEWED : RenewLeaseResponse.Status.UNKNOWN_POD)
          .setLeaseTtlMillis(manager.leaseTtlMillis())
          .setManagerTerm(manager.term())
          .setDeclareTypes(r.declareTypes());
      if (r.unassign() != null) {
        b.setUnassign(r.unassign().request()).setUnassignId(r.unassign().id());
      }
      return b.build();
    }, out);
  }

  @Override
  public void released(ReleasedRequest request, StreamObserver<ReleasedResponse> out) {
    PodId pod = parse(() -> Wire.podId(request.getPod()), out);
    if (pod == null || !actsFor(pod, request.getCredential(), "released", out)) {
      return;
    }
    if (request.getReleasedCount() > MAX_RELEASED || request.getFailure().length() > MAX_FAILURE
        || request.getUnassignId() < 1) {
      out.onError(Wire.invalid("released: " + request.getReleasedCount() + " shards, failure of "
          + request.getFailure().length() + " chars, unassign id " + request.getUnassignId() + " (expected: at most "
          + MAX_RELEASED + " shards, " + MAX_FAILURE + " chars, and the id of a relayed unassign)"));
      return;
    }
    manager.released(pod, request.getUnassignId(), request.getReleasedList(), request.getFailure());
    out.onNext(ReleasedResponse.getDefaultInstance());
    out.onCompleted();
  }

  /**
   * Bounds on a Released call: a failure of a line or so, and a bound on shards well above any
   * layout's (spaces appended at run time included); the relay checks the shards against the
   * request's.
   */
  static final int MAX_RELEASED = 1 << 20;
  static final int MAX_FAILURE = 4096;

  @Override
  public void notifyUnhealthyPod(NotifyUnhealthyPodRequest request, StreamObserver<NotifyUnhealthyPodResponse> out) {
    try {
      PodId pod = Wire.podId(request.getPod());
      if (!request.hasReporter()) {
        throw Wire.invalid("reporter: missing (expected: the reporting pod, with its credential)");
      }
      PodId reporter = Wire.podId(request.getReporter());
      if (!actsFor(reporter, request.getCredential(), "unhealthy report", out)) {
        return;
      }
      manager.reportUnhealthy(pod, reporter);
      out.onNext(NotifyUnhealthyPodResponse.getDefaultInstance());
      out.onCompleted();
    } catch (StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void getAssignments(GetAssignmentsRequest request, StreamObserver<ConfigBytes> out) {
    // The declared types ride along, outside the signed encoding, for atoll status to name them:
    // the first Wire.MAX_LISTED_TYPES by name, the rest counted, so the answer stays bounded
    // however many pods declare however many types.
    answer(manager.assignments().thenCombine(manager.entityTypes(), (c, types) -> {
      ConfigBytes.Builder b = security.signer().bytes(c).toBuilder();
      types.entrySet().stream().limit(Wire.MAX_LISTED_TYPES).forEach(t -> b.addEntityTypes(
          Wire.typeInfo(t.getKey(), t.getValue())));
      return b.setEntityTypesOmitted(Math.max(0, types.size() - Wire.MAX_LISTED_TYPES));
    }).thenCombine(manager.settingsWithoutSpace(), (b, roles) -> b.addAllSettingsWithoutSpace(roles).build()),
        Function.identity(), out);
  }

  @Override
  public void watch(WatchRequest request, StreamObserver<ConfigBytes> out) {
    manager.watch((ServerCallStreamObserver<ConfigBytes>) out);
  }

  @Override
  public void rebalance(RebalanceRequest request, StreamObserver<RebalanceResponse> out) {
    answer(manager.rebalance(), r -> RebalanceResponse.newBuilder().setMoved(r.moved()).setEpoch(r.epoch())
        .setRemaining(r.remaining()).build(),
        out);
  }

  /** Reads a request's field; a malformed one is answered with its INVALID_ARGUMENT, and gives null. */
  private static <T> T parse(java.util.function.Supplier<T> read, StreamObserver<?> out) {
    try {
      return read.get();
    } catch (StatusRuntimeException e) {
      out.onError(e);
      return null;
    }
  }

  private static <T, R> void answer(CompletableFuture<T> f, Function<T, R> toResponse, StreamObserver<R> out) {
    f.whenComplete((v, e) -> {
      if (e != null) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        Status s = cause instanceof PodTypes.Pending
            ? Status.ABORTED.withDescription(Wire.TYPES_PENDING + cause.getMessage())
            : cause instanceof Membership.Gone
            ? Status.FAILED_PRECONDITION.withDescription(Wire.INCARNATION_GONE + cause.getMessage())
            : cause instanceof IllegalStateException
            ? Status.FAILED_PRECONDITION.withDescription(cause.getMessage())
            : cause instanceof SecurityException ? Status.PERMISSION_DENIED.withDescription(cause.getMessage())
            : Status.UNAVAILABLE.withDescription("shard manager: " + cause.getMessage()).withCause(cause);
        out.onError(s.asRuntimeException());
        return;
      }
      try {
        out.onNext(toResponse.apply(v));
        out.onCompleted();
      } catch (RuntimeException ex) {
        // the caller went away
      }
    });
  }
}

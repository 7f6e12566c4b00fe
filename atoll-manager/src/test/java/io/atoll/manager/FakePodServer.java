package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.PingRequest;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.PushConfigResponse;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.atoll.transport.grpc.proto.UnassignResponse;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A pod's gRPC face without a pod behind it, on a loopback ephemeral port: answers pings as a
 * given pod, releases every shard it is asked to, and records what the manager sent; or, as
 * scripted, fails, hangs, releases part, or answers pings as someone else.
 */
final class FakePodServer implements AutoCloseable {

  final Server server;
  final Pod pod;
  final List<UnassignRequest> unassigns = new CopyOnWriteArrayList<>();
  final List<ClusterConfig> pushed = new CopyOnWriteArrayList<>();
  /** Each push as it came, signature and signer's key included. */
  final List<ConfigBytes> pushedBytes = new CopyOnWriteArrayList<>();
  /** Answers pings as this pod (another incarnation, to test that the manager checks it). */
  final AtomicReference<Pod> answerAs = new AtomicReference<>();
  /** When set, the answer to every ping instead of {@link #answerAs}'s (a malformed one, or one without a pod). */
  final AtomicReference<PingResponse> pingAnswer = new AtomicReference<>();
  final AtomicInteger pings = new AtomicInteger();
  volatile boolean failUnassign;
  /** Pings and unassigns are taken but never answered (a pod that hangs). */
  volatile boolean silent;
  /** Unassigns are taken but never answered; pings still are (a pod stuck stopping its entities). */
  volatile boolean holdUnassigns;
  /** When set, an unassign releases only these of the shards asked for. */
  volatile Set<Integer> releaseOnly;

  FakePodServer(long incarnation) {
    this(incarnation, 0);
  }

  /** Listening on {@code port} of loopback (0: a free one). */
  FakePodServer(long incarnation, int port) {
    server = Wire.startServer("127.0.0.1", port, List.<BindableService>of(new Service()));
    pod = new Pod(new PodId(new PodAddress("127.0.0.1", Wire.port(server)), incarnation), PodVersion.of("1.0"));
    answerAs.set(pod);
  }

  ClusterConfig lastPushed() {
    return pushed.isEmpty() ? null : pushed.get(pushed.size() - 1);
  }

  private final class Service extends PodServiceGrpc.PodServiceImplBase {
    @Override
    public void ping(PingRequest request, StreamObserver<PingResponse> out) {
      pings.incrementAndGet();
      if (silent) {
        return;
      }
      PingResponse scripted = pingAnswer.get();
      out.onNext(scripted != null ? scripted : PingResponse.newBuilder().setPod(Wire.info(answerAs.get())).build());
      out.onCompleted();
    }

    @Override
    public void unassign(UnassignRequest request, StreamObserver<UnassignResponse> out) {
      unassigns.add(request);
      if (silent || holdUnassigns) {
        return;
      }
      if (failUnassign) {
        out.onError(Status.UNAVAILABLE.withDescription("injected").asRuntimeException());
        return;
      }
      Set<Integer> only = releaseOnly;
      out.onNext(UnassignResponse.newBuilder().addAllReleased(request.getShardsList().stream()
          .filter(sh -> only == null || only.contains(sh)).toList()).build());
      out.onCompleted();
    }

    @Override
    public void pushConfig(ConfigBytes request, StreamObserver<PushConfigResponse> out) {
      pushedBytes.add(request);
      ClusterConfig c = Wire.config(request);
      pushed.add(c);
      out.onNext(PushConfigResponse.newBuilder().setEpoch(c.epoch()).build());
      out.onCompleted();
    }
  }

  @Override
  public void close() {
    server.shutdownNow();
  }
}

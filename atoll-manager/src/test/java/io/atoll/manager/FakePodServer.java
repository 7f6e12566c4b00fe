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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A pod's gRPC face without a pod behind it, on a loopback ephemeral port: answers pings as a
 * given pod, releases every shard it is asked to, and records what the manager sent.
 */
final class FakePodServer implements AutoCloseable {

  final Server server;
  final Pod pod;
  final List<UnassignRequest> unassigns = new CopyOnWriteArrayList<>();
  final List<ClusterConfig> pushed = new CopyOnWriteArrayList<>();
  /** Answers pings as this pod (another incarnation, to test that the manager checks it). */
  final AtomicReference<Pod> answerAs = new AtomicReference<>();
  volatile boolean failUnassign;

  FakePodServer(long incarnation) {
    server = Wire.startServer("127.0.0.1", 0, List.<BindableService>of(new Service()));
    pod = new Pod(new PodId(new PodAddress("127.0.0.1", Wire.port(server)), incarnation), PodVersion.of("1.0"));
    answerAs.set(pod);
  }

  ClusterConfig lastPushed() {
    return pushed.isEmpty() ? null : pushed.get(pushed.size() - 1);
  }

  private final class Service extends PodServiceGrpc.PodServiceImplBase {
    @Override
    public void ping(PingRequest request, StreamObserver<PingResponse> out) {
      out.onNext(PingResponse.newBuilder().setPod(Wire.info(answerAs.get())).build());
      out.onCompleted();
    }

    @Override
    public void unassign(UnassignRequest request, StreamObserver<UnassignResponse> out) {
      unassigns.add(request);
      if (failUnassign) {
        out.onError(Status.UNAVAILABLE.withDescription("injected").asRuntimeException());
        return;
      }
      out.onNext(UnassignResponse.newBuilder().addAllReleased(request.getShardsList()).build());
      out.onCompleted();
    }

    @Override
    public void pushConfig(ConfigBytes request, StreamObserver<PushConfigResponse> out) {
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

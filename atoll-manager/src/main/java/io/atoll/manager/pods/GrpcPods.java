package io.atoll.manager.pods;

import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.PingRequest;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.PushConfigResponse;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.atoll.transport.grpc.proto.UnassignResponse;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** {@link Pods} over gRPC: one channel per pod address, calls that wait for a connection up to their deadline. */
public final class GrpcPods implements Pods {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GrpcPods.class);

  private final ConcurrentHashMap<PodAddress, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final RelayedUnassigns relayed = new RelayedUnassigns();
  private volatile boolean closed;
  /** The last config pushed and its encoding, so a push to many pods encodes once. */
  private volatile Encoded lastPushed;
  private volatile ClusterId clusterId = ClusterId.NONE;

  private record Encoded(ClusterConfig config, ConfigBytes bytes) {}

  private final WireSecurity security;
  private final ConfigSigner signer;

  /** Plaintext, with a key of its own; no channels yet (they are opened on first use). */
  public GrpcPods() {
    this(WireSecurity.PLAINTEXT, ConfigSigner.generate());
  }

  /** Secured by {@code security}, signing configs and Unassign requests with {@code signer}. */
  public GrpcPods(WireSecurity security, ConfigSigner signer) {
    this.security = security;
    this.signer = signer;
  }

  @Override
  public void clusterId(ClusterId id) {
    this.clusterId = id;
  }

  private PodServiceGrpc.PodServiceStub stub(PodId pod, Duration deadline) {
    if (closed) {
      throw new IllegalStateException("manager closed");
    }
    ManagedChannel ch = channels.computeIfAbsent(pod.address(), a -> Wire.channel(a, security, Role.POD));
    return PodServiceGrpc.newStub(Wire.reconnecting(ch)).withWaitForReady()
        .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public CompletableFuture<Boolean> ping(PodId pod, Duration timeout) {
    CompletableFuture<PingResponse> f = new CompletableFuture<>();
    try {
      stub(pod, timeout).ping(PingRequest.getDefaultInstance(), into(f));
    } catch (RuntimeException e) {
      f.completeExceptionally(e);
    }
    return f.handle((r, e) -> e == null && answersAs(r, pod));
  }

  static boolean answersAs(PingResponse r, PodId expected) {
    try {
      return r != null && r.hasPod() && Wire.pod(r.getPod()).id().equals(expected);
    } catch (RuntimeException e) {
      return false;
    }
  }

  @Override
  public CompletableFuture<Set<Integer>> unassign(PodId pod, List<Integer> shards, long newEpoch,
      Duration termination, long term, Duration deadline) {
    return unassign(pod, shards, List.of(), newEpoch, termination, term, deadline);
  }

  @Override
  public CompletableFuture<Set<Integer>> unassign(PodId pod, List<Integer> shards, List<PodId> targets,
      long newEpoch, Duration termination, long term, Duration deadline) {
    CompletableFuture<UnassignResponse> f = new CompletableFuture<>();
    try {
      stub(pod, deadline).unassign(request(pod, shards, targets, newEpoch, termination, term), into(f));
    } catch (RuntimeException e) {
      f.completeExceptionally(e);
    }
    return f.thenApply(r -> Set.copyOf(r.getReleasedList()));
  }

  @Override
  public CompletableFuture<Set<Integer>> unassignByRenewal(PodId pod, List<Integer> shards, List<PodId> targets,
      long newEpoch, Duration termination, long term, Duration deadline) {
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("manager closed"));
    }
    CompletableFuture<Set<Integer>> f = relayed.offer(pod, request(pod, shards, targets, newEpoch, termination, term))
        .orTimeout(deadline.toMillis(), TimeUnit.MILLISECONDS);
    f.whenComplete((r, e) -> {
      if (e != null && !(e instanceof java.util.concurrent.TimeoutException)) {
        LOG.warn("shard manager: the unassign of {} shards relayed to pod {} failed: {}", shards.size(), pod,
            e.getMessage());
      }
    });
    return f;
  }

  @Override
  public RelayedUnassigns.Relayed relayedFor(PodId pod) {
    return relayed.take(pod);
  }

  @Override
  public void relayedReleased(PodId pod, long id, List<Integer> released, String failure) {
    relayed.answered(pod, id, released, failure);
  }

  @Override
  public void withdrawRelayed(PodId pod) {
    relayed.withdraw(pod);
  }

  /** An Unassign for {@code pod}, signed: the same whichever way it travels. */
  private UnassignRequest request(PodId pod, List<Integer> shards, List<PodId> targets, long newEpoch,
      Duration termination, long term) {
    return UnassignRequest.newBuilder()
        .addAllShards(shards)
        .addAllTargets(targets.stream().map(Wire::ref).toList())
        .setNewEpoch(newEpoch)
        .setTerminationTimeoutMillis(termination.toMillis())
        .setManagerTerm(term)
        .setClusterId(clusterId.toString())
        .setSignature(signer.signUnassign(clusterId.toString(), term, newEpoch, pod, shards, targets,
            termination.toMillis()))
        .build();
  }

  @Override
  public void push(PodId pod, ClusterConfig config, Duration deadline) {
    Encoded e = lastPushed;
    if (e == null || e.config() != config) {
      e = new Encoded(config, signer.bytes(config));
      lastPushed = e;
    }
    CompletableFuture<PushConfigResponse> f = new CompletableFuture<>();
    try {
      stub(pod, deadline).pushConfig(e.bytes(), into(f));
    } catch (RuntimeException ex) {
      // best effort: the pod learns the config by watch or gossip
    }
  }

  private static <T> StreamObserver<T> into(CompletableFuture<T> f) {
    return new StreamObserver<>() {
      private T value;

      @Override
      public void onNext(T v) {
        value = v;
      }

      @Override
      public void onError(Throwable t) {
        f.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        f.complete(value);
      }
    };
  }

  @Override
  public void close() {
    closed = true;
    channels.values().forEach(Wire::close);
    channels.clear();
  }
}

package io.atoll.manager;

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
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** The manager's calls to pods: ping, unassign, push. One channel per pod address. Thread-safe. */
final class PodCalls implements AutoCloseable {

  private final ConcurrentHashMap<PodAddress, ManagedChannel> channels = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private PodServiceGrpc.PodServiceStub stub(PodId pod, Duration deadline) {
    if (closed) {
      throw new IllegalStateException("manager closed");
    }
    ManagedChannel ch = channels.computeIfAbsent(pod.address(), Wire::channel);
    return PodServiceGrpc.newStub(Wire.reconnecting(ch)).withWaitForReady()
        .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Pings a pod; completes with its answer, or exceptionally if it did not answer in time. */
  CompletableFuture<PingResponse> ping(PodId pod, Duration timeout) {
    CompletableFuture<PingResponse> f = new CompletableFuture<>();
    try {
      stub(pod, timeout).ping(PingRequest.getDefaultInstance(), into(f));
    } catch (RuntimeException e) {
      f.completeExceptionally(e);
    }
    return f;
  }

  /** Asks a pod to stop serving shards; completes with the ones it released. */
  CompletableFuture<UnassignResponse> unassign(PodId pod, List<Integer> shards, long newEpoch, Duration termination,
      long term, Duration deadline) {
    CompletableFuture<UnassignResponse> f = new CompletableFuture<>();
    try {
      stub(pod, deadline).unassign(UnassignRequest.newBuilder()
          .addAllShards(shards)
          .setNewEpoch(newEpoch)
          .setTerminationTimeoutMillis(termination.toMillis())
          .setManagerTerm(term)
          .build(), into(f));
    } catch (RuntimeException e) {
      f.completeExceptionally(e);
    }
    return f;
  }

  /** Pushes a config to a pod. */
  CompletableFuture<PushConfigResponse> push(PodId pod, ConfigBytes config, Duration deadline) {
    CompletableFuture<PushConfigResponse> f = new CompletableFuture<>();
    try {
      stub(pod, deadline).pushConfig(config, into(f));
    } catch (RuntimeException e) {
      f.completeExceptionally(e);
    }
    return f;
  }

  /** Drops the channel to an address nobody uses any more. */
  void forget(PodAddress address) {
    ManagedChannel ch = channels.remove(address);
    if (ch != null) {
      ch.shutdownNow();
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

package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.atoll.core.ShardHasher;
import io.atoll.runtime.DefaultCodec;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.codec.MessageCodec;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import io.atoll.testkit.net.TcpRelay;
import io.atoll.transport.grpc.proto.DeliverBatch;
import io.atoll.transport.grpc.proto.Envelope;
import io.atoll.transport.grpc.proto.Failure;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.Reply;
import io.atoll.transport.grpc.proto.ReplyBatch;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Old streams cannot deliver late: a pod drops the stream of a sender whose connection stalled,
 * and an envelope whose sender's deadline passed while it was in transit is not handled.
 */
@AtollCluster(shards = 4, podTemplate = Counter.Pods.class)
class StaleStreamTest {

  Sharding pod;
  MessageCodec codec = DefaultCodec.forType(Counter.TYPE);

  @BeforeEach
  void start(LocalCluster cluster) {
    pod = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(10));
  }

  private Envelope envelope(long id, String entityId, Counter.Msg msg, long deadlineMillis) {
    return Envelope.newBuilder().setId(id).setEntityType(Counter.TYPE.name()).setEntityId(entityId)
        .setShard(ShardHasher.DEFAULT.shardOf(entityId, pod.numberOfShards()))
        .setPayload(ByteString.copyFrom(codec.encode(msg))).setDeadlineMillis(deadlineMillis).build();
  }

  /** A raw Deliver stream over {@code channel}; replies by envelope id. */
  private static StreamObserver<DeliverBatch> open(ManagedChannel channel, Map<Long, Reply> replies,
      AtomicReference<Throwable> failed) {
    return PodServiceGrpc.newStub(channel).deliver(new StreamObserver<>() {
      @Override
      public void onNext(ReplyBatch b) {
        b.getRepliesList().forEach(r -> replies.put(r.getId(), r));
      }

      @Override
      public void onError(Throwable t) {
        failed.set(t);
      }

      @Override
      public void onCompleted() {
        failed.set(new IllegalStateException("completed"));
      }
    });
  }

  @Test
  void aPodDropsTheStreamOfASenderWhoseConnectionStalled() {
    try (TcpRelay relay = TcpRelay.to(pod.podId().address().port())) {
      // A sender without keepalive of its own: only the pod can notice the stall.
      ManagedChannel raw = NettyChannelBuilder.forAddress("127.0.0.1", relay.port()).usePlaintext().build();
      try {
        Map<Long, Reply> replies = new ConcurrentHashMap<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        StreamObserver<DeliverBatch> out = open(raw, replies, failed);
        out.onNext(DeliverBatch.newBuilder().addEnvelopes(envelope(1, "k", new Counter.Add(1), 5000)).build());
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> replies.containsKey(1L));
        assertThat(relay.openConnections()).isEqualTo(1);

        relay.mode(TcpRelay.Mode.DROP); // packets are lost, nothing is refused
        // The sender's stream can only end if the pod closes the connection: the relay passes on
        // the close, nothing else. The pod closes it keepalive + its timeout + the idle time after
        // the stall (35 s): without the idle close, gRPC cancelled the streams but never closed
        // the silent connection (measured: not within 90 s, three times out of three).
        Awaitility.await("the pod drops the stalled connection").atMost(Duration.ofSeconds(60))
            .until(() -> failed.get() != null);
        assertThat(failed.get()).isInstanceOf(StatusRuntimeException.class);
      } finally {
        raw.shutdownNow();
      }
    }
  }

  @Test
  void anEnvelopeWhoseDeadlinePassedInTransitIsNotHandled() throws Exception {
    ManagedChannel raw = NettyChannelBuilder.forAddress("127.0.0.1", pod.podId().address().port())
        .usePlaintext().build();
    try {
      Map<Long, Reply> replies = new ConcurrentHashMap<>();
      StreamObserver<DeliverBatch> out = open(raw, replies, new AtomicReference<>());
      long now = System.nanoTime();
      out.onNext(DeliverBatch.newBuilder().setSenderClockNanos(now)
          .addEnvelopes(envelope(1, "late", new Counter.Add(1), 5000)).build());
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> replies.containsKey(1L));
      assertThat(replies.get(1L).getAccepted()).isTrue();

      // Written 3 s before it arrives (a stalled connection), with 1 s to live when written.
      out.onNext(DeliverBatch.newBuilder().setSenderClockNanos(System.nanoTime() - TimeUnit.SECONDS.toNanos(3))
          .addEnvelopes(envelope(2, "late", new Counter.Add(100), 1000)).build());
      // Written just now, with 1 s to live.
      out.onNext(DeliverBatch.newBuilder().setSenderClockNanos(System.nanoTime())
          .addEnvelopes(envelope(3, "late", new Counter.Add(10), 1000)).build());
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> replies.containsKey(2L) && replies.containsKey(3L));
      Reply late = replies.get(2L);
      assertThat(late.getFailure().getCode()).isEqualTo(Failure.Code.TIMEOUT);
      assertThat(late.getFailure().getMessage()).contains("late, after its sender's deadline");
      assertThat(replies.get(3L).getAccepted()).isTrue();
      long value = pod.entity(Counter.TYPE, "late").<Long>ask(Counter.Get::new).toCompletableFuture()
          .get(5, TimeUnit.SECONDS);
      assertThat(value).as("the late envelope was not handled").isEqualTo(11);
      out.onCompleted();
    } finally {
      raw.shutdownNow();
    }
  }
}

package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.atoll.core.ShardHasher;
import io.atoll.runtime.DefaultCodec;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.codec.MessageCodec;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import io.atoll.transport.grpc.proto.DeliverBatch;
import io.atoll.transport.grpc.proto.Envelope;
import io.atoll.transport.grpc.proto.Failure;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.Reply;
import io.atoll.transport.grpc.proto.ReplyBatch;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * No head-of-line blocking on a pod stream: entities whose handlers block cannot stop the stream
 * for the other entities it carries, and what was acknowledged is still handled once they resume.
 */
@AtollCluster(shards = 4, podTemplate = Counter.Pods.class)
class HeadOfLineTest {

  private final String key = "hol-" + System.nanoTime();
  private final CountDownLatch gate = new CountDownLatch(1);
  private final MessageCodec codec = DefaultCodec.forType(Counter.TYPE);
  private Sharding pod;
  private ManagedChannel raw;
  private final Map<Long, Reply> replies = new ConcurrentHashMap<>();
  /** Which entity each envelope went to, by id. */
  private final Map<Long, String> sentTo = new HashMap<>();
  private StreamObserver<DeliverBatch> out;
  private long nextId;

  @BeforeEach
  void start(LocalCluster cluster) {
    Counter.LATCHES.put(key, gate);
    pod = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(10));
    raw = NettyChannelBuilder.forAddress("127.0.0.1", pod.podId().address().port()).usePlaintext().build();
    out = PodServiceGrpc.newStub(raw).deliver(new StreamObserver<>() {
      @Override
      public void onNext(ReplyBatch b) {
        b.getRepliesList().forEach(r -> replies.put(r.getId(), r));
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {}
    });
  }

  @AfterEach
  void stop() {
    gate.countDown();
    Counter.LATCHES.remove(key);
    raw.shutdownNow();
  }

  /** Writes {@code count} envelopes of {@code msg} to {@code entityId}, 64 a batch; returns the last id. */
  private long send(String entityId, Counter.Msg msg, int count, long deadlineMillis) {
    ByteString payload = ByteString.copyFrom(codec.encode(msg));
    int shard = ShardHasher.DEFAULT.shardOf(entityId, pod.numberOfShards());
    DeliverBatch.Builder b = DeliverBatch.newBuilder();
    for (int i = 0; i < count; i++) {
      long id = ++nextId;
      sentTo.put(id, entityId);
      b.addEnvelopes(Envelope.newBuilder().setId(id).setEntityType(Counter.TYPE.name()).setEntityId(entityId)
          .setShard(shard).setPayload(payload).setDeadlineMillis(deadlineMillis));
      if (b.getEnvelopesCount() == 64 || i == count - 1) {
        out.onNext(b.build());
        b = DeliverBatch.newBuilder();
      }
    }
    return nextId;
  }

  private long count(String entityId, java.util.function.Predicate<Reply> p) {
    return sentTo.entrySet().stream().filter(e -> e.getValue().equals(entityId))
        .map(e -> replies.get(e.getKey())).filter(r -> r != null && p.test(r)).count();
  }

  /**
   * The counter's value. Right after handlers that blocked for seconds, the pod's admission may
   * refuse an ask queued behind what is left of the mailbox as overloaded (it takes the type's
   * handlers for seconds long): a refusal is retried, as a client would, until the ask is taken.
   */
  private long valueOf(String entityId) {
    java.util.concurrent.atomic.AtomicLong value = new java.util.concurrent.atomic.AtomicLong();
    Awaitility.await("the value of " + entityId).atMost(Duration.ofSeconds(20))
        .ignoreExceptionsMatching(e -> e.getCause() instanceof io.atoll.runtime.DeliveryException d
            && d.reason() == io.atoll.runtime.DeliveryException.Reason.OVERLOADED)
        .until(() -> {
          value.set(pod.entity(Counter.TYPE, entityId).<Long>ask(Counter.Get::new).toCompletableFuture()
              .get(10, TimeUnit.SECONDS));
          return true;
        });
    return value.get();
  }

  @Test
  void oneBlockedEntityWithMoreQueuedThanTheStreamBoundDoesNotStopTheOthers() throws Exception {
    send("stuck", new Counter.Block(key), 1, 60_000);
    send("stuck", new Counter.Add(1), 6_000, 60_000);
    long other = send("free", new Counter.Add(1), 1, 60_000);

    Awaitility.await("the other entity's message is handled while one entity is blocked")
        .atMost(Duration.ofSeconds(15)).until(() -> replies.containsKey(other));
    assertThat(replies.get(other).getAccepted()).isTrue();
    long refused = count("stuck", r -> r.getFailure().getCode() == Failure.Code.OVERLOADED);
    assertThat(refused).as("refused at once: the blocked entity's mailbox is bounded").isGreaterThan(3_900); // 6,000 less at most 2,048 queued

    gate.countDown();
    Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> replies.size() == nextId);
    long accepted = count("stuck", r -> r.getAccepted()) - 1; // the Block itself
    assertThat(accepted + refused).isEqualTo(6_000);
    assertThat(valueOf("stuck")).as("every acknowledged message was handled").isEqualTo(accepted);
  }

  @Test
  void envelopesThatExpireBehindBlockedEntitiesLeaveTheStreamsBacklogWhenTheyExpire() throws Exception {
    int blocked = 5; // 5 x 1,000 waiting: over the stream's bound, each under an entity's
    for (int e = 0; e < blocked; e++) {
      send("stuck-" + e, new Counter.Block(key), 1, 60_000);
      send("stuck-" + e, new Counter.Add(1), 1_000, 2_000);
    }
    long other = send("free", new Counter.Add(1), 1, 60_000);

    Awaitility.await("the other entity's message is handled once the blocked ones' backlog expired")
        .atMost(Duration.ofSeconds(15)).until(() -> replies.containsKey(other));
    assertThat(replies.get(other).getAccepted()).isTrue();
    long expired = 0;
    for (int e = 0; e < blocked; e++) {
      expired += count("stuck-" + e, r -> r.getFailure().getCode() == Failure.Code.TIMEOUT
          && r.getFailure().getMessage().contains("expired in its mailbox"));
    }
    assertThat(expired).as("answered TIMEOUT as they expired, their entities still blocked").isGreaterThan(0);

    gate.countDown();
    Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> replies.size() == nextId);
    for (int e = 0; e < blocked; e++) {
      String id = "stuck-" + e;
      long accepted = count(id, r -> r.getAccepted()) - 1;
      assertThat(valueOf(id)).as("%s handled exactly what it acknowledged, nothing it answered TIMEOUT", id)
          .isEqualTo(accepted);
    }
  }
}

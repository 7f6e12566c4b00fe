package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.atoll.core.ShardHasher;
import io.atoll.runtime.DefaultCodec;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.codec.MessageCodec;
import io.atoll.testkit.LocalCluster;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.DeliverBatch;
import io.atoll.transport.grpc.proto.Envelope;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.ReplyBatch;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Inbound flow control on pod streams: a sender that floods entities which are not keeping up is
 * held back by the receiving pod (it stops reading), instead of filling the pod's memory. (One
 * entity alone cannot hold a stream back: its mailbox is bounded, see {@link HeadOfLineTest}; so
 * the flood is spread over eight blocked entities, whose mailboxes together could take more than
 * the stream lets wait.)
 */
class InboundFlowControlTest {

  private static final int TOTAL = 20_000;
  private static final int ENTITIES = 8;

  @Test
  void aSenderFloodingABlockedEntityIsHeldBackAndResumesWhenTheEntityCatchesUp() throws Exception {
    String key = "flow-" + System.nanoTime();
    CountDownLatch gate = new CountDownLatch(1);
    Counter.LATCHES.put(key, gate);
    try (LocalCluster cluster = LocalCluster.builder().shards(4).podTemplate(new Counter.Pods()).start()) {
      Sharding pod = cluster.addPod(b -> b.sendTimeout(Duration.ofSeconds(60)));
      cluster.awaitSettled(Duration.ofSeconds(10));
      MessageCodec codec = DefaultCodec.forType(Counter.TYPE);
      int shards = pod.numberOfShards();
      ByteString block = ByteString.copyFrom(codec.encode(new Counter.Block(key)));
      // 2 KiB messages that queue behind the blocked one.
      ByteString filler = ByteString.copyFrom(codec.encode(new Counter.Fail("x".repeat(2048))));

      ManagedChannel raw = Wire.channel(pod.podId().address());
      AtomicInteger sent = new AtomicInteger();
      AtomicInteger replies = new AtomicInteger();
      Sender sender = new Sender(replies, sent, shards, block, filler);
      try {
        PodServiceGrpc.newStub(raw).deliver(sender);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> sent.get() > 0);
        // The pod stops reading: the sender can no longer write, long before it sent everything.
        Awaitility.await("the sender is held back").during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(20))
            .until(() -> !sender.ready());
        int held = sent.get();
        assertThat(held).as("envelopes the pod let in while its entity was blocked").isLessThan(8_000);

        gate.countDown(); // the entity catches up: the pod reads again and everything is answered
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> replies.get() == TOTAL);
        assertThat(sent).hasValue(TOTAL);
      } finally {
        gate.countDown();
        sender.close();
        raw.shutdownNow();
      }
    } finally {
      Counter.LATCHES.remove(key);
    }
  }

  /** Writes envelopes as fast as the stream takes them, up to {@link #TOTAL}; counts the replies. */
  private static final class Sender implements ClientResponseObserver<DeliverBatch, ReplyBatch> {
    private final AtomicInteger replies;
    private final AtomicInteger sent;
    private final int shards;
    private final ByteString block;
    private final ByteString filler;
    private volatile ClientCallStreamObserver<DeliverBatch> call;
    private boolean started;

    Sender(AtomicInteger replies, AtomicInteger sent, int shards, ByteString block, ByteString filler) {
      this.replies = replies;
      this.sent = sent;
      this.shards = shards;
      this.block = block;
      this.filler = filler;
    }

    boolean ready() {
      return call.isReady();
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<DeliverBatch> requestStream) {
      call = requestStream;
      requestStream.setOnReadyHandler(this::write);
    }

    private synchronized void write() {
      while (call.isReady() && sent.get() < TOTAL) {
        DeliverBatch.Builder b = DeliverBatch.newBuilder();
        for (int i = 0; i < 64 && sent.get() < TOTAL; i++) {
          int id = sent.incrementAndGet();
          String entity = "slow-" + (id % ENTITIES);
          b.addEnvelopes(Envelope.newBuilder().setId(id).setEntityType(Counter.TYPE.name()).setEntityId(entity)
              .setShard(ShardHasher.DEFAULT.shardOf(entity, shards)).setDeadlineMillis(60_000)
              .setPayload(id <= ENTITIES ? block : filler)); // each entity blocks first
        }
        call.onNext(b.build());
      }
    }

    @Override
    public void onNext(ReplyBatch batch) {
      if (!started) {
        started = true; // the hello
        write();
      }
      replies.addAndGet(batch.getRepliesCount());
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}

    void close() {
      try {
        call.onCompleted();
      } catch (RuntimeException e) {
        // gone
      }
    }
  }
}

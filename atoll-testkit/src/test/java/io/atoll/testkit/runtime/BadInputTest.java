package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.atoll.core.ShardHasher;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.DeliverBatch;
import io.atoll.transport.grpc.proto.Envelope;
import io.atoll.transport.grpc.proto.Failure;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.Reply;
import io.atoll.transport.grpc.proto.ReplyBatch;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Bad input at the pod's boundaries: a clear error to the sender, and the pod keeps serving. */
@AtollCluster(shards = 10, podTemplate = Counter.Pods.class)
class BadInputTest {

  LocalCluster cluster;
  Sharding pod;
  ManagedChannel raw;

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
    pod = cluster.addPod(b -> b.maxMessageBytes(4096));
    cluster.awaitSettled(Duration.ofSeconds(10));
    raw = Wire.channel(pod.podId().address());
  }

  @AfterEach
  void stop() {
    raw.shutdownNow();
  }

  /** Sends envelopes on a raw Deliver stream and collects the replies by id. */
  private Map<Long, Reply> deliverRaw(Envelope... envelopes) {
    Map<Long, Reply> replies = new ConcurrentHashMap<>();
    StreamObserver<DeliverBatch> out = PodServiceGrpc.newStub(raw).deliver(new StreamObserver<>() {
      @Override
      public void onNext(ReplyBatch b) {
        b.getRepliesList().forEach(r -> replies.put(r.getId(), r));
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {}
    });
    out.onNext(DeliverBatch.newBuilder().addAllEnvelopes(java.util.List.of(envelopes)).build());
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> replies.size() == envelopes.length);
    out.onCompleted();
    return replies;
  }

  private Envelope.Builder envelope(long id, String type, String entityId) {
    return Envelope.newBuilder().setId(id).setEntityType(type).setEntityId(entityId)
        .setShard(ShardHasher.DEFAULT.shardOf(entityId, pod.numberOfShards())).setDeadlineMillis(5000);
  }

  private void podStillServes() throws Exception {
    EntityRef<Counter.Msg> ref = pod.entity(Counter.TYPE, "survivor");
    ref.tell(new Counter.Add(2)).toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertThat(ref.<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS)).isEqualTo(2);
  }

  @Test
  void undecodableUnknownMalformedAndOversizedEnvelopesEachGetTheirOwnClearFailure() throws Exception {
    Map<Long, Reply> r = deliverRaw(
        envelope(1, "counter", "a").setPayload(ByteString.copyFromUtf8("definitely not fory")).build(),
        envelope(2, "ghost", "a").setPayload(ByteString.EMPTY).build(),
        envelope(3, "counter", "a").setShard(10 + (1 << 16) + 1).build(),
        envelope(4, "counter", "a").setShard(ShardHasher.DEFAULT.shardOf("a", 10) % 10 + 1).build(),
        envelope(5, "counter", "").build(),
        envelope(6, "counter", "a").setPayload(ByteString.copyFrom(new byte[5000])).build(),
        envelope(7, "counter", "a").setShard(11).build());
    assertFailure(r.get(1L), Failure.Code.UNDECODABLE_MESSAGE, "could not be decoded");
    assertFailure(r.get(2L), Failure.Code.UNKNOWN_ENTITY_TYPE, "hosts no entity type 'ghost'");
    assertFailure(r.get(3L), Failure.Code.BAD_REQUEST, "shard: 65547 (expected: 1..10, or a shard of spaces"
        + " appended since, at most 65536 beyond)");
    assertFailure(r.get(4L), Failure.Code.BAD_REQUEST, "same number of shards");
    assertFailure(r.get(5L), Failure.Code.BAD_REQUEST, "entity id: length 0");
    assertFailure(r.get(6L), Failure.Code.MESSAGE_TOO_LARGE, "5000 bytes (expected: <= 4096)");
    // A shard beyond this pod's layout may be of a space appended that it has not heard of yet:
    // not ours (yet), so the sender retries rather than fails.
    assertThat(r.get(7L).hasNotOwner()).as("reply 7 is NotOwner: %s", r.get(7L)).isTrue();
    assertThat(r.get(7L).getNotOwner().getShard()).isEqualTo(11);
    podStillServes();
  }

  private static void assertFailure(Reply r, Failure.Code code, String text) {
    assertThat(r.hasFailure()).as("reply %s is a failure", r.getId()).isTrue();
    assertThat(r.getFailure().getCode()).isEqualTo(code);
    assertThat(r.getFailure().getMessage()).contains(text);
  }

  @Test
  void anUnassignForAShardThatDoesNotExistIsRefusedAndChangesNothing() throws Exception {
    assertThatThrownBy(() -> PodServiceGrpc.newBlockingStub(raw).withDeadlineAfter(5, TimeUnit.SECONDS)
        .unassign(UnassignRequest.newBuilder().addShards(0).setNewEpoch(99).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).contains("shard: 0 (expected: 1..10)");
        });
    assertThat(pod.servedShards()).hasSize(10);
    podStillServes();
  }

  @Test
  void carriedStatesThatAreMalformedMisdirectedOrNotHandedOffByTheManagerAreRefused() throws Exception {
    io.atoll.transport.grpc.proto.PodRef other = Wire.ref(new io.atoll.core.PodId(
        new io.atoll.core.PodAddress("127.0.0.1", 1), 7));
    io.atoll.transport.grpc.proto.PodRef me = Wire.ref(pod.podId());
    UnassignRequest toMe = UnassignRequest.newBuilder().addShards(3).addTargets(me).setNewEpoch(99)
        .setManagerTerm(1_000_000).build();
    io.atoll.transport.grpc.proto.CarriedEntity good = io.atoll.transport.grpc.proto.CarriedEntity.newBuilder()
        .setEntityType("counter").setEntityId("x").setRevision(1).setState(ByteString.copyFromUtf8("s")).build();
    record Case(io.atoll.transport.grpc.proto.CarryStateRequest request, Status.Code code, String text) {}
    java.util.List<Case> cases = java.util.List.of(
        new Case(io.atoll.transport.grpc.proto.CarryStateRequest.newBuilder().setUnassign(toMe).setFrom(other)
            .setShard(11).addEntities(good).build(), Status.Code.INVALID_ARGUMENT, "shard 11 (expected: 1..10)"),
        new Case(io.atoll.transport.grpc.proto.CarryStateRequest.newBuilder().setUnassign(toMe).setFrom(other)
            .setShard(4).addEntities(good).build(), Status.Code.INVALID_ARGUMENT, "the Unassign does not hand it off"),
        new Case(io.atoll.transport.grpc.proto.CarryStateRequest.newBuilder()
            .setUnassign(toMe.toBuilder().setTargets(0, other)).setFrom(other).setShard(3).addEntities(good).build(),
            Status.Code.FAILED_PRECONDITION, "not to pod"),
        new Case(io.atoll.transport.grpc.proto.CarryStateRequest.newBuilder().setUnassign(toMe).setFrom(other)
            .setShard(3).addEntities(good.toBuilder().setEntityType("ghost")).build(),
            Status.Code.INVALID_ARGUMENT, "hosts no such type"),
        new Case(io.atoll.transport.grpc.proto.CarryStateRequest.newBuilder().setUnassign(toMe).setFrom(other)
            .setShard(3).addEntities(good.toBuilder().setEntityId("")).build(),
            Status.Code.INVALID_ARGUMENT, "entity id: length 0"),
        new Case(io.atoll.transport.grpc.proto.CarryStateRequest.newBuilder().setUnassign(toMe).setFrom(other)
            .setShard(3).addEntities(good.toBuilder().setRevision(0)).build(),
            Status.Code.INVALID_ARGUMENT, "revision 0 with 1 bytes"));
    for (Case c : cases) {
      assertThatThrownBy(() -> PodServiceGrpc.newBlockingStub(raw).withDeadlineAfter(5, TimeUnit.SECONDS)
          .carryState(c.request()))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).as(c.text() + ": " + e.getStatus()).isEqualTo(c.code());
            assertThat(e.getStatus().getDescription()).contains(c.text());
          });
    }
    // Well formed, but the Unassign is not the manager's (this cluster signs them): nobody may
    // pose as a shard's previous owner. (EntityHostTest: a late one is kept nowhere.)
    assertThatThrownBy(() -> PodServiceGrpc.newBlockingStub(raw).withDeadlineAfter(5, TimeUnit.SECONDS).carryState(
        io.atoll.transport.grpc.proto.CarryStateRequest.newBuilder().setUnassign(toMe).setFrom(other).setShard(3)
            .addEntities(good).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
          assertThat(e.getStatus().getDescription()).contains("not signed by this cluster's manager key");
        });
    assertThat(pod.servedShards()).hasSize(10);
    podStillServes();
  }

  @Test
  void aMessageTooLargeToSendFailsAtTheSenderAndNothingIsSent() throws Exception {
    Sharding client = cluster.addClient(b -> b.maxMessageBytes(1024));
    var f = client.entity(Counter.TYPE, "big").tell(new Counter.Fail("x".repeat(4000))).toCompletableFuture();
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(f::isDone);
    assertThatThrownBy(f::join).cause().isInstanceOfSatisfying(DeliveryException.class, e -> {
      assertThat(e.reason()).isEqualTo(DeliveryException.Reason.MESSAGE_TOO_LARGE);
      assertThat(e).hasMessageContaining("counter/big").hasMessageContaining("(expected: <= 1024)");
    });
    podStillServes();
  }

  @Test
  void aTypeNobodyHostsFailsWithItsName() {
    Sharding client = cluster.addClient();
    EntityType<Counter.Msg> ghost = EntityType.of("ghost", Counter.Msg.class);
    var f = client.entity(ghost, "g").tell(new Counter.Add(1)).toCompletableFuture();
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(f::isDone);
    assertThatThrownBy(f::join).cause().isInstanceOfSatisfying(DeliveryException.class, e -> {
      assertThat(e.reason()).isEqualTo(DeliveryException.Reason.UNKNOWN_ENTITY_TYPE);
      assertThat(e).hasMessageContaining("ghost");
    });
  }

  @Test
  void sendingThroughAClosedShardingFailsAtOnce() {
    Sharding client = cluster.addClient();
    client.close();
    var f = client.entity(Counter.TYPE, "late").tell(new Counter.Add(1)).toCompletableFuture();
    assertThatThrownBy(f::join).cause().isInstanceOfSatisfying(DeliveryException.class, e -> {
      assertThat(e.reason()).isEqualTo(DeliveryException.Reason.SHUT_DOWN);
      assertThat(e).hasMessageContaining("counter/late");
    });
  }

  @Test
  void badIdsAndSettingsAreRefusedWithTheExpectedForm() {
    assertThatThrownBy(() -> pod.entity(Counter.TYPE, "x".repeat(2000)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: 1..1024");
    assertThatThrownBy(() -> Sharding.builder().manager("nonsense"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: host:port");
    assertThatThrownBy(() -> Sharding.builder().port(70000))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: 0..65535");
  }
}

package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.DeliverBatch;
import io.atoll.transport.grpc.proto.Envelope;
import io.atoll.transport.grpc.proto.GossipRequest;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.ReplyBatch;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two clusters on one machine, as when a reused address (Kubernetes reuses pod IPs) makes one
 * cluster's pods or manager reach the other's: each cluster has its own id, and every config,
 * gossip exchange, envelope stream, hand-off and registration from the other is refused with a
 * clear error; nothing merges.
 */
class TwoClustersTest {

  LocalCluster one;
  LocalCluster two;
  Sharding a;
  Sharding b;
  ManagedChannel toA;

  @BeforeEach
  void start() {
    one = LocalCluster.builder().shards(6).podTemplate(new Counter.Pods()::apply).start();
    two = LocalCluster.builder().shards(6).podTemplate(new Counter.Pods()::apply).start();
    a = one.addPod();
    b = two.addPod();
    one.awaitSettled(Duration.ofSeconds(10));
    two.awaitSettled(Duration.ofSeconds(10));
    toA = Wire.channel(a.podId().address());
  }

  @AfterEach
  void stop() {
    if (toA != null) {
      Wire.close(toA);
    }
    two.close();
    one.close();
  }

  static void refused(Runnable call, String what) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
      assertThat(e.getStatus().getDescription()).contains(what);
    });
  }

  static void notSigned(Runnable call) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
      assertThat(e.getStatus().getDescription()).contains("refused");
    });
  }

  @Test
  void eachClusterHasItsOwnIdAndItsPodsAdoptIt() {
    ClusterId idOne = one.manager().clusterId();
    ClusterId idTwo = two.manager().clusterId();
    assertThat(idOne.isNone()).isFalse();
    assertThat(idTwo.isNone()).isFalse();
    assertThat(idOne).isNotEqualTo(idTwo);
    assertThat(a.config().clusterId()).isEqualTo(idOne);
    assertThat(b.config().clusterId()).isEqualTo(idTwo);
  }

  @Test
  void gossipAndConfigsFromTheOtherClusterAreRefusedAndNothingMerges() {
    ClusterConfig before = a.config();
    ClusterConfig theirs = b.config();
    PodServiceGrpc.PodServiceBlockingStub stub = PodServiceGrpc.newBlockingStub(toA)
        .withDeadlineAfter(5, TimeUnit.SECONDS);
    refused(() -> stub.gossip(GossipRequest.newBuilder().setFrom(Wire.ref(b.podId())).setEpoch(theirs.epoch() + 100)
        .setConfig(Wire.bytes(theirs)).setClusterId(theirs.clusterId().toString()).build()),
        "from cluster " + theirs.clusterId());
    // A sender that does not say its cluster: the config is not signed by this cluster's manager.
    notSigned(() -> stub.gossip(GossipRequest.newBuilder().setFrom(Wire.ref(b.podId())).setEpoch(theirs.epoch() + 100)
        .setConfig(Wire.bytes(theirs)).build()));
    notSigned(() -> stub.pushConfig(Wire.bytes(theirs)));
    assertThat(a.config().pod(b.podId())).as("nothing of the other cluster merged").isEmpty();
    assertThat(a.config().clusterId()).isEqualTo(before.clusterId());
    assertThat(a.config().epoch()).isEqualTo(one.manager().config().epoch());
  }

  @Test
  void envelopesFromThePodsOfTheOtherClusterAreRefused() {
    CompletableFuture<Throwable> failed = new CompletableFuture<>();
    AtomicInteger replies = new AtomicInteger();
    StreamObserver<DeliverBatch> out = PodServiceGrpc.newStub(toA).deliver(new StreamObserver<ReplyBatch>() {
      @Override
      public void onNext(ReplyBatch r) {
        replies.addAndGet(r.getRepliesCount());
      }

      @Override
      public void onError(Throwable t) {
        failed.complete(t);
      }

      @Override
      public void onCompleted() {
        failed.complete(null);
      }
    });
    int shard = a.servedShards().get(0);
    out.onNext(DeliverBatch.newBuilder().setClusterId(b.config().clusterId().toString())
        .addEnvelopes(Envelope.newBuilder().setId(1).setEntityType(Counter.TYPE.name()).setEntityId("x")
            .setShard(shard).setDeadlineMillis(5000)).build());
    Throwable t = failed.orTimeout(5, TimeUnit.SECONDS).join();
    assertThat(t).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
      assertThat(e.getStatus().getDescription()).contains("envelopes from cluster " + b.config().clusterId());
    });
    assertThat(replies).hasValue(0);
    assertThat(a.activeEntities()).isZero();
  }

  @Test
  void aHandOffFromTheOtherClustersManagerIsRefused() {
    List<Integer> served = a.servedShards();
    assertThat(served).isNotEmpty();
    refused(() -> PodServiceGrpc.newBlockingStub(toA).withDeadlineAfter(5, TimeUnit.SECONDS)
        .unassign(UnassignRequest.newBuilder().addAllShards(served).setNewEpoch(1_000).setManagerTerm(1_000)
            .setTerminationTimeoutMillis(100).setClusterId(two.manager().clusterId().toString()).build()),
        "unassign from cluster " + two.manager().clusterId());
    assertThat(a.servedShards()).isEqualTo(served);
  }

  @Test
  void aPodOfOneClusterRegisteringWithTheOtherManagerIsRefused() {
    ManagedChannel toTwo = Wire.channel(two.managerAddress());
    try {
      refused(() -> ShardManagerServiceGrpc.newBlockingStub(toTwo).withDeadlineAfter(5, TimeUnit.SECONDS)
          .register(RegisterRequest.newBuilder().setPod(Wire.info(new io.atoll.core.Pod(a.podId(),
              io.atoll.core.PodVersion.of("1")))).setClusterId(a.config().clusterId().toString()).build()),
          "belongs to cluster " + a.config().clusterId());
      assertThat(two.manager().config().pod(a.podId())).isEmpty();
    } finally {
      Wire.close(toTwo);
    }
  }
}

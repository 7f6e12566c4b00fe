package io.atoll.manager.pods;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.proto.UnassignRequest;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Unassigns waiting for a pod's renewal: handed out once, answered once, withdrawn on their deadline. */
class RelayedUnassignsTest {

  private final RelayedUnassigns relay = new RelayedUnassigns();
  private final PodId pod = new PodId(new PodAddress("127.0.0.1", 7000), 1);

  private static UnassignRequest request(long epoch, Integer... shards) {
    return UnassignRequest.newBuilder().addAllShards(List.of(shards)).setNewEpoch(epoch).build();
  }

  @Test
  void aRequestIsHandedOutOnceAndItsAnswerCompletesIt() {
    CompletableFuture<Set<Integer>> f = relay.offer(pod, request(5, 1, 2));
    assertThat(relay.answered(pod, 5, List.of(1, 2), "")).as("not handed out yet: an answer is made up").isFalse();
    assertThat(relay.take(pod).getShardsList()).containsExactly(1, 2);
    assertThat(relay.take(pod)).as("once").isNull();
    assertThat(relay.answered(pod, 4, List.of(1), "")).as("another request's epoch").isFalse();
    assertThat(relay.answered(pod, 5, List.of(1, 2), "")).isTrue();
    assertThat(f).isCompletedWithValue(Set.of(1, 2));
    assertThat(relay.size()).isZero();
    assertThat(relay.take(pod)).isNull();
  }

  @Test
  void aRefusalFailsItADeadlineWithdrawsItAndANewerOneReplacesTheOld() {
    CompletableFuture<Set<Integer>> refused = relay.offer(pod, request(5, 1));
    relay.take(pod);
    relay.answered(pod, 5, List.of(), "FAILED_PRECONDITION: manager term 3 is older");
    assertThat(refused).isCompletedExceptionally();

    CompletableFuture<Set<Integer>> late = relay.offer(pod, request(6, 1));
    late.completeExceptionally(new java.util.concurrent.TimeoutException("deadline"));
    assertThat(relay.take(pod)).as("withdrawn: never handed out after its deadline").isNull();
    assertThat(relay.size()).isZero();

    CompletableFuture<Set<Integer>> old = relay.offer(pod, request(7, 1));
    CompletableFuture<Set<Integer>> newer = relay.offer(pod, request(8, 1, 3));
    assertThat(old).isCompletedExceptionally();
    assertThat(relay.take(pod).getNewEpoch()).isEqualTo(8);
    relay.answered(pod, 8, List.of(1, 3), "");
    assertThat(newer).isCompletedWithValue(Set.of(1, 3));
  }
}

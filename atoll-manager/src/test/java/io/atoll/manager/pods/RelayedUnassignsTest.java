package io.atoll.manager.pods;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.proto.UnassignRequest;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Unassigns waiting for a pod's renewals: handed out with every renewal until answered, matched by
 * their own id, withdrawn on their deadline or when the pod stops renewing.
 */
class RelayedUnassignsTest {

  private final RelayedUnassigns relay = new RelayedUnassigns();
  private final PodId pod = new PodId(new PodAddress("127.0.0.1", 7000), 1);

  private static UnassignRequest request(long epoch, Integer... shards) {
    return UnassignRequest.newBuilder().addAllShards(List.of(shards)).setNewEpoch(epoch).build();
  }

  @Test
  void aRequestGoesWithEveryRenewalUntilItsAnswerCompletesIt() {
    CompletableFuture<Set<Integer>> f = relay.offer(pod, request(5, 1, 2));
    RelayedUnassigns.Relayed r = relay.take(pod);
    assertThat(r.request().getShardsList()).containsExactly(1, 2);
    assertThat(relay.take(pod)).as("again with the next renewal: the first answer may be lost").isEqualTo(r);
    assertThat(relay.answered(pod, r.id() + 1, List.of(1, 2), "")).as("another request's id").isFalse();
    assertThat(relay.answered(pod, r.id(), List.of(1, 3), "")).as("a shard it did not ask for").isFalse();
    assertThat(relay.answered(pod, r.id(), List.of(1, 2), "")).isTrue();
    assertThat(f).isCompletedWithValue(Set.of(1, 2));
    assertThat(relay.answered(pod, r.id(), List.of(1, 2), "")).as("a repeated answer").isFalse();
    assertThat(relay.size()).isZero();
    assertThat(relay.take(pod)).isNull();
  }

  @Test
  void aRefusalFailsItADeadlineOrAPodThatStopsRenewingWithdrawsItAndANewerOneReplacesTheOld() {
    CompletableFuture<Set<Integer>> refused = relay.offer(pod, request(5, 1));
    relay.answered(pod, relay.take(pod).id(), List.of(), "FAILED_PRECONDITION: manager term 3 is older");
    assertThat(refused).isCompletedExceptionally();

    CompletableFuture<Set<Integer>> late = relay.offer(pod, request(6, 1));
    late.completeExceptionally(new java.util.concurrent.TimeoutException("deadline"));
    assertThat(relay.take(pod)).as("withdrawn: never handed out after its deadline").isNull();

    CompletableFuture<Set<Integer>> dying = relay.offer(pod, request(7, 1));
    relay.withdraw(pod);
    assertThat(dying).isCompletedExceptionally();
    assertThat(relay.size()).isZero();

    CompletableFuture<Set<Integer>> old = relay.offer(pod, request(8, 1));
    long oldId = relay.take(pod).id();
    CompletableFuture<Set<Integer>> newer = relay.offer(pod, request(8, 1, 3)); // the same epoch, a new round
    assertThat(old).isCompletedExceptionally();
    assertThat(relay.answered(pod, oldId, List.of(1), "")).as("a late answer to the old one").isFalse();
    RelayedUnassigns.Relayed r = relay.take(pod);
    relay.answered(pod, r.id(), List.of(1, 3), "");
    assertThat(newer).isCompletedWithValue(Set.of(1, 3));
  }
}

package io.atoll.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The read-only view a pod gives its users: shards numbered from 1, only active owners. */
class ClusterViewTest {

  private static final PodId A = new PodId(new PodAddress("10.0.0.1", 7000), 11);
  private static final PodId B = new PodId(new PodAddress("10.0.0.2", 7000), 22);

  private final ClusterView view = new ClusterView(ClusterConfig.empty(4).toBuilder()
      .pod(new PodEntry(new Pod(A, PodVersion.of("1")), PodStatus.ACTIVE, 1))
      .pod(new PodEntry(new Pod(B, PodVersion.of("1")), PodStatus.GONE, 2))
      .claim(0, Claim.stable(A, 1))
      .claim(2, Claim.stable(A, 1))
      .claim(3, Claim.stable(B, 1))
      .build());

  @Test
  void shardsAreNumberedFromOneAndOnlyActivePodsOwn() {
    assertThat(view.numberOfShards()).isEqualTo(4);
    assertThat(view.owner(1)).contains(A);
    assertThat(view.owner(2)).isEmpty();
    assertThat(view.owner(3)).contains(A);
    assertThat(view.owner(4)).as("owned by a gone pod: no live owner").isEmpty();
    assertThat(view.unownedCount()).isEqualTo(1);
  }

  @Test
  void podsAndTheirShards() {
    assertThat(view.activePods()).containsExactly(A);
    assertThat(view.isActive(A)).isTrue();
    assertThat(view.isActive(B)).isFalse();
    assertThat(view.status(B)).contains(PodStatus.GONE);
    assertThat(view.status(new PodId(new PodAddress("10.0.0.3", 1), 3))).isEmpty();
    Map<PodId, List<Integer>> byPod = view.shardsByPod();
    assertThat(byPod.get(A)).containsExactly(1, 3);
    assertThat(byPod.get(B)).containsExactly(4);
  }

  @Test
  void aShardOutsideTheRangeIsABadArgument() {
    assertThatThrownBy(() -> view.owner(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("shard: 0 (expected: 1..4)");
    assertThatThrownBy(() -> view.owner(5)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void itIsReadOnly() {
    assertThatThrownBy(() -> view.activePods().add(B)).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> view.shardsByPod().get(A).add(2)).isInstanceOf(UnsupportedOperationException.class);
  }
}

package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Cluster identity: configs of two clusters never merge; none merges with any id and takes it. */
class ClusterIdTest {

  static final ClusterId A = new ClusterId(1, 2);
  static final ClusterId B = new ClusterId(3, 4);
  static final Pod P = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("1"));

  @Test
  void configsOfTwoClustersNeverMerge() {
    ClusterConfig a = ClusterConfig.empty(3, A).toBuilder().pod(new PodEntry(P, PodStatus.ACTIVE, 5)).build();
    ClusterConfig b = ClusterConfig.empty(3, B);
    assertThatThrownBy(() -> a.merge(b)).isInstanceOfSatisfying(ClusterMismatchException.class, e -> {
      assertThat(e.expected()).isEqualTo(A);
      assertThat(e.actual()).isEqualTo(B);
      assertThat(e).hasMessageStartingWith("cluster id: " + B + " (expected: " + A + ";");
    });
    assertThatThrownBy(() -> b.merge(a)).isInstanceOf(ClusterMismatchException.class);
    assertThatThrownBy(() -> a.withClusterId(B)).isInstanceOf(ClusterMismatchException.class);
    assertThatThrownBy(() -> a.toBuilder().clusterId(B)).isInstanceOf(ClusterMismatchException.class);
  }

  @Test
  void aConfigOfNoClusterTakesTheIdOfWhatItMergesWith() {
    ClusterConfig none = ClusterConfig.empty(3).toBuilder().pod(new PodEntry(P, PodStatus.ACTIVE, 5)).build();
    ClusterConfig a = ClusterConfig.empty(3, A);
    assertThat(none.merge(a).clusterId()).isEqualTo(A);
    assertThat(a.merge(none).clusterId()).isEqualTo(A);
    assertThat(none.merge(a).pods()).isEqualTo(none.pods());
    assertThat(a.merge(a)).isSameAs(a);
    assertThat(none.withClusterId(A)).isEqualTo(none.merge(a)).isNotEqualTo(none);
  }

  @Test
  void theIdTravelsInTheEncodingAndAConfigWithoutOneKeepsTheFirstFormat() {
    ClusterConfig a = ClusterConfig.empty(3, A).toBuilder().pod(new PodEntry(P, PodStatus.ACTIVE, 5)).build();
    byte[] bytes = a.encode();
    assertThat(bytes[2]).isEqualTo((byte) 2);
    assertThat(ClusterConfig.decode(bytes)).isEqualTo(a);
    assertThat(ClusterConfig.decode(bytes).clusterId()).isEqualTo(A);
    assertThat(a.toBuilder().build().clusterId()).isEqualTo(A);
    assertThat(ClusterConfig.empty(3).encode()[2]).isEqualTo((byte) 1);
    byte[] zero = ClusterConfig.empty(3, A).encode();
    for (int i = 3; i < 19; i++) {
      zero[i] = 0;
    }
    assertThatThrownBy(() -> ClusterConfig.decode(zero)).isInstanceOf(MalformedConfigException.class)
        .hasMessageContaining("cluster id 0 in format 2");
  }

  @Test
  void idsPrintAndParseAsHex() {
    ClusterId id = ClusterId.random(new Random(1));
    assertThat(id.isNone()).isFalse();
    assertThat(id.toString()).hasSize(32);
    assertThat(ClusterId.parse(id.toString())).isEqualTo(id);
    assertThat(ClusterId.parse("")).isEqualTo(ClusterId.NONE);
    assertThat(ClusterId.NONE.toString()).isEmpty();
    assertThatThrownBy(() -> ClusterId.parse("xyz")).hasMessage("cluster id: 'xyz' (expected: 32 hex digits)");
    assertThatThrownBy(() -> ClusterId.parse("g".repeat(32))).hasMessageContaining("expected: 32 hex digits");
  }
}

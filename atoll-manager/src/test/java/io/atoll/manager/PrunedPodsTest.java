package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pruned pods a manager remembers in its stored state: fingerprints, order and the cap. */
class PrunedPodsTest {
  private static PodId pod(String host, int port, long incarnation) {
    return new PodId(new PodAddress(host, port), incarnation);
  }

  @Test
  void fingerprintsAreStableAcrossReleases() {
    // Stored in the manager's state: a changed function would make a restarted manager forget
    // every pod it pruned, and let such a pod's gossip bring its old claims back.
    assertThat(PrunedPods.fingerprint(pod("127.0.0.1", 7000, 1))).isEqualTo(0x44d887381c449372L);
    assertThat(PrunedPods.fingerprint(pod("pod-a.example", 65535, -5))).isEqualTo(0x45483674f1106c4cL);
    assertThat(PrunedPods.fingerprint(pod("10.0.0.7", 1, Long.MAX_VALUE))).isEqualTo(0xcaadbbcad3605f69L);
  }

  @Test
  void everyPartOfTheIdCounts() {
    long base = PrunedPods.fingerprint(pod("127.0.0.1", 7000, 1));
    assertThat(PrunedPods.fingerprint(pod("127.0.0.2", 7000, 1))).isNotEqualTo(base);
    assertThat(PrunedPods.fingerprint(pod("127.0.0.1", 7001, 1))).isNotEqualTo(base);
    assertThat(PrunedPods.fingerprint(pod("127.0.0.1", 7000, 2))).isNotEqualTo(base);
  }

  @Test
  void addingSeveralKeepsEveryOneInOrderAndTheNewestUnderTheCap() {
    PodId a = pod("127.0.0.1", 7000, 1);
    PodId b = pod("127.0.0.1", 7001, 1);
    PodId c = pod("127.0.0.1", 7002, 1);
    PodId d = pod("127.0.0.1", 7003, 1);
    PrunedPods one = PrunedPods.NONE.plus(List.of(a), 10);
    PrunedPods three = one.plus(List.of(b, c), 10);
    assertThat(three.size()).isEqualTo(3);
    assertThat(three.fingerprints()).containsExactly(PrunedPods.fingerprint(a), PrunedPods.fingerprint(b),
        PrunedPods.fingerprint(c));
    assertThat(List.of(a, b, c)).allMatch(three::contains);
    assertThat(three.contains(d)).isFalse();
    PrunedPods capped = three.plus(List.of(d), 3);
    assertThat(capped.fingerprints()).containsExactly(PrunedPods.fingerprint(b), PrunedPods.fingerprint(c),
        PrunedPods.fingerprint(d));
    assertThat(capped.contains(a)).as("the oldest went").isFalse();
    assertThat(three.plus(List.of(), 3)).isSameAs(three);
  }

  @Test
  void equalityFollowsTheFingerprintsInOrder() {
    PodId a = pod("127.0.0.1", 7000, 1);
    PodId b = pod("127.0.0.1", 7001, 1);
    PrunedPods ab = PrunedPods.NONE.plus(List.of(a, b), 10);
    assertThat(ab).isEqualTo(PrunedPods.of(ab.fingerprints())).hasSameHashCodeAs(PrunedPods.of(ab.fingerprints()));
    assertThat(ab).isNotEqualTo(PrunedPods.NONE.plus(List.of(b, a), 10)).isNotEqualTo(PrunedPods.NONE);
    assertThat(PrunedPods.of(new long[0])).isSameAs(PrunedPods.NONE);
    assertThat(ab).hasToString("PrunedPods[2]");
  }
}

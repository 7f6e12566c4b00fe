package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.slots.SlotState;
import io.atoll.core.spi.StoreConflictException;
import org.junit.jupiter.api.Test;

/** The model's small rules at their edges: sizes, pod counts, lookups, names, and merge ties. */
class ModelLimitsTest {

  private static final PodId A = new PodId(new PodAddress("10.0.0.1", 7001), 1);
  private static final PodId B = new PodId(new PodAddress("10.0.0.2", 7001), 1);

  private static PodEntry active(PodId id) {
    return new PodEntry(new Pod(id, PodVersion.of("1")), PodStatus.ACTIVE, 1);
  }

  @Test
  void aConfigHasOneToMaxSizePositions() {
    assertThat(ClusterConfig.empty(1).size()).isEqualTo(1);
    assertThat(ClusterConfig.empty(ClusterConfig.MAX_SIZE).size()).isEqualTo(ClusterConfig.MAX_SIZE);
    assertThatThrownBy(() -> ClusterConfig.empty(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("size: 0 (expected: 1..1048576)");
    assertThatThrownBy(() -> ClusterConfig.empty(ClusterConfig.MAX_SIZE + 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("size: 1048577 (expected: 1..1048576)");
  }

  @Test
  void aConfigListsAtMostMaxPods() {
    ClusterConfig.Builder b = ClusterConfig.empty(1).toBuilder();
    for (int i = 0; i < ClusterConfig.MAX_PODS; i++) {
      b.pod(active(new PodId(new PodAddress("h", 1), i)));
    }
    assertThat(b.build().pods()).hasSize(ClusterConfig.MAX_PODS);
    b.pod(active(new PodId(new PodAddress("h", 1), ClusterConfig.MAX_PODS)));
    assertThatThrownBy(b::build)
        .isInstanceOf(IllegalArgumentException.class).hasMessage("pods: 65536 (expected: <= 65535)");
  }

  @Test
  void aClaimOfAnUnlistedPodNamesItsPosition() {
    ClusterConfig base = ClusterConfig.empty(2048).toBuilder().pod(active(A)).build();
    assertThatThrownBy(() -> base.toBuilder().claim(1030, Claim.stable(B, 1)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("position 1030: pod " + B + " is not listed (expected: add its entry with pod(...))");
    assertThatThrownBy(() -> base.toBuilder().claim(1500, new Claim(A, SlotState.MIGRATING, B, 1)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("position 1500: pod " + B + " is not listed (expected: add its entry with pod(...))");
  }

  @Test
  void lookupsOfAnUnlistedPodFindNothing() {
    ClusterConfig c = ClusterConfig.empty(4).toBuilder().pod(active(A)).claim(0, Claim.stable(A, 2)).build();
    assertThat(c.pod(B)).isEmpty();
    assertThat(c.pod(A)).contains(active(A));
    assertThat(c.isActive(B)).isFalse();
    assertThat(c.isActive(A)).isTrue();
  }

  @Test
  void activePodsLeaveTheGoneOut() {
    ClusterConfig c = ClusterConfig.empty(4).toBuilder().pod(active(A))
        .pod(new PodEntry(new Pod(B, PodVersion.of("1")), PodStatus.GONE, 2)).build();
    assertThat(c.activePods()).containsExactly(new Pod(A, PodVersion.of("1")));
    assertThat(c.toBuilder().removePod(B).build().pods()).containsExactly(active(A));
    assertThat(c.toString()).isNotEmpty().contains(A.toString());
  }

  /** Configs that differ in one field of position 0 only: the merge takes the winner there. */
  @Test
  void aMergeSeesADifferenceAtTheFirstPositionInEachField() {
    Claim[][] loserAndWinner = {
        {Claim.stable(A, 3), Claim.stable(A, 4)}, // a newer epoch
        {Claim.stable(A, 3), Claim.stable(B, 3)}, // the same epoch, the greater owner wins the tie
        {new Claim(A, SlotState.MIGRATING, B, 3), new Claim(A, SlotState.IMPORTING, B, 3)}, // the state
        {new Claim(A, SlotState.MIGRATING, A, 3), new Claim(A, SlotState.MIGRATING, B, 3)}}; // the peer
    ClusterConfig base = ClusterConfig.empty(8).toBuilder().pod(active(A)).pod(active(B)).build();
    for (Claim[] pair : loserAndWinner) {
      ClusterConfig loser = base.toBuilder().claim(0, pair[0]).build();
      ClusterConfig winner = base.toBuilder().claim(0, pair[1]).build();
      assertThat(loser.merge(winner).claim(0)).as("merge with %s", pair[1]).isEqualTo(pair[1]);
      assertThat(winner.merge(loser).claim(0)).as("merge into %s", pair[1]).isEqualTo(pair[1]);
    }
  }

  @Test
  void addressesParseOnlyHostColonPort() {
    assertThat(PodAddress.parse("h:1")).isEqualTo(new PodAddress("h", 1));
    assertThat(PodAddress.parse("[::1]:7070")).isEqualTo(new PodAddress("::1", 7070));
    assertThatThrownBy(() -> PodAddress.parse(":7070"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("address: ':7070' (expected: host:port)");
    assertThatThrownBy(() -> PodAddress.parse("h:"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("address: 'h:' (expected: host:port)");
    assertThatThrownBy(() -> PodAddress.parse("h:x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("address: 'h:x' (expected: host:port with a numeric port)");
  }

  @Test
  void identitiesPrintTheWayLogsShowThem() {
    assertThat(new PodId(new PodAddress("10.0.0.1", 7001), 255)).hasToString("10.0.0.1:7001#ff");
    assertThat(new PodAddress("::1", 7070)).hasToString("[::1]:7070");
    assertThat(new EntityAddress("counter", "user-42")).hasToString("counter/user-42");
    assertThat(PodVersion.of("1.2.3")).hasToString("1.2.3");
    assertThat(new Pod(A, PodVersion.of("1")).address()).isEqualTo(A.address());
  }

  @Test
  void aNumericVersionPartIsNewerThanAText() {
    // '0' and '9' are digits; the text part loses whatever its letters.
    assertThat(PodVersion.of("1.0")).isGreaterThan(PodVersion.of("1.a"));
    assertThat(PodVersion.of("1.9")).isGreaterThan(PodVersion.of("1.a"));
    assertThat(PodVersion.of("1.0.1")).isGreaterThan(PodVersion.of("1.0.beta"));
    assertThat(PodVersion.of("1.0.beta")).isLessThan(PodVersion.of("1.0.1"));
    assertThat(PodVersion.of("1./")).isLessThan(PodVersion.of("1.0"));
    assertThat(PodVersion.of("1.:")).isLessThan(PodVersion.of("1.9"));
    // An empty part ("1..2") is text, not a number; text parts compare as text.
    assertThat(PodVersion.of("1..2")).isLessThan(PodVersion.of("1.0.2"));
    assertThat(PodVersion.of("1..2")).isLessThan(PodVersion.of("1.a.2"));
    assertThat(PodVersion.of("1.b")).isGreaterThan(PodVersion.of("1.a"));
    assertThat(PodVersion.of("1.0-rc1")).isLessThan(PodVersion.of("1.0"));
  }

  @Test
  void fencingTokensOrderByEpoch() {
    assertThat(new FencingToken(1, 5)).isGreaterThan(new FencingToken(2, 4));
    assertThat(new FencingToken(2, 4)).isLessThan(new FencingToken(1, 5));
    assertThat(new FencingToken(1, 5).compareTo(new FencingToken(9, 5))).isZero();
  }

  @Test
  void fencingTokensOfOneEpochOrderByLeaseGeneration() {
    assertThat(new FencingToken(1, 5, 1)).isGreaterThan(new FencingToken(1, 5, 0));
    assertThat(new FencingToken(1, 5)).isEqualTo(new FencingToken(1, 5, 0));
    assertThat(new FencingToken(1, 6, 0)).isGreaterThan(new FencingToken(1, 5, 9));
  }

  @Test
  void aStoreConflictCarriesBothVersions() {
    StoreConflictException e = new StoreConflictException("store x", 3, 5);
    assertThat(e.expected()).isEqualTo(3);
    assertThat(e.actual()).isEqualTo(5);
    assertThat(e).hasMessage("store x: version 5 is stored (expected: 3); another manager wrote since, reload before writing");
  }
}

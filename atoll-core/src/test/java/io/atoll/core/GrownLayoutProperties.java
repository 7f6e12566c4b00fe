package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The merge laws over configs whose layouts grew by appended spaces (a new role's space added to a
 * running cluster): a config merges with one of a layout that extends its own, merge stays a join,
 * and every position of the shorter layout keeps its number and its claim's order.
 */
class GrownLayoutProperties {

  /** {@link Configs#THREE_SPACES}, grown once and twice. */
  static final Spaces FOUR_SPACES = Configs.THREE_SPACES.append("jobs", 2);
  static final Spaces FIVE_SPACES = FOUR_SPACES.append("mail", 3);

  static final List<List<String>> ROLES = List.of(Pod.DEFAULT_ROLES, List.of("web"), List.of("worker"),
      List.of("jobs"), List.of("web", "jobs"), List.of("mail"));

  @Provide
  Arbitrary<ClusterConfig> configs() {
    return Arbitraries.oneOf(Configs.configs(Configs.THREE_SPACES, ROLES), Configs.configs(FOUR_SPACES, ROLES),
        Configs.configs(FIVE_SPACES, ROLES));
  }

  @Property
  void mergeIsCommutative(@ForAll("configs") ClusterConfig a, @ForAll("configs") ClusterConfig b) {
    assertThat(a.merge(b)).isEqualTo(b.merge(a));
  }

  @Property
  void mergeIsAssociative(@ForAll("configs") ClusterConfig a, @ForAll("configs") ClusterConfig b,
      @ForAll("configs") ClusterConfig c) {
    assertThat(a.merge(b).merge(c)).isEqualTo(a.merge(b.merge(c)));
  }

  @Property
  void mergeIsIdempotent(@ForAll("configs") ClusterConfig a, @ForAll("configs") ClusterConfig b) {
    assertThat(a.merge(a)).isSameAs(a);
    ClusterConfig ab = a.merge(b);
    assertThat(ab.merge(b)).isEqualTo(ab);
    assertThat(ab.merge(a)).isEqualTo(ab);
  }

  @Property
  void theMergeHasTheLongerLayoutAndIsTheMergeOfTheShorterExtended(@ForAll("configs") ClusterConfig a,
      @ForAll("configs") ClusterConfig b) {
    ClusterConfig m = a.merge(b);
    Spaces longer = a.size() >= b.size() ? a.spaces() : b.spaces();
    assertThat(m.spaces()).isEqualTo(longer);
    assertThat(m).isEqualTo(a.extendTo(longer).merge(b.extendTo(longer)));
    assertThat(ClusterConfig.decode(m.encode())).isEqualTo(m);
  }

  @Property
  void everyPositionKeepsItsNumberAndNoEpochIsLowered(@ForAll("configs") ClusterConfig a,
      @ForAll("configs") ClusterConfig b) {
    ClusterConfig m = a.merge(b);
    for (int i = 0; i < m.size(); i++) {
      long ea = i < a.size() ? a.epoch(i) : 0;
      long eb = i < b.size() ? b.epoch(i) : 0;
      assertThat(m.epoch(i)).isEqualTo(Math.max(ea, eb));
      Claim merged = m.claim(i);
      if (i < a.size() && !merged.equals(a.claim(i))) {
        assertThat(i < b.size() && merged.equals(b.claim(i))).isTrue();
      }
    }
    assertThat(m.epoch()).isEqualTo(Math.max(a.epoch(), b.epoch()));
  }

  @Property
  void extendingKeepsEveryClaimAndAddsEmptyPositions(@ForAll("configs") ClusterConfig a) {
    ClusterConfig x = a.extendTo(FIVE_SPACES);
    assertThat(x.size()).isEqualTo(FIVE_SPACES.size());
    assertThat(x.pods()).isEqualTo(a.pods());
    assertThat(x.clusterId()).isEqualTo(a.clusterId());
    assertThat(x.epoch()).isEqualTo(a.epoch());
    for (int i = 0; i < x.size(); i++) {
      assertThat(x.claim(i)).isEqualTo(i < a.size() ? a.claim(i) : Claim.offline(0));
    }
    assertThat(x.merge(a)).isSameAs(x);
    assertThat(a.extendTo(a.spaces())).isSameAs(a);
  }

  @Example
  void extendingAcrossAChunkBoundaryKeepsTheLastShortChunksClaims() {
    PodId p = Configs.POOL.get(0);
    ClusterConfig a = ClusterConfig.empty(Spaces.parse("default=1000")).toBuilder()
        .pod(new PodEntry(new Pod(p, PodVersion.of("1")), PodStatus.ACTIVE, 1))
        .claim(0, Claim.stable(p, 2)).claim(999, Claim.stable(p, 3)).build();
    for (int grow : new int[] {24, 25, 1100, 3000}) {
      ClusterConfig x = a.extendTo(a.spaces().append("jobs", grow));
      assertThat(x.size()).isEqualTo(1000 + grow);
      assertThat(x.claim(0)).isEqualTo(Claim.stable(p, 2));
      assertThat(x.claim(999)).isEqualTo(Claim.stable(p, 3));
      for (int i = 1000; i < x.size(); i++) {
        assertThat(x.claim(i)).isEqualTo(Claim.offline(0));
      }
      assertThat(x.spaces().of("jobs").first()).isEqualTo(1000);
      assertThat(ClusterConfig.decode(x.encode())).isEqualTo(x);
    }
  }

  @Example
  void layoutsThatDoNotExtendEachOtherStillDoNotMerge() {
    ClusterConfig jobs = ClusterConfig.empty(FOUR_SPACES);
    ClusterConfig other = ClusterConfig.empty(Configs.THREE_SPACES.append("mail", 2));
    assertThatThrownBy(() -> jobs.merge(other)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("merge: spaces default=4,web=5,worker=3,mail=2 (expected: default=4,web=5,worker=3,"
            + "jobs=2, the same layout or one grown from it by appended spaces)");
    assertThatThrownBy(() -> jobs.extendTo(Configs.THREE_SPACES)).hasMessageContaining("extend: spaces");
    assertThatThrownBy(() -> Configs.THREE_SPACES.append("web", 2))
        .hasMessageContaining("space 'web': the layout default=4,web=5,worker=3 already has it");
    assertThat(FIVE_SPACES.extendsLayout(Configs.THREE_SPACES)).isTrue();
    assertThat(Configs.THREE_SPACES.extendsLayout(FIVE_SPACES)).isFalse();
    assertThat(Spaces.single(12).extendsLayout(Spaces.single(10))).isFalse();
  }
}

package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Spaces, roles and texts at their limits: each bound accepted at the limit, refused one past it. */
class SpacesLimitsTest {

  @Test
  void aRoleTakesAsciiLettersDigitsDotUnderscoreAndDashUpTo64Bytes() {
    String longest = "r".repeat(Space.MAX_ROLE_BYTES);
    assertThat(Space.checkRole(longest)).isEqualTo(longest);
    assertThat(Space.checkRole("azAZ09._-")).isEqualTo("azAZ09._-");
    assertThatThrownBy(() -> Space.checkRole(longest + "r")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("longer than 64 bytes");
    // The neighbours of each accepted range: '`' '{' '@' '[' '/' ':'.
    for (char c : new char[] {'`', '{', '@', '[', '/', ':'}) {
      assertThatThrownBy(() -> Space.checkRole("x" + c)).as("'%s'", c).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("has '" + c + "' at 1");
    }
    for (char c : new char[] {'a', 'z', 'A', 'Z', '0', '9'}) {
      assertThat(Space.checkRole("x" + c)).isEqualTo("x" + c);
    }
  }

  @Test
  void aSpaceContainsExactlyItsPositions() {
    Space s = new Space("w", 10, 5);
    assertThat(s.contains(9)).isFalse();
    assertThat(s.contains(10)).isTrue();
    assertThat(s.contains(14)).isTrue();
    assertThat(s.contains(15)).isFalse();
  }

  @Test
  void aLayoutHasAtMost1024SpacesAndAtMostMaxSizeShardsInAll() {
    Map<String, Integer> most = new LinkedHashMap<>();
    for (int i = 0; i < Spaces.MAX_SPACES; i++) {
      most.put("r" + i, 1);
    }
    assertThat(Spaces.of(most).list()).hasSize(Spaces.MAX_SPACES);
    most.put("one-more", 1);
    assertThatThrownBy(() -> Spaces.of(most)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spaces: 1025 (expected: 1..1024)");

    Map<String, Integer> full = new LinkedHashMap<>();
    full.put("a", ClusterConfig.MAX_SIZE - 1);
    full.put("b", 1);
    assertThat(Spaces.of(full).size()).isEqualTo(ClusterConfig.MAX_SIZE);
    full.put("c", 1);
    assertThatThrownBy(() -> Spaces.of(full)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("more than " + ClusterConfig.MAX_SIZE + " shards in all");
  }

  @Test
  void anEmptyRoleBeforeTheEqualsSignIsTheDefaultRole() {
    Spaces s = Spaces.parse("=5,w=2");
    assertThat(s.list()).containsExactly(new Space(Space.DEFAULT_ROLE, 0, 5), new Space("w", 5, 2));
    assertThatThrownBy(() -> Spaces.parse("w")).hasMessageContaining("expected: role=count");
  }

  @Test
  void aLayoutExtendsItselfAndALongerOneNever() {
    Spaces one = Spaces.parse("default=4,w=2");
    Spaces same = Spaces.parse("default=4,w=2");
    Spaces longer = Spaces.parse("default=4,w=2,x=1");
    assertThat(one.extendsLayout(same)).isTrue();
    assertThat(longer.extendsLayout(one)).isTrue();
    assertThat(one.extendsLayout(longer)).isFalse();
  }

  @Test
  void anEntitysGlobalShardIsItsShardInTheRolesSpaceShiftedToTheSpaceAndZeroWithoutOne() {
    Spaces s = Spaces.parse("default=4,w=3");
    ShardHasher third = (id, n) -> 3;
    assertThat(s.shardOf(third, "w", "x")).isEqualTo(4 + 3);
    assertThat(s.shardOf(third, Space.DEFAULT_ROLE, "x")).isEqualTo(3);
    assertThat(s.shardOf(third, "nobody", "x")).isZero();
  }

  @Test
  void equalLayoutsHashAlikeAndOtherLayoutsSpread() {
    assertThat(Spaces.parse("a=1,b=2").hashCode()).isEqualTo(Spaces.parse("a=1,b=2").hashCode());
    assertThat(java.util.stream.IntStream.rangeClosed(1, 8).map(n -> Spaces.parse("a=" + n).hashCode()).distinct()
        .count()).isEqualTo(8);
  }

  @Test
  void aPodHostsExactlyItsRoles() {
    PodId id = new PodId(new PodAddress("127.0.0.1", 7001), 1);
    Pod one = new Pod(id, PodVersion.of("1"), List.of("a"));
    assertThat(one.hosts("a")).isTrue();
    assertThat(one.hosts("b")).isFalse();
    Pod two = new Pod(id, PodVersion.of("1"), List.of("a", "b"));
    assertThat(two.hosts("a")).isTrue();
    assertThat(two.hosts("b")).isTrue();
    assertThat(two.hosts("c")).isFalse();
    assertThat(two.hosts(Space.DEFAULT_ROLE)).isFalse();
  }

  @Test
  void utf8LengthCountsOneTwoThreeAndFourBytesAtEachBoundary() {
    assertThat(Texts.utf8Length("\u007f")).isEqualTo(1);
    assertThat(Texts.utf8Length("\u0080")).isEqualTo(2);
    assertThat(Texts.utf8Length("\u07ff")).isEqualTo(2);
    assertThat(Texts.utf8Length("\u0800")).isEqualTo(3);
    assertThat(Texts.utf8Length("\ud83d\ude00")).isEqualTo(4);
    assertThat(Texts.utf8Length("\ud83d")).isEqualTo(-1);
    assertThat(Texts.utf8Length("\ud83dx")).isEqualTo(-1);
    assertThat(Texts.utf8Length("\ude00")).isEqualTo(-1);
  }

  @Test
  void aTextOfExactlyTheMostBytesPassesAndOneMoreIsRefused() {
    Texts.check("host", "é".repeat(5), 10, "a host");
    assertThatThrownBy(() -> Texts.check("host", "é".repeat(5) + "x", 10, "a host"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("host: 11 bytes of UTF-8").hasMessageContaining("at most 10 bytes");
    assertThatThrownBy(() -> Texts.check("host", "a\ud83d", 10, "a host"))
        .hasMessageContaining("unpaired surrogate");
  }

  @Test
  void aConfigOfOneSpaceIsItsOwnSliceAndKnowsWhichRolesHaveALiveHost() {
    ClusterConfig single = ClusterConfig.empty(4);
    assertThat(single.slice(single.spaces().list().get(0))).isSameAs(single);
    PodId a = new PodId(new PodAddress("127.0.0.1", 7001), 1);
    PodId b = new PodId(new PodAddress("127.0.0.1", 7002), 1);
    ClusterConfig c = ClusterConfig.empty(Spaces.parse("default=2,web=2,worker=2")).toBuilder()
        .clusterId(new ClusterId(1, 2))
        .pod(new PodEntry(new Pod(a, PodVersion.of("1"), List.of("web")), PodStatus.ACTIVE, 1))
        .pod(new PodEntry(new Pod(b, PodVersion.of("1"), List.of("worker")), PodStatus.GONE, 1))
        .build();
    assertThat(c.clusterId()).isEqualTo(new ClusterId(1, 2));
    assertThat(c.hasActiveHost("web")).isTrue();
    assertThat(c.hasActiveHost("worker")).as("its only host is gone").isFalse();
    assertThat(c.hasActiveHost(Space.DEFAULT_ROLE)).isFalse();
  }
}

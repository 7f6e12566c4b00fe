package io.atoll.core;

import static io.atoll.core.ConfigCodecLimitsTest.refused;
import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ConfigCodecLimitsTest.Bytes;
import io.atoll.core.slots.SlotState;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Format 3's space table and pod roles at each of the decoder's limits, fed hand-written bytes:
 * one example just inside, one just outside, and the exact message of the refusal. A slice of a
 * space longer than one chunk of the config's storage.
 */
class ConfigCodecSpacesLimitsTest {

  private static final int OFFLINE = SlotState.OFFLINE.ordinal();
  private static final int STABLE = SlotState.STABLE.ordinal();

  /** Format 3, no cluster id, {@code size} positions; the space table comes next. */
  private static Bytes spaced(int size) {
    return new Bytes().b('A', 'C', 3).fixed64(0).fixed64(0).varint(size);
  }

  /** Size 2 in the spaces "" and "a" of one position each, then one pod; its roles come next. */
  private static Bytes onePod() {
    return spaced(2).varint(2).str("").varint(1).str("a").varint(1).varint(1).pod("127.0.0.1", 7001, 1, "1");
  }

  @Test
  void theSpaceCountIsOneToMaxSpaces() {
    refused(spaced(2).varint(0).done(),
        "space count: 0 (expected: 1..1024 and at most what 0 bytes can hold)");
    // Bytes enough for 1025 spaces: refused by the count, not by what follows.
    refused(spaced(2).varint(1025).b(new int[2050]).done(),
        "space count: 1025 (expected: 1..1024 and at most what 2050 bytes can hold)");
    Bytes most = spaced(Spaces.MAX_SPACES).varint(Spaces.MAX_SPACES).str("").varint(1);
    for (int i = 1; i < Spaces.MAX_SPACES; i++) {
      most.str("r" + i).varint(1);
    }
    byte[] bytes = most.varint(0).run(Spaces.MAX_SPACES, 0, OFFLINE, 0).done();
    ClusterConfig c = ClusterConfig.decode(bytes);
    assertThat(c.spaces().list()).hasSize(Spaces.MAX_SPACES);
    assertThat(c.spaces().list().get(Spaces.MAX_SPACES - 1)).isEqualTo(new Space("r1023", 1023, 1));
    assertThat(c.encode()).isEqualTo(bytes);
  }

  @Test
  void theSpaceCountIsRefusedOnlyWhenTheInputCannotHoldTwoBytesASpace() {
    // Two spaces in exactly four bytes get past the count, and are refused for what they say.
    refused(spaced(2).varint(2).str("").varint(1).str("").varint(1).done(),
        "spaces: space '': listed twice (expected: one space per role)");
    refused(spaced(2).varint(2).str("").varint(1).b(0).done(),
        "space count: 2 (expected: 1..1024 and at most what 3 bytes can hold)");
  }

  @Test
  void eachSpaceCoversOneToTheRemainingPositions() {
    refused(spaced(2).varint(2).str("").varint(0).str("a").varint(2).done(),
        "space 0 (''): count 0 (expected: 1..2, the spaces cover exactly 2 positions)");
    refused(spaced(2).varint(2).str("").varint(1).str("a").varint(2).done(),
        "space 1 ('a'): count 2 (expected: 1..1, the spaces cover exactly 2 positions)");
    refused(spaced(3).varint(2).str("").varint(1).str("a").varint(1).done(),
        "spaces: 2 positions (expected: 3)");
    ClusterConfig c = ClusterConfig.decode(spaced(2).varint(2).str("").varint(1).str("a").varint(1).varint(0)
        .run(2, 0, OFFLINE, 0).done());
    assertThat(c.spaces().list()).containsExactly(new Space("", 0, 1), new Space("a", 1, 1));
  }

  @Test
  void aSpacesRoleIsAValidNameOfAtMost64Bytes() {
    String longest = "r".repeat(Space.MAX_ROLE_BYTES);
    ClusterConfig c = ClusterConfig.decode(spaced(2).varint(2).str("").varint(1).str(longest).varint(1).varint(0)
        .run(2, 0, OFFLINE, 0).done());
    assertThat(c.spaces().of(longest).first()).isEqualTo(1);
    // 'A' 'C' 3, the id (16), size, count, "" and its count: the length of the role ends at byte 24.
    refused(spaced(2).varint(2).str("").varint(1).str(longest + "r").varint(1).done(),
        "string at byte 24: length 65 (expected: <= 64)");
    refused(spaced(2).varint(2).str("").varint(1).str("a b").varint(1).done(),
        "space 1: role: 'a b' has ' ' at 1 (expected: 1..64 of [A-Za-z0-9._-], or empty for the default role)");
  }

  @Test
  void aPodHasOneToMaxRolesSortedAndUnique() {
    refused(onePod().varint(0).done(), "role count: 0 (expected: 1..16)");
    refused(onePod().varint(Pod.MAX_ROLES + 1).b(new int[40]).done(), "role count: 17 (expected: 1..16)");
    Bytes most = onePod().varint(Pod.MAX_ROLES);
    for (char r = 'a'; r < 'a' + Pod.MAX_ROLES; r++) {
      most.str(String.valueOf(r));
    }
    byte[] bytes = most.run(2, 1, STABLE, 1).done();
    ClusterConfig c = ClusterConfig.decode(bytes);
    assertThat(c.pods().get(0).pod().roles()).hasSize(Pod.MAX_ROLES).startsWith("a", "b").endsWith("p");
    assertThat(c.encode()).isEqualTo(bytes);
    refused(onePod().varint(2).str("b").str("a").done(),
        "role 'a' out of order (expected: sorted, unique roles)");
    refused(onePod().varint(2).str("a").str("a").done(),
        "role 'a' out of order (expected: sorted, unique roles)");
    refused(onePod().varint(1).str("a b").done(),
        "pod 0: role: 'a b' has ' ' at 1 (expected: 1..64 of [A-Za-z0-9._-], or empty for the default role)");
  }

  @Test
  void theRoleCountIsRefusedOnlyWhenTheInputCannotHoldAByteARole() {
    // Two roles in exactly two bytes get past the count, and are refused for what they say.
    refused(onePod().varint(2).str("").str("").done(), "role '' out of order (expected: sorted, unique roles)");
    refused(onePod().varint(3).str("").str("").done(), "role count: 3 (expected: 1..16)");
  }

  @Test
  void aSliceOfASpaceLongerThanAChunkHasEachClaimAtItsPosition() {
    int chunk = 1 << ClusterConfig.CHUNK_SHIFT;
    Map<String, Integer> layout = new LinkedHashMap<>();
    layout.put("", 3);
    layout.put("big", 2 * chunk + 5);
    layout.put("z", 2);
    Spaces spaces = Spaces.of(layout);
    Space big = spaces.of("big");
    PodId a = new PodId(new PodAddress("127.0.0.1", 7001), 1);
    PodId b = new PodId(new PodAddress("127.0.0.1", 7002), 1);
    ClusterConfig.Builder builder = ClusterConfig.empty(spaces).toBuilder()
        .pod(new PodEntry(new Pod(a, PodVersion.of("1"), java.util.List.of("big")), PodStatus.ACTIVE, 1))
        .pod(new PodEntry(new Pod(b, PodVersion.of("1"), java.util.List.of("big")), PodStatus.ACTIVE, 1));
    for (int k = 0; k < big.count(); k++) {
      builder.claim(big.first() + k, Claim.stable(k % 3 == 0 ? a : b, k + 1));
    }
    ClusterConfig c = builder.build();
    ClusterConfig slice = c.slice(big);
    assertThat(slice.size()).isEqualTo(big.count());
    for (int k : new int[] {0, chunk - 1, chunk, chunk + 1, 2 * chunk, big.count() - 1}) {
      assertThat(slice.claim(k)).as("position %d of the slice", k).isEqualTo(c.claim(big.first() + k))
          .isEqualTo(Claim.stable(k % 3 == 0 ? a : b, k + 1));
    }
    assertThat(slice.epoch()).as("the newest claim in the slice").isEqualTo(big.count());
  }
}

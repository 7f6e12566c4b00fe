package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.slots.SlotState;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The encoder writes format 5 whenever some claim records a previous owner, over configs of many
 * chunks: the check that decides it skips chunks shared with the one before and starts each other
 * chunk's scan at its first peer, so one recorded owner anywhere (the first chunk, the short last
 * one, a chunk after shared ones, after MIGRATING peers) must still be found. A miss would write
 * format 4 and drop the previous owner without a word.
 */
class PreviousOwnerChunksProperties {

  private static final PodId A = Configs.POOL.get(0);
  private static final PodId B = Configs.POOL.get(2);
  private static final PodId C = Configs.POOL.get(4);

  /** A config of {@code size} positions, all STABLE on A without a previous owner. */
  private static ClusterConfig base(int size) {
    ClusterConfig.Builder b = ClusterConfig.empty(size).toBuilder()
        .pod(new PodEntry(new Pod(A, PodVersion.of("1.0")), PodStatus.ACTIVE, 1))
        .pod(new PodEntry(new Pod(B, PodVersion.of("1.0")), PodStatus.GONE, 2))
        .pod(new PodEntry(new Pod(C, PodVersion.of("1.0")), PodStatus.ACTIVE, 3));
    for (int p = 0; p < size; p++) {
      b.claim(p, Claim.stable(A, 4));
    }
    return b.build();
  }

  record Case(int size, int recorded, int migrating) {}

  @Provide
  Arbitrary<Case> cases() {
    Arbitrary<Integer> sizes = Arbitraries.of(ClusterConfig.CHUNK + 1, 5 * ClusterConfig.CHUNK + 3, 16384);
    return sizes.flatMap(size -> Combinators.combine(
        Arbitraries.oneOf(
            // the first position, the last, the first of the second chunk, the first of the last chunk
            Arbitraries.of(0, size - 1, ClusterConfig.CHUNK, (size - 1) / ClusterConfig.CHUNK * ClusterConfig.CHUNK),
            Arbitraries.integers().between(0, size - 1)),
        Arbitraries.integers().between(-1, size - 1))
        .as((recorded, migrating) -> new Case(size, recorded, migrating)));
  }

  @Property(tries = 60)
  void oneRecordedPreviousOwnerAnywhereIsWrittenAndReadBack(@ForAll("cases") Case c) {
    ClusterConfig plain = base(c.size());
    // Built from the plain config: every chunk but the changed ones stays shared with it.
    ClusterConfig.Builder b = plain.toBuilder();
    if (c.migrating() >= 0 && c.migrating() != c.recorded()) {
      b.claim(c.migrating(), new Claim(A, SlotState.MIGRATING, C, 5));
    }
    b.claim(c.recorded(), Claim.stable(C, B, 6));
    ClusterConfig with = b.build();

    byte[] bytes = with.encode();
    assertThat(bytes[2]).as("format of a config recording one previous owner at %s of %s", c.recorded(), c.size())
        .isEqualTo((byte) 5);
    ClusterConfig back = ClusterConfig.decode(bytes);
    assertThat(back).isEqualTo(with);
    assertThat(back.claim(c.recorded()).previousOwner()).isEqualTo(B);
    // And through a merge with the plain config: the recorded owner wins with its newer claim.
    ClusterConfig merged = plain.merge(back);
    assertThat(merged.claim(c.recorded()).previousOwner()).isEqualTo(B);
    assertThat(merged.encode()[2]).isEqualTo((byte) 5);
  }

  @Property(tries = 30)
  void withoutARecordedPreviousOwnerTheFormatIsNot5(@ForAll("cases") Case c) {
    ClusterConfig.Builder b = base(c.size()).toBuilder();
    if (c.migrating() >= 0) {
      b.claim(c.migrating(), new Claim(A, SlotState.MIGRATING, C, 5));
    }
    assertThat(b.build().encode()[2]).isNotEqualTo((byte) 5);
  }
}

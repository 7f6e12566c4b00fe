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

  record SharedCase(int size, int chunk, int recorded, int older) {}

  @Provide
  Arbitrary<SharedCase> sharedCases() {
    return Arbitraries.of(2 * ClusterConfig.CHUNK, 5 * ClusterConfig.CHUNK + 3, 16384).flatMap(size -> {
      int full = size / ClusterConfig.CHUNK; // chunks a run covers whole (the short last one is its own)
      return Arbitraries.integers().between(1, full - 1).flatMap(chunk -> Combinators.combine(
          Arbitraries.integers().between(0, ClusterConfig.CHUNK - 1),
          Arbitraries.integers().between(0, ClusterConfig.CHUNK - 2))
          .as((k, j) -> new SharedCase(size, chunk, chunk * ClusterConfig.CHUNK + k,
              chunk * ClusterConfig.CHUNK + (j >= k ? j + 1 : j))));
    });
  }

  /**
   * Consecutive chunks that share their peer array but not their state array: a config off the
   * wire, all MIGRATING from A to C in one run (so its full chunks share every array), merged with
   * one where a position of some chunk is STABLE on A recording C as its previous owner (newer) and
   * another is older. The merge patches that chunk's states and keeps its peers, the array the chunk
   * before holds too. A check that skipped a chunk for its peers alone would miss the recorded owner.
   */
  @Property(tries = 40)
  void aRecordedOwnerInAChunkThatSharesOnlyItsPeersWithTheOneBeforeIsWritten(@ForAll("sharedCases") SharedCase c) {
    ClusterConfig.Builder moving = ClusterConfig.empty(c.size()).toBuilder()
        .pod(new PodEntry(new Pod(A, PodVersion.of("1.0")), PodStatus.ACTIVE, 1))
        .pod(new PodEntry(new Pod(C, PodVersion.of("1.0")), PodStatus.ACTIVE, 3));
    for (int p = 0; p < c.size(); p++) {
      moving.claim(p, new Claim(A, SlotState.MIGRATING, C, 5));
    }
    ClusterConfig wire = ClusterConfig.decode(moving.build().encode());
    ClusterConfig.Builder b = wire.toBuilder();
    b.claim(c.recorded(), Claim.stable(A, C, 6));
    b.claim(c.older(), new Claim(A, SlotState.MIGRATING, C, 4));
    ClusterConfig merged = wire.merge(b.build());

    int[][] peers = merged.peerChunks();
    byte[][] states = merged.stateChunks();
    assertThat(peers[c.chunk()]).as("the case: peers shared with the chunk before").isSameAs(peers[c.chunk() - 1]);
    assertThat(states[c.chunk()]).as("the case: states not shared").isNotSameAs(states[c.chunk() - 1]);

    byte[] bytes = merged.encode();
    assertThat(bytes[2]).as("format with the previous owner at %s of %s", c.recorded(), c.size()).isEqualTo((byte) 5);
    ClusterConfig back = ClusterConfig.decode(bytes);
    assertThat(back).isEqualTo(merged);
    assertThat(back.claim(c.recorded()).previousOwner()).isEqualTo(C);
  }
}

package io.atoll.core;

import io.atoll.core.slots.KeySlots;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Merge laws and the encoding over configs of one default space; subclasses change the layout. */
class ClusterConfigProperties {

  @Provide
  Arbitrary<ClusterConfig> configs() {
    return Configs.configs(12);
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
  void mergeNeverLowersAnEpoch(@ForAll("configs") ClusterConfig a, @ForAll("configs") ClusterConfig b) {
    ClusterConfig m = a.merge(b);
    for (int i = 0; i < m.size(); i++) {
      assertThat(m.epoch(i)).isEqualTo(Math.max(a.epoch(i), b.epoch(i)));
    }
    for (PodEntry e : a.pods()) {
      assertThat(m.pod(e.id()).orElseThrow().epoch()).isGreaterThanOrEqualTo(e.epoch());
    }
    assertThat(m.epoch()).isEqualTo(Math.max(a.epoch(), b.epoch()));
  }

  @Property
  void anOwnerChangesOnlyForAGreaterEpochClaim(@ForAll("configs") ClusterConfig a, @ForAll("configs") ClusterConfig b) {
    ClusterConfig m = a.merge(b);
    for (int i = 0; i < m.size(); i++) {
      Claim mine = a.claim(i);
      Claim merged = m.claim(i);
      if (!merged.equals(mine)) {
        assertThat(merged).isEqualTo(b.claim(i));
        assertThat(merged.epoch()).isGreaterThanOrEqualTo(mine.epoch());
      }
    }
  }

  @Property
  void aPodEntryIsReplacedOnlyByAGreaterEpoch(@ForAll("configs") ClusterConfig a, @ForAll("configs") ClusterConfig b) {
    ClusterConfig m = a.merge(b);
    for (PodEntry mine : a.pods()) {
      PodEntry merged = m.pod(mine.id()).orElseThrow();
      if (!merged.equals(mine)) {
        PodEntry theirs = b.pod(mine.id()).orElseThrow();
        assertThat(merged).isEqualTo(theirs);
        assertThat(theirs.epoch()).isGreaterThanOrEqualTo(mine.epoch());
      }
    }
  }

  @Property
  void everyClaimNamesAListedPod(@ForAll("configs") ClusterConfig a, @ForAll("configs") ClusterConfig b) {
    ClusterConfig m = a.merge(b);
    for (int i = 0; i < m.size(); i++) {
      Claim c = m.claim(i);
      if (c.owner() != null) {
        assertThat(m.pod(c.owner())).isPresent();
      }
      if (c.peer() != null) {
        assertThat(m.pod(c.peer())).isPresent();
      }
    }
  }

  @Property
  void encodeDecodeRoundTrips(@ForAll("configs") ClusterConfig a) {
    byte[] bytes = a.encode();
    ClusterConfig back = ClusterConfig.decode(bytes);
    assertThat(back).isEqualTo(a);
    assertThat(back.encode()).isEqualTo(bytes);
  }

  @Property
  void decodingGarbageFailsCleanly(@ForAll("garbage") byte[] bytes) {
    try {
      ClusterConfig.decode(bytes);
    } catch (MalformedConfigException expected) {
      assertThat(expected.getMessage()).contains("expected");
    }
  }

  @Provide
  Arbitrary<byte[]> garbage() {
    Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(64);
    Arbitrary<byte[]> corrupted = configs().flatMap(c -> {
      byte[] bytes = c.encode();
      return Arbitraries.integers().between(0, bytes.length - 1).flatMap(i ->
          Arbitraries.bytes().map(v -> {
            byte[] copy = bytes.clone();
            copy[i] = v;
            return copy;
          }));
    });
    Arbitrary<byte[]> truncated = configs().flatMap(c -> {
      byte[] bytes = c.encode();
      return Arbitraries.integers().between(0, bytes.length - 1).map(n -> java.util.Arrays.copyOf(bytes, n));
    });
    return Arbitraries.oneOf(random, corrupted, truncated);
  }

  @Example
  void sixteenThousandSlotsInFewRangesEncodeSmall() {
    ClusterConfig.Builder b = ClusterConfig.empty(KeySlots.SLOT_COUNT).toBuilder();
    for (int i = 0; i < 3; i++) {
      PodId id = Configs.POOL.get(i);
      b.pod(new PodEntry(new Pod(id, PodVersion.of("1")), PodStatus.ACTIVE, 1));
    }
    for (int slot = 0; slot < KeySlots.SLOT_COUNT; slot++) {
      b.claim(slot, Claim.stable(Configs.POOL.get(slot * 3 / KeySlots.SLOT_COUNT), 1 + slot * 3 / KeySlots.SLOT_COUNT));
    }
    ClusterConfig c = b.build();
    assertThat(c.encode().length).isLessThan(200);
    assertThat(ClusterConfig.decode(c.encode())).isEqualTo(c);
  }

  @Example
  void mergeOfDifferentSizesIsRefused() {
    assertThatThrownBy(() -> ClusterConfig.empty(3).merge(ClusterConfig.empty(4)))
        .hasMessageContaining("size 4 (expected: 3");
  }

  @Example
  void aClaimOnAnUnlistedPodIsRefused() {
    assertThatThrownBy(() -> ClusterConfig.empty(3).toBuilder().claim(0, Claim.stable(Configs.POOL.get(0), 1)).build())
        .hasMessageContaining("is not listed");
  }
}

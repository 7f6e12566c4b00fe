package io.atoll.core;

import io.atoll.core.slots.SlotState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class IdentitiesTest {

  @Test
  void shardOfFollowsTheSeedFormula() {
    assertThat(ShardHasher.DEFAULT.shardOf("user-42", 300))
        .isEqualTo(Math.abs("user-42".hashCode() % 300) + 1);
    // A negative hash code still lands in 1..n.
    String negative = "polygenelubricants"; // hashCode() == Integer.MIN_VALUE
    assertThat(negative.hashCode()).isEqualTo(Integer.MIN_VALUE);
    assertThat(ShardHasher.DEFAULT.shardOf(negative, 300)).isBetween(1, 300);
  }

  @Test
  void addressParsesAndRejectsWithTheExpectedForm() {
    assertThat(PodAddress.parse("127.0.0.1:7070")).isEqualTo(new PodAddress("127.0.0.1", 7070));
    assertThat(PodAddress.parse("[::1]:80")).isEqualTo(new PodAddress("::1", 80));
    assertThat(new PodAddress("::1", 80)).hasToString("[::1]:80");
    assertThatThrownBy(() -> PodAddress.parse("localhost"))
        .hasMessageContaining("expected: host:port");
    assertThatThrownBy(() -> PodAddress.parse("h:70000"))
        .hasMessageContaining("port: 70000 (expected: 1..65535)");
    assertThatThrownBy(() -> PodAddress.parse("h:x")).hasMessageContaining("numeric port");
  }

  @Test
  void aRestartedPodIsANewIncarnation() {
    PodAddress a = new PodAddress("127.0.0.1", 7000);
    assertThat(new PodId(a, 1)).isNotEqualTo(new PodId(a, 2));
    assertThat(new PodId(a, 1)).isEqualTo(new PodId(a, 1));
  }

  @Test
  void aKvReplicasVersionNamesItsPrimarysIncarnationAndNothingElseDoes() {
    for (long incarnation : new long[] {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0x1afe7600c1d9f45aL}) {
      PodVersion v = PodVersion.kvReplicaOf(incarnation);
      assertThat(v.kvPrimary()).hasValue(incarnation);
      assertThat(v.isKv()).isTrue();
    }
    assertThat(PodVersion.KV.isKv()).isTrue();
    assertThat(PodVersion.KV.kvPrimary()).isEmpty();
    for (String other : new String[] {"1.0", "kv.of.", "kv.of.xyz", "kv.of.12345678901234567", "bus.7000.of.ab"}) {
      assertThat(PodVersion.of(other).kvPrimary()).as(other).isEmpty();
      assertThat(PodVersion.of(other).isKv()).as(other).isFalse();
    }
  }

  @Test
  void aTakenOverKvPrimarysVersionNamesItsHeirAndNoReplicaOrOtherVersionDoes() {
    for (long incarnation : new long[] {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0x1afe7600c1d9f45aL}) {
      PodVersion v = PodVersion.kvTakenOverBy(incarnation);
      assertThat(v.kvHeir()).hasValue(incarnation);
      assertThat(v.kvPrimary()).isEmpty();
      assertThat(v.isKv()).isTrue();
      assertThat(PodVersion.kvReplicaOf(incarnation).kvHeir()).isEmpty();
    }
    assertThat(PodVersion.KV.kvHeir()).isEmpty();
    for (String other : new String[] {"1.0", "kv.to.", "kv.to.xyz", "kv.to.12345678901234567", "bus.7000.to.ab"}) {
      assertThat(PodVersion.of(other).kvHeir()).as(other).isEmpty();
      assertThat(PodVersion.of(other).isKv()).as(other).isFalse();
    }
  }

  @Test
  void versionsCompareAsPeopleReadThem() {
    assertThat(PodVersion.of("1.10")).isGreaterThan(PodVersion.of("1.9"));
    assertThat(PodVersion.of("2.0")).isGreaterThan(PodVersion.of("1.99.9"));
    assertThat(PodVersion.of("1.0.1")).isGreaterThan(PodVersion.of("1.0"));
    assertThat(PodVersion.of("1.0.0")).isGreaterThan(PodVersion.of("1.0.0-rc1"));
    assertThat(PodVersion.of("01")).isLessThan(PodVersion.of("1")); // equal numbers: text decides
    assertThatThrownBy(() -> PodVersion.of(" ")).hasMessageContaining("blank (expected: a version");
  }

  @Test
  void entityAddressIsBounded() {
    assertThatThrownBy(() -> new EntityAddress("t", "x".repeat(1025)))
        .hasMessage("entity id: length 1025 (expected: 1..1024)");
    assertThatThrownBy(() -> new EntityAddress("", "x"))
        .hasMessage("entity type: length 0 (expected: 1..255)");
  }

  @Test
  void claimRejectsStatesThatDoNotFit() {
    PodId p = new PodId(new PodAddress("h", 1), 1);
    assertThatThrownBy(() -> new Claim(p, SlotState.OFFLINE, null, 1))
        .hasMessageContaining("OFFLINE exactly when there is no owner");
    assertThatThrownBy(() -> new Claim(p, SlotState.MIGRATING, null, 1))
        .hasMessageContaining("a peer in MIGRATING and IMPORTING");
    assertThatThrownBy(() -> new Claim(null, SlotState.OFFLINE, p, 1)).hasMessageContaining("none without an owner");
    assertThat(Claim.stable(p, p, 1).previousOwner()).isEqualTo(p);
    assertThat(new Claim(p, SlotState.MIGRATING, p, 1).previousOwner()).isNull();
  }
}

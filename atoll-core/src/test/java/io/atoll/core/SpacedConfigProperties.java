package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Every merge law and encoding property of {@link ClusterConfigProperties}, over configs of three
 * spaces whose pods host roles (format 3), plus what spaces add.
 */
class SpacedConfigProperties extends ClusterConfigProperties {

  @Override
  @Provide
  Arbitrary<ClusterConfig> configs() {
    return Configs.configs(Configs.THREE_SPACES, Configs.ROLES);
  }

  @Property
  void mergeAndDecodeKeepTheLayoutAndTheRoles(@ForAll("configs") ClusterConfig a, @ForAll("configs") ClusterConfig b) {
    ClusterConfig m = a.merge(b);
    assertThat(m.spaces()).isEqualTo(Configs.THREE_SPACES);
    assertThat(ClusterConfig.decode(m.encode()).spaces()).isEqualTo(Configs.THREE_SPACES);
    for (PodEntry e : m.pods()) {
      PodEntry fromA = a.pod(e.id()).orElse(null);
      PodEntry fromB = b.pod(e.id()).orElse(null);
      assertThat(e.pod().roles()).isIn(
          fromA == null ? null : fromA.pod().roles(), fromB == null ? null : fromB.pod().roles());
    }
  }

  @Property
  void aSliceHoldsItsSpacesClaims(@ForAll("configs") ClusterConfig a) {
    for (Space sp : a.spaces().list()) {
      ClusterConfig slice = a.slice(sp);
      assertThat(slice.size()).isEqualTo(sp.count());
      assertThat(slice.pods()).isEqualTo(a.pods());
      for (int k = 0; k < sp.count(); k++) {
        assertThat(slice.claim(k)).isEqualTo(a.claim(sp.first() + k));
      }
    }
  }

  @Example
  void configsOfTwoLayoutsDoNotMerge() {
    Map<String, Integer> other = new LinkedHashMap<>();
    other.put("", 6);
    other.put("web", 6);
    assertThatThrownBy(() -> ClusterConfig.empty(Configs.THREE_SPACES).merge(ClusterConfig.empty(Spaces.of(other))))
        .hasMessageContaining("spaces default=6,web=6 (expected: default=4,web=5,worker=3");
  }

  @Example
  void aConfigWithoutSpacesOrRolesIsWrittenInTheFormatsBeforeSpaces() {
    ClusterConfig plain = ClusterConfig.empty(12).toBuilder()
        .pod(new PodEntry(new Pod(Configs.POOL.get(0), PodVersion.of("1")), PodStatus.ACTIVE, 1)).build();
    assertThat(plain.encode()[2]).isEqualTo((byte) 1);
    assertThat(plain.withClusterId(Configs.CLUSTER).encode()[2]).isEqualTo((byte) 2);
    assertThat(ClusterConfig.empty(Configs.THREE_SPACES).encode()[2]).isEqualTo((byte) 3);
  }

  @Example
  void aFormat3ThatFormat1CouldCarryIsRefused() {
    byte[] plain = ClusterConfig.empty(12).encode(); // 'A' 'C' 1, size, pods, runs
    byte[] f3 = new byte[plain.length + 16 + 3];
    f3[0] = 'A';
    f3[1] = 'C';
    f3[2] = 3;
    // 16 zero bytes of cluster id, then size 12, one space "" of 12, then the rest as format 1
    f3[19] = 12;
    f3[20] = 1;
    f3[21] = 0;
    f3[22] = 12;
    System.arraycopy(plain, 4, f3, 23, plain.length - 4);
    assertThatThrownBy(() -> ClusterConfig.decode(f3)).isInstanceOf(MalformedConfigException.class)
        .hasMessageContaining("format 3 without spaces or roles (expected: format 1)");
  }

  @Example
  void spacesThatDoNotCoverTheConfigAreRefused() {
    ClusterConfig c = ClusterConfig.empty(Configs.THREE_SPACES);
    byte[] bytes = c.encode();
    // the last space's count (3) sits right before the pod count (0): make it 2
    int at = indexOfSpaceCount(bytes);
    bytes[at] = 2;
    assertThatThrownBy(() -> ClusterConfig.decode(bytes)).isInstanceOf(MalformedConfigException.class)
        .hasMessageContaining("spaces: 11 positions (expected: 12)");
  }

  private static int indexOfSpaceCount(byte[] bytes) {
    // magic(3) + id(16) + size(1) + count(1) + "",4 (2) + "web",5 (5) + "worker" (7): then 3
    return 3 + 16 + 1 + 1 + 2 + 5 + 7;
  }

  @Example
  void badRolesAreRefusedWithTheirExpectedForm() {
    assertThatThrownBy(() -> new Pod(Configs.POOL.get(0), PodVersion.of("1"), List.of("a b")))
        .hasMessageContaining("role: 'a b' has ' ' at 1 (expected:");
    assertThatThrownBy(() -> new Pod(Configs.POOL.get(0), PodVersion.of("1"), List.of()))
        .hasMessageContaining("0 roles (expected: 1..16)");
    assertThatThrownBy(() -> Spaces.parse("worker=0"))
        .hasMessageContaining("count 0 (expected: 1..");
    assertThatThrownBy(() -> Spaces.parse("worker=1,worker=2"))
        .hasMessageContaining("role 'worker' twice");
    assertThat(Spaces.parse("default=300,worker=100").toString()).isEqualTo("default=300,worker=100");
  }

  @Example
  void spacesFindTheirPositions() {
    Spaces s = Configs.THREE_SPACES;
    assertThat(s.at(0).role()).isEqualTo("");
    assertThat(s.at(3).role()).isEqualTo("");
    assertThat(s.at(4).role()).isEqualTo("web");
    assertThat(s.at(8).role()).isEqualTo("web");
    assertThat(s.at(9).role()).isEqualTo("worker");
    assertThat(s.at(11).role()).isEqualTo("worker");
    assertThat(s.of("worker").globalShard(1)).isEqualTo(10);
    assertThat(s.of("nobody")).isNull();
  }
}

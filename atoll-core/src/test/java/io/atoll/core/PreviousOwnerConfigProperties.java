package io.atoll.core;

import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.Provide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every merge law and encoding property of {@link ClusterConfigProperties}, over configs whose
 * STABLE claims may record the previous owner (format 5 when one does), with roles, TLS ports and
 * without.
 */
class PreviousOwnerConfigProperties extends ClusterConfigProperties {

  private static final PodId A = Configs.POOL.get(0);
  private static final PodId B = Configs.POOL.get(2);

  @Override
  @Provide
  Arbitrary<ClusterConfig> configs() {
    return Configs.configs(Spaces.single(12), Configs.ROLES, List.of(0, 0, 8001), true);
  }

  private static ClusterConfig twoPods(Claim claim) {
    return ClusterConfig.empty(4).toBuilder()
        .pod(new PodEntry(new Pod(A, PodVersion.of("1.0")), PodStatus.ACTIVE, 1))
        .pod(new PodEntry(new Pod(B, PodVersion.of("1.0")), PodStatus.GONE, 2))
        .claim(1, claim)
        .build();
  }

  @Example
  void onlyAConfigThatRecordsAPreviousOwnerIsWrittenInFormat5() {
    ClusterConfig plain = twoPods(Claim.stable(A, 3));
    ClusterConfig recorded = twoPods(Claim.stable(A, B, 3));
    assertThat(plain.encode()[2]).as("entity clusters keep their format").isEqualTo((byte) 1);
    assertThat(recorded.encode()[2]).isEqualTo((byte) 5);
    ClusterConfig back = ClusterConfig.decode(recorded.encode());
    assertThat(back).isEqualTo(recorded);
    assertThat(back.claim(1).previousOwner()).isEqualTo(B);
    assertThat(back.claim(0).previousOwner()).isNull();
  }

  @Example
  void format5WithoutAPreviousOwnerIsRefused() {
    byte[] bytes = twoPods(Claim.stable(A, B, 3)).encode();
    byte[] plain = twoPods(Claim.stable(A, 3)).encode();
    // The same config as format 5 with the run's peer 0 (none): what format 1 says, so refused.
    assertThat(bytes.length).isGreaterThan(plain.length);
    ClusterConfig none = twoPods(Claim.stable(A, 3));
    byte[] forged = forgeFormat5(none);
    assertThatThrownBy(() -> ClusterConfig.decode(forged)).isInstanceOf(MalformedConfigException.class)
        .hasMessageContaining("format 5 without a previous owner (expected: format 1)");
  }

  /** {@code c} (no previous owner anywhere) in format 5's layout, as a buggy or hostile writer might. */
  private static byte[] forgeFormat5(ClusterConfig c) {
    // Encode a config that has one, then turn that run's peer into 0: the layout stays format 5.
    ClusterConfig with = twoPods(Claim.stable(A, B, 3));
    byte[] bytes = with.encode();
    assertThat(c.claim(1)).isEqualTo(Claim.stable(A, 3));
    // The runs end the encoding: [1 pos: A? no] -- find the run of position 1: length 1, owner 1,
    // state STABLE (1), peer B+1 = 2, epoch 3; B is pod index 1 (sorted after A).
    for (int i = bytes.length - 1; i >= 4; i--) {
      if (bytes[i - 4] == 1 && bytes[i - 3] == 1 && bytes[i - 2] == 1 && bytes[i - 1] == 2 && bytes[i] == 3) {
        bytes[i - 1] = 0;
        return bytes;
      }
    }
    throw new AssertionError("run not found");
  }
}

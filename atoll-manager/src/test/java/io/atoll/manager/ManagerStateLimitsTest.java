package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ClusterConfig;
import io.atoll.core.spi.StoreException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The stored manager state's decoder at each of its limits, fed hand-written bytes: one byte
 * either side of every bound is read or refused, each refusal saying what it expected.
 */
class ManagerStateLimitsTest {
  private static final byte[] CONFIG = ClusterConfig.empty(3).encode();

  /** Header, term, and then {@code rest}, then the config. */
  private static byte[] state(int format, byte[] rest) {
    return ByteBuffer.allocate(3 + 8 + rest.length + CONFIG.length).put((byte) 'A').put((byte) 'M')
        .put((byte) format).putLong(7).put(rest).put(CONFIG).array();
  }

  /** The lease (ttl, margin), {@code fingerprints} pruned fingerprints, then a key of {@code key}. */
  private static byte[] body(long ttl, long margin, int fingerprints, String key) {
    byte[] k = key == null ? new byte[0] : key.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(20 + fingerprints * 8 + (key == null ? 0 : 4 + k.length))
        .putLong(ttl).putLong(margin).putInt(fingerprints);
    for (int i = 0; i < fingerprints; i++) {
      b.putLong(1000 + i);
    }
    if (key != null) {
      b.putInt(k.length).put(k);
    }
    return b.array();
  }

  @Test
  void theHeaderNeedsElevenBytes() {
    byte[] ten = Arrays.copyOf(state(1, new byte[0]), 10);
    assertThatThrownBy(() -> ManagerState.decode(ten)).isInstanceOf(StoreException.class)
        .hasMessageContaining("10 bytes without the 'AM' header");
    // Eleven bytes of format 1 pass the header and fail on the (missing) config instead.
    byte[] eleven = Arrays.copyOf(state(1, new byte[0]), 11);
    assertThatThrownBy(() -> ManagerState.decode(eleven)).isInstanceOf(StoreException.class)
        .hasMessageStartingWith("manager state: config:");
    assertThat(ManagerState.decode(state(1, new byte[0])).term()).isEqualTo(7);
  }

  @Test
  void formatsTwoAndThreeNeedTheLeaseAndPrunedCountWhole() {
    byte[] whole = state(2, body(0, 0, 0, null));
    ManagerState s = ManagerState.decode(whole);
    assertThat(s.leaseTtl()).isZero();
    assertThat(s.leaseMargin()).isZero();
    assertThat(s.pruned().size()).isZero();
    byte[] nineteen = Arrays.copyOf(whole, 11 + 19);
    assertThatThrownBy(() -> ManagerState.decode(nineteen)).isInstanceOf(StoreException.class)
        .hasMessageContaining("truncated at byte 11");
    byte[] twenty = Arrays.copyOf(whole, 11 + 20);
    assertThatThrownBy(() -> ManagerState.decode(twenty)).isInstanceOf(StoreException.class)
        .hasMessageStartingWith("manager state: config:");
  }

  @Test
  void aNegativeLeaseOrMarginIsRefusedAndZeroIsRead() {
    assertThat(ManagerState.decode(state(2, body(4000, 0, 0, null))).leaseTtl()).isEqualTo(Duration.ofSeconds(4));
    assertThat(ManagerState.decode(state(2, body(0, 500, 0, null))).leaseMargin()).isEqualTo(Duration.ofMillis(500));
    assertThatThrownBy(() -> ManagerState.decode(state(2, body(-1, 0, 0, null))))
        .isInstanceOf(StoreException.class).hasMessageContaining("lease -1 + 0 ms (expected: >= 0)");
    assertThatThrownBy(() -> ManagerState.decode(state(2, body(0, -1, 0, null))))
        .isInstanceOf(StoreException.class).hasMessageContaining("lease 0 + -1 ms (expected: >= 0)");
  }

  @Test
  void thePrunedCountIsBoundedByItsLimitAndByTheBytesLeft() {
    assertThat(ManagerState.decode(state(2, body(0, 0, 3, null))).pruned().size()).isEqualTo(3);
    // Exactly as many fingerprints as the bytes hold (no config after them: it fails there, later).
    byte[] exact = Arrays.copyOf(body(0, 0, 2, null), 20 + 16);
    byte[] noConfig = ByteBuffer.allocate(11 + exact.length).put((byte) 'A').put((byte) 'M').put((byte) 2)
        .putLong(7).put(exact).array();
    assertThatThrownBy(() -> ManagerState.decode(noConfig)).isInstanceOf(StoreException.class)
        .hasMessageStartingWith("manager state: config:");
    byte[] short1 = Arrays.copyOf(noConfig, noConfig.length - 1);
    assertThatThrownBy(() -> ManagerState.decode(short1)).isInstanceOf(StoreException.class)
        .hasMessageContaining("2 pruned pods (expected: 0.." + ManagerState.MAX_PRUNED + " and at most what 15 bytes hold)");
    byte[] tooMany = ByteBuffer.allocate(11 + 20).put((byte) 'A').put((byte) 'M').put((byte) 2).putLong(7)
        .putLong(0).putLong(0).putInt(ManagerState.MAX_PRUNED + 1).array();
    assertThatThrownBy(() -> ManagerState.decode(tooMany)).isInstanceOf(StoreException.class)
        .hasMessageContaining((ManagerState.MAX_PRUNED + 1) + " pruned pods");
    byte[] negative = ByteBuffer.allocate(11 + 20).put((byte) 'A').put((byte) 'M').put((byte) 2).putLong(7)
        .putLong(0).putLong(0).putInt(-1).array();
    assertThatThrownBy(() -> ManagerState.decode(negative)).isInstanceOf(StoreException.class)
        .hasMessageContaining("-1 pruned pods");
  }

  @Test
  void theLongestPrunedListIsRead() {
    byte[] body = body(0, 0, ManagerState.MAX_PRUNED, null);
    assertThat(ManagerState.decode(state(2, body)).pruned().size()).isEqualTo(ManagerState.MAX_PRUNED);
  }

  @Test
  void theSigningKeyIsBoundedByItsLimitAndByTheBytesLeft() {
    String longest = "k".repeat(ManagerState.MAX_KEY);
    assertThat(ManagerState.decode(state(3, body(0, 0, 0, longest))).signingKey()).isEqualTo(longest);
    assertThat(ManagerState.decode(state(3, body(0, 0, 0, ""))).signingKey()).isEmpty();
    String tooLong = longest + "k";
    assertThatThrownBy(() -> ManagerState.decode(state(3, body(0, 0, 0, tooLong))))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("signing key of " + (ManagerState.MAX_KEY + 1) + " bytes");
    // A key exactly as long as the bytes left (no config after it: that fails later, not the key).
    byte[] keyOnly = ByteBuffer.allocate(11 + 20 + 4 + 3).put((byte) 'A').put((byte) 'M').put((byte) 3).putLong(7)
        .putLong(0).putLong(0).putInt(0).putInt(3).put("abc".getBytes(StandardCharsets.UTF_8)).array();
    assertThatThrownBy(() -> ManagerState.decode(keyOnly)).isInstanceOf(StoreException.class)
        .hasMessageStartingWith("manager state: config:");
    byte[] keyCut = Arrays.copyOf(keyOnly, keyOnly.length - 1);
    assertThatThrownBy(() -> ManagerState.decode(keyCut)).isInstanceOf(StoreException.class)
        .hasMessageContaining("signing key of 3 bytes (expected: 0.." + ManagerState.MAX_KEY + " and at most what 2 bytes hold)");
    // Fewer than four bytes where the key's length belongs.
    byte[] noLength = ByteBuffer.allocate(11 + 20 + 3).put((byte) 'A').put((byte) 'M').put((byte) 3).putLong(7)
        .putLong(0).putLong(0).putInt(0).array();
    assertThatThrownBy(() -> ManagerState.decode(noLength)).isInstanceOf(StoreException.class)
        .hasMessageContaining("signing key of -1 bytes");
    byte[] fourZeros = ByteBuffer.allocate(11 + 20 + 4).put((byte) 'A').put((byte) 'M').put((byte) 3).putLong(7)
        .putLong(0).putLong(0).putInt(0).putInt(0).array();
    assertThatThrownBy(() -> ManagerState.decode(fourZeros)).isInstanceOf(StoreException.class)
        .hasMessageStartingWith("manager state: config:");
  }

  @Test
  void anUnknownFormatIsRefusedNamingTheKnownOnes() {
    assertThatThrownBy(() -> ManagerState.decode(state(4, new byte[0]))).isInstanceOf(StoreException.class)
        .hasMessageContaining("format 4 (expected: 1..3)");
    assertThatThrownBy(() -> ManagerState.decode(state(0, new byte[0]))).isInstanceOf(StoreException.class)
        .hasMessageContaining("format 0 (expected: 1..3)");
  }
}

package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.core.spi.StoreException;
import io.atoll.manager.round.Rounds;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ManagerStateTest {

  @Test
  void roundTripsTermAndConfig() {
    ClusterConfig c = Rounds.join(ClusterConfig.empty(3),
        new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 2), PodVersion.of("1.2")));
    ManagerState s = new ManagerState(Long.MAX_VALUE - 1, c, Duration.ofSeconds(30), Duration.ofMillis(1500),
        PrunedPods.NONE.plus(List.of(new PodId(new PodAddress("h", 1), 5)), 10));
    byte[] bytes = s.encode();
    assertThat(bytes[0]).isEqualTo((byte) 'A');
    assertThat(bytes[1]).isEqualTo((byte) 'M');
    assertThat(bytes[2]).isEqualTo((byte) 3);
    ManagerState back = ManagerState.decode(bytes);
    assertThat(back).isEqualTo(s);
    assertThat(back.pruned().contains(new PodId(new PodAddress("h", 1), 5))).isTrue();
    assertThat(back.pruned().contains(new PodId(new PodAddress("h", 1), 6))).isFalse();
  }

  @Test
  void readsTheFirstFormatWithNoLeaseKnownAndNothingPruned() {
    ClusterConfig c = ClusterConfig.empty(3);
    byte[] c1 = c.encode();
    byte[] v1 = ByteBuffer.allocate(11 + c1.length).put((byte) 'A').put((byte) 'M').put((byte) 1).putLong(7).put(c1)
        .array();
    assertThat(ManagerState.decode(v1)).isEqualTo(new ManagerState(7, c));
    assertThat(ManagerState.decode(v1).leaseTtl()).isZero();
  }

  @Test
  void refusesDamagedLeaseAndPrunedParts() {
    byte[] ok = new ManagerState(1, ClusterConfig.empty(1), Duration.ofSeconds(1), Duration.ZERO, PrunedPods.NONE)
        .encode();
    byte[] negative = ok.clone();
    ByteBuffer.wrap(negative).putLong(11, -5);
    assertThatThrownBy(() -> ManagerState.decode(negative)).isInstanceOf(StoreException.class)
        .hasMessageContaining("lease -5 + 0 ms (expected: >= 0)");
    byte[] count = ok.clone();
    ByteBuffer.wrap(count).putInt(27, 1000);
    assertThatThrownBy(() -> ManagerState.decode(count)).isInstanceOf(StoreException.class)
        .hasMessageContaining("1000 pruned pods");
    assertThatThrownBy(() -> ManagerState.decode(Arrays.copyOf(ok, 20))).isInstanceOf(StoreException.class)
        .hasMessageContaining("truncated");
  }

  @Test
  void keepsTheClustersSigningKeyAndRefusesADamagedOne() {
    ManagerState s = new ManagerState(4, ClusterConfig.empty(2), Duration.ofSeconds(1), Duration.ZERO,
        PrunedPods.NONE, "private public");
    assertThat(ManagerState.decode(s.encode())).isEqualTo(s);
    byte[] length = s.encode();
    ByteBuffer.wrap(length).putInt(31, 1 << 20);
    assertThatThrownBy(() -> ManagerState.decode(length)).isInstanceOf(StoreException.class)
        .hasMessageContaining("signing key of 1048576 bytes");
    // a state of the format before (no key) reads as one without a key
    byte[] c = ClusterConfig.empty(2).encode();
    byte[] v2 = ByteBuffer.allocate(3 + 8 + 16 + 4 + c.length).put((byte) 'A').put((byte) 'M').put((byte) 2)
        .putLong(4).putLong(1000).putLong(0).putInt(0).put(c).array();
    assertThat(ManagerState.decode(v2)).isEqualTo(new ManagerState(4, ClusterConfig.empty(2), Duration.ofSeconds(1),
        Duration.ZERO, PrunedPods.NONE));
  }

  @Test
  void refusesBytesWithoutTheHeader() {
    assertThatThrownBy(() -> ManagerState.decode(new byte[10])).isInstanceOf(StoreException.class)
        .hasMessageContaining("10 bytes without the 'AM' header");
    byte[] ok = new ManagerState(1, ClusterConfig.empty(1)).encode();
    byte[] badA = ok.clone();
    badA[0] = 'X';
    assertThatThrownBy(() -> ManagerState.decode(badA)).hasMessageContaining("header");
    byte[] badM = ok.clone();
    badM[1] = 'X';
    assertThatThrownBy(() -> ManagerState.decode(badM)).hasMessageContaining("header");
    assertThatThrownBy(() -> ManagerState.decode(Arrays.copyOf(ok, 10))).hasMessageContaining("header");
  }

  @Test
  void refusesAnotherFormatAndADamagedConfig() {
    byte[] ok = new ManagerState(1, ClusterConfig.empty(1)).encode();
    byte[] format = ok.clone();
    format[2] = 4;
    assertThatThrownBy(() -> ManagerState.decode(format)).isInstanceOf(StoreException.class)
        .hasMessageContaining("format 4 (expected: 1..3)");
    assertThatThrownBy(() -> ManagerState.decode(Arrays.copyOf(ok, 31))).isInstanceOf(StoreException.class)
        .hasMessageStartingWith("manager state: ");
  }
}

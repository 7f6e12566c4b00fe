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
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ManagerStateTest {

  @Test
  void roundTripsTermAndConfig() {
    ClusterConfig c = Rounds.join(ClusterConfig.empty(3),
        new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 2), PodVersion.of("1.2")));
    ManagerState s = new ManagerState(Long.MAX_VALUE - 1, c);
    byte[] bytes = s.encode();
    assertThat(bytes[0]).isEqualTo((byte) 'A');
    assertThat(bytes[1]).isEqualTo((byte) 'M');
    assertThat(bytes[2]).isEqualTo((byte) 1);
    assertThat(ManagerState.decode(bytes)).isEqualTo(s);
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
    format[2] = 2;
    assertThatThrownBy(() -> ManagerState.decode(format)).isInstanceOf(StoreException.class)
        .hasMessageContaining("format 2 (expected: 1)");
    assertThatThrownBy(() -> ManagerState.decode(Arrays.copyOf(ok, 11))).isInstanceOf(StoreException.class)
        .hasMessageStartingWith("manager state: ");
  }
}

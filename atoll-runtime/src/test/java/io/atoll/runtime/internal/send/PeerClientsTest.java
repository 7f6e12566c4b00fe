package io.atoll.runtime.internal.send;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterId;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.runtime.internal.util.TestSettings;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The clients of other pods stay bounded by the config: clients of pods that left it are retired. */
class PeerClientsTest {

  private static PodId pod(int i) {
    return new PodId(new PodAddress("127.0.0.1", 10_000 + i), i);
  }

  @Test
  void clientsOfPodsNoLongerInTheConfigAreRetired() {
    PeerClients clients = new PeerClients(TestSettings.context(Ticker.SYSTEM), () -> ClusterId.NONE, new PeerClient.Callback() {
      @Override
      public void resolved(Pending p, boolean retry) {}

      @Override
      public void notOwner(PodId peer, int shard, long epoch) {}

      @Override
      public void unreachable(PodId peer) {}
    });
    try {
      for (int i = 0; i < 50; i++) {
        clients.channel(pod(i));
      }
      assertThat(clients.size()).isEqualTo(50);
      clients.retainOnly(Set.of(pod(0), pod(49)));
      assertThat(clients.size()).isEqualTo(2);
      clients.channel(pod(0));
      assertThat(clients.size()).as("a live pod keeps its one client").isEqualTo(2);
    } finally {
      clients.closeAll();
    }
  }
}

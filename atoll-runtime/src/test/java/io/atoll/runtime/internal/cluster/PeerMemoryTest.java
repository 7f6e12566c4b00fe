package io.atoll.runtime.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.runtime.internal.util.TestSettings;
import io.atoll.transport.grpc.Wire;
import io.grpc.ManagedChannel;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the cluster room remembers per peer stays bounded by the config: entries of pods that left
 * it are forgotten.
 */
class PeerMemoryTest {

  private static final PodId SELF = new PodId(new PodAddress("127.0.0.1", 2), 1);
  private final ManagedChannel nowhere = Wire.channel(new PodAddress("127.0.0.1", 1));

  private static PodId pod(int i) {
    return new PodId(new PodAddress("127.0.0.1", 10_000 + i), i);
  }

  private final View view = QuietViews.of(4, SELF);

  @AfterEach
  void close() {
    Wire.close(nowhere);
  }

  @Test
  void gossipForgetsPodsThatLeftTheConfig() {
    Gossip gossip = new Gossip(Ticker.SYSTEM, view, peer -> nowhere, new Random(1), new SignedConfigs());
    for (int i = 0; i < 100; i++) {
      gossip.onNotOwner(pod(i), 1, 5); // a claim newer than the view's: remembered as a hint
    }
    assertThat(gossip.remembered()).isEqualTo(100);
    gossip.retainOnly(Set.of(pod(3), pod(7)));
    assertThat(gossip.remembered()).isEqualTo(2);
  }

  @Test
  void unhealthyReportsOfPodsThatLeftTheConfigAreForgotten() {
    Lease lease = QuietViews.lease(Ticker.SYSTEM, view);
    ManagerAddresses channel = new ManagerAddresses(java.util.List.of(new PodAddress("127.0.0.1", 1)), Wire::channel);
    ManagerLink link = new ManagerLink(TestSettings.context(Ticker.SYSTEM), channel, view, lease, peer -> nowhere,
        why -> { }, new SignedConfigs());
    try {
      for (int i = 0; i < 100; i++) {
        link.notifyUnhealthy(pod(i));
      }
      assertThat(link.reportsRemembered()).isEqualTo(100);
      link.retainOnly(Set.of(pod(1)));
      assertThat(link.reportsRemembered()).isEqualTo(1);
    } finally {
      link.close();
    }
  }
}

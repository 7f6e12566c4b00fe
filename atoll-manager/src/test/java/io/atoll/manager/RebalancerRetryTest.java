package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.allocation.RebalanceLimits;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The retry of a failed round against rounds that start for other reasons, on the simulation's virtual clock. */
class RebalancerRetryTest {

  @Test
  void aRoundThatStartsBeforeTheRetryTakesItsPlace() {
    Simulation sim = RebalancerTest.cluster(10, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    sim.unassignsLost = a.id()::equals; // its pings answer; its unassigns time out (200 ms)
    ManagerObserverTest.Recording r = new ManagerObserverTest.Recording();
    sim.manager.observe(r);
    SimPod b = sim.join("1.0");
    for (int i = 0; i < 2000 && r.finished == 0; i++) {
      sim.vt.advance(Duration.ofMillis(1));
    }
    assertThat(r.finished).as("the first round failed its unassign").isEqualTo(1);
    assertThat(r.moved).isZero();
    sim.unassignsLost = p -> false;
    sim.loop.runAsLoop(() -> sim.manager.rebalancerForTest().request("operator"));
    sim.vt.advance(Duration.ofMillis(600)); // past the retry's time (300 ms), before the next periodic round
    assertThat(sim.installed().ownedCounts()).containsEntry(a.id(), 5).containsEntry(b.id(), 5);
    assertThat(r.started).as("the failed round, the one asked for and its continuation; no retry after them")
        .isEqualTo(3);
  }
}

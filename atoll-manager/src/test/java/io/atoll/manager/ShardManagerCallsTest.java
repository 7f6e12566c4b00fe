package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What the manager's calls tell about the installed layout, on the simulation's virtual clock. */
class ShardManagerCallsTest {

  @Test
  void theShardCountIsTheInstalledLayoutsGrownAtRunTime() {
    Simulation sim = new Simulation(7, Simulation.settings(4, RebalanceLimits.UNLIMITED,
        AllocationStrategy.versionAware()).withNewSpaceShards(3), false, 0);
    sim.faults = false;
    assertThat(sim.manager.calls().numberOfShards()).isEqualTo(4);
    sim.joinNewRole(); // a role without a space: the manager appends one of 3 shards
    sim.vt.advance(Duration.ofSeconds(1));
    assertThat(sim.installed().size()).isEqualTo(7);
    assertThat(sim.manager.calls().numberOfShards()).as("the config's, not the settings'").isEqualTo(7);
    assertThat(sim.manager.settings().numberOfShards()).isEqualTo(4);
  }
}

package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The lines an operator reads of a rebalance, on the simulation's virtual clock: one line per
 * rebalance however many rounds its limits split it into, naming what started it, the shards it
 * moved, its rounds and where every pod ends; a warning for each round that failed a step.
 */
class RebalanceLogTest {

  private static Simulation cluster(int shards, RebalanceLimits limits) {
    Simulation sim = new Simulation(42, Simulation.settings(shards, limits, AllocationStrategy.versionAware()), false,
        0);
    sim.faults = false;
    return sim;
  }

  @Test
  void aRebalanceSplitIntoRoundsIsLoggedOnceWithItsCauseMovesAndRounds() {
    Simulation sim = cluster(30, new RebalanceLimits(2, 1.0));
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    try (LogLines log = new LogLines()) {
      SimPod b = sim.join("1.0");
      sim.vt.advance(Duration.ofMillis(1500)); // the chain of rounds, before the next periodic round
      List<String> lines = log.of(Rebalancer.class, "INFO");
      assertThat(lines).containsExactly("rebalance (pod " + b.id() + " joined): moved 15 shards in 8 round(s), now at"
          + " epoch " + sim.installed().epoch() + "; shards per pod: " + ShardManager.shardCounts(sim.installed()));
      assertThat(ShardManager.shardCounts(sim.installed())).containsEntry(a.id().toString(), 15);
    }
  }

  @Test
  void eachRebalanceGetsItsOwnLineAndARoundThatMovesNothingNone() {
    Simulation sim = cluster(4, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofMillis(500));
    try (LogLines log = new LogLines()) {
      SimPod b = sim.join("1.0");
      sim.vt.advance(Duration.ofMillis(500));
      sim.leave(b);
      sim.vt.advance(Duration.ofMillis(500));
      sim.loop.runAsLoop(() -> sim.manager.rebalancerForTest().request("operator")); // balanced: moves nothing
      sim.vt.advance(Duration.ofMillis(500));
      List<String> lines = log.of(Rebalancer.class, "INFO");
      assertThat(lines).hasSize(2);
      assertThat(lines.get(0)).startsWith("rebalance (pod " + b.id() + " joined): moved 2 shards in 1 round(s)");
      assertThat(lines.get(1)).startsWith("rebalance (pod " + b.id() + " left): moved 2 shards in 1 round(s)")
          .endsWith("shards per pod: {" + a.id() + "=4}");
    }
  }

  @Test
  void aRoundWhoseUnassignFailedIsWarnedWithItsRetry() {
    Simulation sim = cluster(10, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    try (LogLines log = new LogLines()) {
      sim.unassignsLost = a.id()::equals;
      SimPod b = sim.join("1.0");
      sim.vt.advance(Duration.ofMillis(400)); // one round: its unassign times out (200 ms)
      assertThat(log.of(Rebalancer.class, "WARN")).containsExactly("rebalance (pod " + b.id() + " joined): unassign"
          + " failed on [" + a.id() + "]; retrying in 300 ms");
      assertThat(log.of(Rebalancer.class, "INFO")).as("nothing moved, no summary").isEmpty();
    }
  }

  @Test
  void aRoundWhosePingFailedIsWarnedWithItsRetry() {
    Simulation sim = cluster(10, RebalanceLimits.UNLIMITED);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    try (LogLines log = new LogLines()) {
      sim.pingsThrow = a.id()::equals;
      SimPod b = sim.join("1.0");
      sim.vt.advance(Duration.ofMillis(200)); // one round, before its retry (300 ms)
      assertThat(log.of(Rebalancer.class, "WARN")).containsExactly("rebalance (pod " + b.id() + " joined): pods did"
          + " not answer the ping: [" + a.id() + "]; retrying in 300 ms");
    }
  }
}

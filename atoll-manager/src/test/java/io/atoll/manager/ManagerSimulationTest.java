package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Thousands of random histories around the real manager (see {@link Simulation}). Seeded: the
 * default master seed makes every run the same; {@code -Datoll.sim.seed=N} replays one history,
 * {@code -Datoll.sim.histories} and {@code -Datoll.sim.steps} change the size, and
 * {@code -Datoll.sim.master=N} explores other histories. A failure prints the history's seed.
 */
class ManagerSimulationTest {

  @Test
  void randomHistoriesKeepOneOwnerPerShardAndSettle() {
    int histories = Integer.getInteger("atoll.sim.histories", 120);
    int steps = Integer.getInteger("atoll.sim.steps", 100);
    String one = System.getProperty("atoll.sim.seed");
    SplittableRandom master = new SplittableRandom(Long.getLong("atoll.sim.master", 0x5EEDL));
    long started = System.nanoTime();
    int total = 0;
    long tasks = 0;
    int relayed = 0;
    for (int h = 0; h < (one != null ? 1 : histories); h++) {
      long seed = one != null ? Long.parseLong(one) : master.nextLong();
      Simulation sim;
      try {
        sim = Simulation.random(seed);
        for (int i = 0; i < steps; i++) {
          sim.step();
          if (i == steps / 2) {
            sim.quietAndCheck();
          }
        }
        sim.quietAndCheck();
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("history with seed " + seed + " failed (rerun: -Datoll.sim.seed=" + seed + "): "
            + e.getMessage(), e);
      }
      total += sim.steps;
      relayed += sim.relayedReleases;
      tasks += sim.vt.tasksRun();
    }
    System.out.printf("manager simulation: %d steps, %d tasks, %d hand-offs through renewals in %d ms%n", total,
        tasks, relayed, (System.nanoTime() - started) / 1_000_000);
    if (one == null && histories >= 20) {
      assertThat(relayed).as("pods cut off on their port handed shards over through their renewals").isPositive();
    }
  }
}

package io.atoll.manager;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.Space;
import io.atoll.core.Spaces;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The manager's simulation over many shard spaces (see {@link Simulation#randomSpaced}): random
 * histories of pods of one or two roles joining, leaving, crashing, losing the network and
 * upgrading around the real manager, which itself crashes, pauses and loses its store; in most
 * histories pods of roles without a space register now and then, and the manager appends one
 * (kept across its restarts with the first layout); in half of them some spaces have limits or a
 * strategy of their own ({@link Simulation#spaceSettings}). After every
 * task no shard of any space may be served by two pods nor by a pod that does not host its space;
 * after quiet each space is owned by its own live hosts, balanced over them. And a rolling update
 * of one role's pods moves nothing in any other space, at any moment. Seeded as
 * {@link ManagerSimulationTest} is ({@code -Datoll.sim.seed=N} replays one history, and so on);
 * a failure prints the seed.
 */
class SpacesSimulationTest {

  @Test
  void randomHistoriesOverManySpacesKeepOneOwnerPerShardAndEachSpaceOnItsOwnPods() {
    int histories = Integer.getInteger("atoll.sim.histories", 60);
    int steps = Integer.getInteger("atoll.sim.steps", 100);
    String one = System.getProperty("atoll.sim.seed");
    SplittableRandom master = new SplittableRandom(Long.getLong("atoll.sim.master", 0x5BACE5L));
    long started = System.nanoTime();
    int total = 0;
    int grown = 0;
    for (int h = 0; h < (one != null ? 1 : histories); h++) {
      long seed = one != null ? Long.parseLong(one) : master.nextLong();
      try {
        Simulation sim = Simulation.randomSpaced(seed);
        for (int i = 0; i < steps; i++) {
          sim.step();
          if (i == steps / 2) {
            sim.quietAndCheck();
          }
        }
        sim.quietAndCheck();
        total += sim.steps;
        if (sim.installed().spaces().list().size() > sim.settings.spaces().list().size()) {
          grown++; // pods of new roles registered: spaces were appended at run time
        }
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("history with seed " + seed + " failed (rerun: -Datoll.sim.seed=" + seed + "): "
            + e.getMessage(), e);
      }
    }
    System.out.printf("spaces simulation: %d steps in %d ms, %d histories grew their layout%n", total,
        (System.nanoTime() - started) / 1_000_000, grown);
    if (one == null && histories >= 20 && grown == 0) {
      throw new AssertionError("no history registered a pod of a new role: the layout never grew");
    }
  }

  @Test
  void aRollingUpdateOfOneRoleMovesNothingInAnyOtherSpace() {
    int runs = Integer.getInteger("atoll.sim.histories", 30);
    String one = System.getProperty("atoll.sim.seed");
    SplittableRandom master = new SplittableRandom(Long.getLong("atoll.sim.master", 0x0DA7EL));
    for (int h = 0; h < (one != null ? 1 : runs); h++) {
      long seed = one != null ? Long.parseLong(one) : master.nextLong();
      try {
        rollingUpdate(seed);
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("rolling update with seed " + seed + " failed (rerun: -Datoll.sim.seed=" + seed
            + "): " + e.getMessage(), e);
      }
    }
  }

  /**
   * 2..6 spaces, one to three pods of each role at version 1.0, settled; then every pod of one
   * role is replaced by a 2.0 pod, one at a time (the new pod joins, the old one leaves), with the
   * other spaces' claims compared with the settled ones every 50 ms of virtual time.
   */
  private static void rollingUpdate(long seed) {
    Random r = new Random(seed);
    Spaces layout = Simulation.randomLayout(r, 2 + r.nextInt(5), 40);
    Simulation sim = new Simulation(seed, Simulation.settings(layout, r.nextBoolean() ? RebalanceLimits.DEFAULT
        : new RebalanceLimits(1 + r.nextInt(4), 0.5), r.nextBoolean() ? AllocationStrategy.versionAware()
        : AllocationStrategy.leastShard()), r.nextBoolean(), 0.0);
    sim.faults = false;
    List<List<SimPod>> byRole = new ArrayList<>();
    for (String role : sim.roles) {
      List<SimPod> pods = new ArrayList<>();
      for (int i = 1 + r.nextInt(3); i > 0; i--) {
        pods.add(sim.join("1.0", List.of(role)));
      }
      byRole.add(pods);
    }
    sim.quietAndCheck();
    int updated = r.nextInt(sim.roles.size());
    Space space = layout.list().get(updated);
    ClusterConfig settled = sim.installed();
    for (SimPod old : byRole.get(updated)) {
      sim.join("2.0", List.of(space.role()));
      advanceChecking(sim, settled, space, Duration.ofMillis(500 + r.nextInt(2500)));
      sim.leave(old);
      advanceChecking(sim, settled, space, Duration.ofMillis(500 + r.nextInt(2500)));
    }
    sim.quietAndCheck();
    ClusterConfig end = sim.installed();
    checkOthersUnchanged(sim, settled, end, space);
    for (int pos = space.first(); pos < space.first() + space.count(); pos++) {
      Pod owner = end.ownerEntry(pos).pod();
      if (!owner.version().value().equals("2.0")) {
        throw new AssertionError("shard " + (pos + 1) + " of the updated space '" + space.role() + "' is still on "
            + owner + " after the update\n" + sim.report());
      }
    }
  }

  private static void advanceChecking(Simulation sim, ClusterConfig settled, Space updated, Duration d) {
    for (long ms = 0; ms < d.toMillis(); ms += 50) {
      sim.vt.advance(Duration.ofMillis(50));
      checkOthersUnchanged(sim, settled, sim.installed(), updated);
    }
  }

  private static void checkOthersUnchanged(Simulation sim, ClusterConfig settled, ClusterConfig now, Space updated) {
    for (int pos = 0; pos < settled.size(); pos++) {
      if (updated.contains(pos)) {
        continue;
      }
      Claim before = settled.claim(pos);
      Claim after = now.claim(pos);
      if (!before.equals(after)) {
        throw new AssertionError("a rolling update of space '" + updated.role() + "' changed shard " + (pos + 1)
            + " of space '" + settled.spaces().at(pos).role() + "': " + before + " -> " + after + "\n" + sim.report());
      }
    }
  }
}

package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the manager tells its observer (the metrics' source), heard on the simulation's virtual
 * clock: every installed config, each round's start and end, each renewal's verdict, each
 * departure and its cause. The metrics test checks the same over gRPC in real time.
 */
class ManagerObserverTest {

  static final class Recording implements ManagerObserver {
    final List<ClusterConfig> installed = new ArrayList<>();
    final Map<PodId, Boolean> gone = new LinkedHashMap<>();
    final Map<PodId, List<Boolean>> renewals = new LinkedHashMap<>();
    int started;
    int finished;
    int moved;
    /** A round started while the one before had not finished. */
    boolean overlapped;

    @Override
    public void configInstalled(ClusterConfig config) {
      installed.add(config);
    }

    @Override
    public void leaseRenewal(PodId pod, boolean granted) {
      renewals.computeIfAbsent(pod, p -> new ArrayList<>()).add(granted);
    }

    @Override
    public void podGone(PodId pod, boolean died) {
      gone.put(pod, died);
    }

    @Override
    public void roundStarted() {
      overlapped |= started != finished;
      started++;
    }

    @Override
    public void roundFinished(int moved, boolean failed) {
      finished++;
      this.moved += moved;
    }
  }

  /** How many times a shard got another owner from one config to the next, starting from none. */
  static int ownerChanges(List<ClusterConfig> configs) {
    int n = 0;
    ClusterConfig before = null;
    for (ClusterConfig c : configs) {
      for (int pos = 0; pos < c.size(); pos++) {
        PodId was = before == null ? null : before.owner(pos);
        if (c.owner(pos) != null && !c.owner(pos).equals(was)) {
          n++;
        }
      }
      before = c;
    }
    return n;
  }

  @Test
  void hearsEveryInstallEveryRoundEachRenewalAndEachDepartureWithItsCause() {
    Simulation sim = new Simulation(42,
        Simulation.settings(8, RebalanceLimits.UNLIMITED, AllocationStrategy.versionAware()), false, 0);
    sim.faults = false;
    Recording r = new Recording();
    sim.manager.observe(r);
    SimPod a = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(2));
    SimPod b = sim.join("1.0");
    SimPod c = sim.join("1.0");
    sim.vt.advance(Duration.ofSeconds(3));
    ClusterConfig now = sim.installed();
    assertThat(r.installed).as("every config installed, the last one too").isNotEmpty().last().isEqualTo(now);
    assertThat(r.installed.stream().map(ClusterConfig::epoch).toList()).isSorted();
    assertThat(r.started).isPositive().isEqualTo(r.finished);
    assertThat(r.overlapped).as("one round at a time").isFalse();
    assertThat(r.moved).as("every change of owner between the configs installed").isEqualTo(ownerChanges(r.installed))
        .isGreaterThanOrEqualTo(8 + 8 - now.ownedCounts().get(a.id()));
    assertThat(r.renewals.get(a.id())).isNotEmpty().containsOnly(true);
    assertThat(r.gone).isEmpty();

    sim.leave(b);
    sim.partition(c, Duration.ofSeconds(3)); // its lease runs out meanwhile: declared gone, then refused
    sim.vt.advance(Duration.ofSeconds(4));
    assertThat(r.gone).containsEntry(b.id(), false).containsEntry(c.id(), true).hasSize(2);
    assertThat(r.renewals.get(c.id())).as("granted before the partition, refused after it").contains(true)
        .endsWith(false);
    assertThat(r.installed).last().isEqualTo(sim.installed());
    assertThat(r.started).isEqualTo(r.finished);
  }
}

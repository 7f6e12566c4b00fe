package io.atoll.manager.round;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.Move;
import io.atoll.core.allocation.RebalanceLimits;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * {@link KvReplicas} in a simulated cluster: KV nodes join and die (one at a time, each death
 * followed by the manager's steps: arrange, then the strategy's rounds), and a model of which
 * nodes hold each slot's keys (a primary and the replicas it was paired with). What must hold
 * after every step: no replica owns a slot; every replica copies an active primary; no primary has
 * more replicas than asked; arranging again changes nothing; and a slot whose owner died is owned
 * next by a node that holds its keys whenever one was alive.
 */
class KvReplicasProperties {
  private static final int SLOTS = 64;

  private static Pod kv(int i) {
    return new Pod(new PodId(new PodAddress("127.0.0.1", 17000 + i), 1000 + i), PodVersion.KV);
  }

  @Test
  void nodesJoiningOneByOneEndAsPrimariesWithOneReplicaEach() {
    Sim sim = new Sim(1);
    for (int i = 0; i < 6; i++) {
      sim.join();
      sim.settle();
    }
    assertThat(sim.primaries()).hasSize(3);
    assertThat(sim.replicas()).hasSize(3);
  }

  @Test
  void nodesJoiningAllAtOnceEndAsPrimariesWithOneReplicaEach() {
    Sim sim = new Sim(1);
    for (int i = 0; i < 5; i++) {
      sim.join();
    }
    sim.settle();
    assertThat(sim.primaries()).hasSize(3);
    assertThat(sim.replicas()).hasSize(2);
  }

  @Test
  void aDeadPrimarysReplicaTakesEveryOneOfItsSlotsAndTheNextNodeReplicatesIt() {
    Sim sim = new Sim(1);
    for (int i = 0; i < 4; i++) {
      sim.join();
      sim.settle();
    }
    PodId primary = sim.primaries().get(0);
    PodId replica = sim.replicaOf(primary);
    int slots = sim.owned(primary);
    sim.die(primary);
    sim.settle();
    assertThat(sim.owned(replica)).isEqualTo(slots);
    assertThat(sim.lost).isZero();
    assertThat(sim.config.pod(primary).orElseThrow().pod().version().kvHeir())
        .as("the dead primary's tombstone names its heir").hasValue(replica.incarnation());
    PodId next = sim.join();
    sim.settle();
    assertThat(sim.replicaOf(replica)).isEqualTo(next);
  }

  @Test
  void aPrimaryThatDiesBeforeItOwnsASlotIsTakenOverByItsReplicaWhichStaysAPrimary() {
    Sim sim = new Sim(1);
    sim.join();
    sim.settle();
    sim.join();
    sim.settle(); // a primary and its replica
    PodId fresh = sim.join();
    sim.config = KvReplicas.arrange(sim.config, 1, Set.of()).config(); // a primary to be, no slot yet
    PodId replica = sim.join();
    sim.config = KvReplicas.arrange(sim.config, 1, Set.of()).config();
    assertThat(sim.replicaOf(fresh)).isEqualTo(replica);
    // It dies while its first slots arrive: its replica holds what arrived, and goes on with it.
    sim.die(fresh);
    KvReplicas.Arranged a = KvReplicas.arrange(sim.config, 1, Set.of());
    assertThat(a.config().pod(replica).orElseThrow().pod().version()).isEqualTo(PodVersion.KV);
    assertThat(a.config().pod(fresh).orElseThrow().pod().version().kvHeir()).hasValue(replica.incarnation());
    assertThat(a.changes()).anySatisfy(c -> assertThat(c).contains("takes over no shard"));
    // Named heir, it is never made a spare's replica again, however the config is arranged.
    assertThat(KvReplicas.arrange(a.config(), 1, Set.of()).changed()).isFalse();
    sim.config = a.config();
    sim.join();
    sim.settle();
    assertThat(sim.config.pod(replica).orElseThrow().pod().version().kvPrimary()).isEmpty();
    assertThat(sim.lost).isZero();
  }

  @Test
  void aNodeThatMayHoldKeysOfAHandOffToItIsNeverMadeAReplica() {
    Sim sim = new Sim(1);
    sim.join();
    sim.settle(); // a primary without a replica
    PodId target = sim.join();
    assertThat(KvReplicas.arrange(sim.config, 1, Set.of(), Set.of(target)).changed())
        .as("a round's move to it stopped part way: it stays a primary").isFalse();
    assertThat(KvReplicas.arrange(sim.config, 1, Set.of(), Set.of()).config().pod(target).orElseThrow().pod()
        .version().kvPrimary()).as("otherwise the spare replicates the primary").isPresent();
  }

  @Test
  void aSpareReplicatesAPrimaryThatHoldsSlotsBeforeOneThatHoldsNoneYet() {
    Sim sim = new Sim(1);
    PodId first = sim.join();
    sim.settle();
    PodId heir = sim.join();
    sim.settle(); // a primary and its replica
    // A round's move to a new node stopped part way: a primary without slots, older than the heir.
    PodId target = sim.join();
    sim.config = KvReplicas.arrange(sim.config, 1, Set.of(), Set.of(target)).config();
    sim.die(first);
    sim.config = KvReplicas.arrange(sim.config, 1, Set.of(), Set.of(target)).config();
    assertThat(sim.owned(heir)).isEqualTo(SLOTS);
    PodId spare = sim.join();
    KvReplicas.Arranged a = KvReplicas.arrange(sim.config, 1, Set.of(), Set.of(target));
    assertThat(a.config().pod(spare).orElseThrow().pod().version().kvPrimary()).hasValue(heir.incarnation());
    assertThat(a.config().pod(target).orElseThrow().pod().version()).isEqualTo(PodVersion.KV);
  }

  @Test
  void pairsStayWhenTheManagerRunsWithoutReplicas() {
    Sim sim = new Sim(1);
    for (int i = 0; i < 4; i++) {
      sim.join();
      sim.settle();
    }
    KvReplicas.Arranged a = KvReplicas.arrange(sim.config, 0, Set.of());
    assertThat(a.changed()).as("a manager restarted without --replicas dissolves no pair").isFalse();
  }

  @Test
  void aReplicaThatIsLeavingIsStillPromotedWhenItsPrimaryDiesAndOnlyThenHandsItsSlotsOn() {
    Sim sim = new Sim(1);
    sim.join();
    sim.settle();
    PodId replica = sim.join();
    sim.settle();
    PodId primary = sim.primaries().get(0);
    sim.die(primary);
    KvReplicas.Arranged a = KvReplicas.arrange(sim.config, 1, Set.of(replica));
    assertThat(a.config().ownedCounts().get(replica)).isEqualTo(SLOTS);
    assertThat(a.config().pod(replica).orElseThrow().pod().version()).isEqualTo(PodVersion.KV);
  }

  @Test
  void aReplicaThatLeavesWhileItsPrimaryLivesEndsItsPair() {
    Sim sim = new Sim(1);
    sim.join();
    sim.settle();
    PodId replica = sim.join();
    sim.settle();
    KvReplicas.Arranged a = KvReplicas.arrange(sim.config, 1, Set.of(replica));
    assertThat(a.changes()).singleElement().asString().contains("no longer replicates").contains("leaving");
    assertThat(a.config().pod(replica).orElseThrow().pod().version()).isEqualTo(PodVersion.KV);
  }

  @Property(tries = 300)
  void replicasStayConsistentAndNoKeysAreLostWhileAReplicaLives(
      @ForAll @IntRange(min = 0, max = 2) int replicas,
      @ForAll @Size(min = 1, max = 40) List<@IntRange(min = 0, max = 9) Integer> events,
      @ForAll @IntRange(min = 0, max = 1) int batched) {
    Sim sim = new Sim(replicas);
    Random random = new Random(events.hashCode());
    for (int e : events) {
      if (e < 5 || sim.active().size() < 2) {
        sim.join();
      } else {
        List<PodId> alive = sim.active();
        sim.die(alive.get(random.nextInt(alive.size())));
      }
      if (batched == 0 || e % 3 == 0) {
        sim.settle();
      }
    }
    sim.settle();
  }

  /** A cluster of KV nodes, the manager's steps, and which nodes hold each slot's keys. */
  private static final class Sim {
    final int replicas;
    ClusterConfig config = ClusterConfig.empty(SLOTS);
    final Map<Integer, Set<PodId>> holders = new HashMap<>();
    int next = 1;
    int lost;

    Sim(int replicas) {
      this.replicas = replicas;
      for (int s = 0; s < SLOTS; s++) {
        holders.put(s, new HashSet<>());
      }
    }

    PodId join() {
      Pod p = kv(next++);
      config = Rounds.join(config, p);
      return p.id();
    }

    void die(PodId p) {
      for (int s = 0; s < SLOTS; s++) {
        holders.get(s).remove(p);
        if (p.equals(config.owner(s)) && holders.get(s).isEmpty()) {
          lost++; // no copy was left anywhere: the slot starts empty wherever it goes next
        }
      }
      config = Rounds.leave(config, p);
    }

    /** The manager's steps until nothing changes: arrange replicas, then rounds of the strategy. */
    void settle() {
      for (int step = 0; step < 50; step++) {
        KvReplicas.Arranged a = KvReplicas.arrange(config, replicas, Set.of());
        if (a.changed()) {
          ClusterConfig before = config;
          config = a.config();
          assertThat(KvReplicas.arrange(config, replicas, Set.of()).changed()).as("arranging again").isFalse();
          copyToNewReplicas(before);
          checkOwnersHoldTheKeys(before);
          checkHeirsNamed(before);
          continue;
        }
        List<Move> moves = Rounds.plan(config, AllocationStrategy.versionAware(), RebalanceLimits.UNLIMITED,
            new Random(step)).moves();
        if (moves.isEmpty()) {
          checkInvariants();
          return;
        }
        ClusterConfig before = config;
        ClusterConfig.Builder b = config.toBuilder();
        long epoch = config.epoch() + 1;
        for (Move m : moves) {
          int pos = m.shard() - 1;
          b.claim(pos, Rounds.placed(config, pos, m.to(), epoch));
          if (m.from() == null && !hasLiveHolder(pos, before)) {
            holders.get(pos).clear(); // a fresh, empty slot
          }
          holders.get(pos).add(m.to()); // a hand-off moves the keys; a fresh slot starts here
          holders.get(pos).addAll(replicasOf(before, m.to()));
        }
        config = b.build();
        checkOwnersHoldTheKeys(before);
      }
      throw new AssertionError("the manager's steps did not settle: " + config);
    }

    private boolean hasLiveHolder(int pos, ClusterConfig c) {
      for (PodId h : holders.get(pos)) {
        if (c.isActive(h)) {
          return true;
        }
      }
      return false;
    }

    /** A node made a replica copies every slot of its primary (the primary acknowledges nothing before). */
    private void copyToNewReplicas(ClusterConfig before) {
      for (PodEntry e : config.pods()) {
        OptionalLong of = e.pod().version().kvPrimary();
        PodEntry old = before.pod(e.id()).orElse(null);
        if (of.isEmpty() || e.status() != PodStatus.ACTIVE || (old != null && old.pod().version().equals(e.pod().version()))) {
          continue;
        }
        PodId primary = byIncarnation(of.getAsLong());
        for (int s = 0; s < SLOTS; s++) {
          if (primary.equals(config.owner(s))) {
            holders.get(s).add(e.id());
          }
        }
      }
    }

    /** A dead primary whose slots a replica took over names it on its tombstone. */
    private void checkHeirsNamed(ClusterConfig before) {
      for (int s = 0; s < SLOTS; s++) {
        PodId was = before.owner(s);
        PodId o = config.owner(s);
        if (was == null || o == null || o.equals(was)) {
          continue;
        }
        assertThat(config.pod(was)).as("the tombstone of %s", was).isPresent();
        assertThat(config.pod(was).orElseThrow().pod().version().kvHeir()).as("the heir of %s", was)
            .hasValue(o.incarnation());
      }
    }

    /** Every slot that changed hands went to a node holding its keys, unless none was alive. */
    private void checkOwnersHoldTheKeys(ClusterConfig before) {
      for (int s = 0; s < SLOTS; s++) {
        PodId o = config.owner(s);
        if (o == null || o.equals(before.owner(s))) {
          continue;
        }
        assertThat(holders.get(s)).as("slot %d moved to %s", s, o).contains(o);
      }
    }

    private void checkInvariants() {
      Map<PodId, Integer> replicaCount = new HashMap<>();
      for (PodEntry e : config.pods()) {
        if (e.status() != PodStatus.ACTIVE) {
          continue;
        }
        OptionalLong of = e.pod().version().kvPrimary();
        if (of.isEmpty()) {
          continue;
        }
        assertThat(owned(e.id())).as("slots of replica %s", e.id()).isZero();
        PodId primary = byIncarnation(of.getAsLong());
        assertThat(config.isActive(primary)).as("%s replicates a member", e.id()).isTrue();
        assertThat(config.pod(primary).orElseThrow().pod().version()).isEqualTo(PodVersion.KV);
        replicaCount.merge(primary, 1, Integer::sum);
      }
      replicaCount.values().forEach(n -> assertThat(n).isLessThanOrEqualTo(replicas));
      if (!active().isEmpty()) {
        assertThat(config.unownedCount()).as("every slot owned").isZero();
      }
      // A spare node is left only when every primary has its replicas.
      boolean spare = active().stream().anyMatch(p -> owned(p) == 0
          && config.pod(p).orElseThrow().pod().version().equals(PodVersion.KV));
      if (spare) {
        for (PodId p : primaries()) {
          assertThat(replicaCount.getOrDefault(p, 0)).as("replicas of %s while a node is spare", p)
              .isEqualTo(replicas);
        }
      }
    }

    private PodId byIncarnation(long incarnation) {
      return config.pods().stream().filter(e -> e.id().incarnation() == incarnation).findFirst().orElseThrow().id();
    }

    private Set<PodId> replicasOf(ClusterConfig c, PodId primary) {
      Set<PodId> r = new HashSet<>();
      for (PodEntry e : c.pods()) {
        if (e.status() == PodStatus.ACTIVE && e.pod().version().kvPrimary().orElse(-1) == primary.incarnation()) {
          r.add(e.id());
        }
      }
      return r;
    }

    List<PodId> active() {
      return config.activePods().stream().map(Pod::id).toList();
    }

    List<PodId> primaries() {
      return active().stream().filter(p -> owned(p) > 0).toList();
    }

    List<PodId> replicas() {
      return config.activePods().stream().filter(p -> p.version().kvPrimary().isPresent()).map(Pod::id).toList();
    }

    PodId replicaOf(PodId primary) {
      Set<PodId> r = replicasOf(config, primary);
      assertThat(r).hasSize(1);
      return r.iterator().next();
    }

    int owned(PodId p) {
      int n = 0;
      for (int s = 0; s < SLOTS; s++) {
        if (p.equals(config.owner(s))) {
          n++;
        }
      }
      return n;
    }
  }
}

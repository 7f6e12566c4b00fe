package io.atoll.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.core.Space;
import io.atoll.core.Spaces;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A simulation of many shard spaces: random histories of pods of random roles joining, leaving
 * and upgrading, each followed by allocation rounds (strictly applied) until nothing moves.
 * Checked after every round: no shard is moved twice or from anyone but its owner (the strict
 * applier), every owned shard's owner hosts its space's role, and no space moves more owned
 * shards than its own limits allow (in half the histories each space has a strategy and limits of
 * its own); over each event: the spaces of
 * roles the event's pod does not host do not change at all. Checked once rounds stop: every
 * space with a live host has every shard on a live host, spread over its own hosts within one
 * while they run one version.
 */
class SpacedAllocationProperties {

  private static final String[] ROLES = {"", "web", "worker", "kv", "batch", "edge"};

  enum Kind {
    VERSION_AWARE(AllocationStrategy.versionAware()),
    LEAST_SHARD(AllocationStrategy.leastShard());

    final AllocationStrategy strategy;

    Kind(AllocationStrategy strategy) {
      this.strategy = strategy;
    }
  }

  @Provide
  Arbitrary<Long> seeds() {
    return Arbitraries.longs();
  }

  @Provide
  Arbitrary<Kind> kinds() {
    return Arbitraries.of(Kind.class);
  }

  @Property(tries = 300)
  void eachSpaceBalancesOverItsOwnPodsAndEventsOfOneRoleMoveNothingElsewhere(@ForAll("seeds") long seed,
      @ForAll("kinds") Kind kind) {
    Random random = new Random(seed);
    int spaceCount = 2 + random.nextInt(ROLES.length - 1);
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (int i = 0; i < spaceCount; i++) {
      counts.put(ROLES[i], 1 + random.nextInt(60));
    }
    Spaces spaces = Spaces.of(counts);
    ClusterConfig config = ClusterConfig.empty(spaces);
    Map<PodId, Pod> live = new TreeMap<>();
    long epoch = 0;
    int nextPort = 7000;
    RebalanceLimits limits = random.nextBoolean() ? RebalanceLimits.DEFAULT : new RebalanceLimits(1 + random.nextInt(5), 1.0);
    // Half the histories give each space a strategy and limits of its own.
    boolean perSpace = random.nextBoolean();
    Map<String, SpaceAllocation> allocations = new HashMap<>();
    for (String role : counts.keySet()) {
      allocations.put(role, !perSpace ? new SpaceAllocation(kind.strategy, limits)
          : new SpaceAllocation(random.nextBoolean() ? AllocationStrategy.versionAware() : AllocationStrategy.leastShard(),
              new RebalanceLimits(1 + random.nextInt(6), random.nextBoolean() ? 1.0 : 0.2)));
    }
    for (int step = 0; step < 30; step++) {
      int what = random.nextInt(10);
      Pod touched;
      if (live.isEmpty() || what < 5) { // a pod of one or two roles joins
        List<String> roles = new ArrayList<>();
        roles.add(ROLES[random.nextInt(spaceCount)]);
        if (random.nextInt(4) == 0) {
          roles.add(ROLES[random.nextInt(spaceCount)]);
        }
        touched = new Pod(new PodId(new PodAddress("127.0.0.1", nextPort++), random.nextLong()),
            PodVersion.of(random.nextInt(5) == 0 ? "2" : "1"), roles);
        live.put(touched.id(), touched);
        config = config.toBuilder().pod(new PodEntry(touched, PodStatus.ACTIVE, ++epoch)).build();
      } else if (what < 8) { // one leaves (or dies: same thing to the strategy)
        List<Pod> pods = new ArrayList<>(live.values());
        touched = pods.get(random.nextInt(pods.size()));
        live.remove(touched.id());
        config = config.toBuilder().pod(new PodEntry(touched, PodStatus.GONE, ++epoch)).build();
      } else { // one is upgraded: the same roles, a newer version, a new incarnation
        List<Pod> pods = new ArrayList<>(live.values());
        Pod old = pods.get(random.nextInt(pods.size()));
        live.remove(old.id());
        touched = new Pod(new PodId(old.address(), random.nextLong()), PodVersion.of("2"), old.roles());
        live.put(touched.id(), touched);
        config = config.toBuilder().pod(new PodEntry(old, PodStatus.GONE, ++epoch))
            .pod(new PodEntry(touched, PodStatus.ACTIVE, ++epoch)).build();
      }
      ClusterConfig before = config;
      for (int round = 0; round < 500; round++) {
        List<Move> moves = perSpace
            ? SpacedAllocation.decide(allocations::get, config, List.copyOf(live.values()), random)
            : SpacedAllocation.decide(kind.strategy, config, List.copyOf(live.values()), limits, random);
        if (moves.isEmpty()) {
          break;
        }
        checkEachSpaceWithinItsLimits(config, moves, allocations);
        config = Allocations.apply(config, moves, ++epoch);
        checkOwnersHostTheirSpace(config);
      }
      checkOtherSpacesUntouched(before, config, touched);
      checkSettled(config, live);
    }
  }

  /** Each space moves at most its own limit of owned shards in one round. */
  private static void checkEachSpaceWithinItsLimits(ClusterConfig config, List<Move> moves,
      Map<String, SpaceAllocation> allocations) {
    Map<String, Integer> owned = new HashMap<>();
    for (Move m : moves) {
      if (m.from() != null) {
        owned.merge(config.spaces().at(m.shard() - 1).role(), 1, Integer::sum);
      }
    }
    owned.forEach((role, n) -> {
      int count = config.spaces().of(role).count();
      assertThat(n).as("owned shards moved in one round in space '%s' (%s)", role, allocations.get(role))
          .isLessThanOrEqualTo(allocations.get(role).limits().movesPerRound(count));
    });
  }

  private static void checkOwnersHostTheirSpace(ClusterConfig config) {
    for (int pos = 0; pos < config.size(); pos++) {
      PodEntry owner = config.ownerEntry(pos);
      if (owner != null) {
        String role = config.spaces().at(pos).role();
        assertThat(owner.pod().hosts(role)).as("owner %s of position %d hosts role '%s'", owner.id(), pos, role).isTrue();
      }
    }
  }

  private static void checkOtherSpacesUntouched(ClusterConfig before, ClusterConfig after, Pod touched) {
    for (Space sp : after.spaces().list()) {
      if (touched.hosts(sp.role())) {
        continue;
      }
      for (int pos = sp.first(); pos < sp.first() + sp.count(); pos++) {
        assertThat(after.claim(pos)).as("space '%s' position %d after an event of %s", sp.role(), pos, touched)
            .isEqualTo(before.claim(pos));
      }
    }
  }

  private static void checkSettled(ClusterConfig config, Map<PodId, Pod> live) {
    for (Space sp : config.spaces().list()) {
      Map<PodId, Integer> load = new HashMap<>();
      List<String> versions = new ArrayList<>();
      for (Pod p : live.values()) {
        if (p.hosts(sp.role())) {
          load.put(p.id(), 0);
          if (!versions.contains(p.version().value())) {
            versions.add(p.version().value());
          }
        }
      }
      if (load.isEmpty()) {
        continue;
      }
      for (int pos = sp.first(); pos < sp.first() + sp.count(); pos++) {
        PodId owner = config.owner(pos);
        assertThat(owner).as("space '%s' position %d has a live host", sp.role(), pos).isIn(load.keySet());
        load.merge(owner, 1, Integer::sum);
      }
      if (versions.size() == 1) {
        int max = load.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
        int min = load.values().stream().mapToInt(Integer::intValue).min().orElseThrow();
        assertThat(max - min).as("spread of space '%s' over its hosts %s", sp.role(), load).isLessThanOrEqualTo(1);
      }
    }
  }
}

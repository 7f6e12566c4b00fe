package io.atoll.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Properties of both strategies over random clusters, versions and membership histories.
 */
class AllocationProperties {

  /** A cluster: shard count, pods (some with old versions), and a random starting assignment. */
  record Scenario(int shards, List<Pod> pods, ClusterConfig config, long seed) {}

  enum Kind {
    VERSION_AWARE(AllocationStrategy.versionAware()),
    LEAST_SHARD(AllocationStrategy.leastShard());

    final AllocationStrategy strategy;

    Kind(AllocationStrategy strategy) {
      this.strategy = strategy;
    }
  }

  static Pod pod(int i, String version) {
    return new Pod(new PodId(new PodAddress("127.0.0.1", 7000 + i), i), PodVersion.of(version));
  }

  @Provide
  Arbitrary<Scenario> scenarios() {
    return Combinators.combine(
        Arbitraries.integers().between(1, 120),
        Arbitraries.integers().between(1, 9),
        Arbitraries.integers().between(0, 100),
        Arbitraries.longs())
        .as((shards, podCount, oldPercent, seed) -> {
          Random r = new Random(seed);
          List<Pod> all = new ArrayList<>();
          for (int i = 0; i < podCount + 2; i++) {
            all.add(pod(i, r.nextInt(100) < oldPercent ? "1.0" : "1.1"));
          }
          // Some pods in the config may be dead (not passed to the strategy): the last two.
          ClusterConfig.Builder b = ClusterConfig.empty(shards).toBuilder();
          all.forEach(p -> b.pod(new PodEntry(p, PodStatus.ACTIVE, 1)));
          for (int s = 0; s < shards; s++) {
            int choice = r.nextInt(all.size() + 2);
            if (choice < all.size()) {
              b.claim(s, io.atoll.core.Claim.stable(all.get(choice).id(), 1 + r.nextInt(3)));
            }
          }
          return new Scenario(shards, all.subList(0, podCount), b.build(), seed);
        });
  }

  @Provide
  Arbitrary<Kind> kinds() {
    return Arbitraries.of(Kind.class);
  }

  @Provide
  Arbitrary<RebalanceLimits> limits() {
    return Combinators.combine(Arbitraries.integers().between(1, 50), Arbitraries.doubles().between(0.01, 1.0))
        .as(RebalanceLimits::new);
  }

  @Property
  void movesAreWellFormedAndNeverGiveAShardTwoOwners(@ForAll("scenarios") Scenario sc, @ForAll("kinds") Kind kind,
      @ForAll("limits") RebalanceLimits limits) {
    List<Move> moves = kind.strategy.decide(sc.config, sc.pods, limits, new Random(sc.seed));
    Set<PodId> live = new HashSet<>(sc.pods.stream().map(Pod::id).toList());
    Set<Integer> seen = new HashSet<>();
    int ownedMoves = 0;
    for (Move m : moves) {
      assertThat(seen.add(m.shard())).as("shard %s moved twice", m.shard()).isTrue();
      assertThat(live).contains(m.to());
      PodId owner = sc.config.owner(m.shard() - 1);
      if (m.from() == null) {
        assertThat(owner == null || !live.contains(owner)).isTrue();
      } else {
        assertThat(m.from()).isEqualTo(owner);
        ownedMoves++;
      }
    }
    assertThat(ownedMoves).isLessThanOrEqualTo(limits.movesPerRound(sc.shards));
    // Applying the round: every shard has at most one owner, and each move's epoch is newer.
    long epoch = sc.config.epoch() + 1;
    ClusterConfig next = Allocations.apply(sc.config, moves, epoch);
    for (Move m : moves) {
      assertThat(next.owner(m.shard() - 1)).isEqualTo(m.to());
      assertThat(next.epoch(m.shard() - 1)).isEqualTo(epoch);
    }
    int owned = next.ownedCounts().values().stream().mapToInt(Integer::intValue).sum();
    int unowned = (int) IntStream.range(0, next.size()).filter(i -> next.owner(i) == null).count();
    assertThat(owned + unowned).isEqualTo(sc.shards);
  }

  @Property
  void everyShardWithoutALiveOwnerIsPlacedAtOnce(@ForAll("scenarios") Scenario sc, @ForAll("kinds") Kind kind,
      @ForAll("limits") RebalanceLimits limits) {
    Set<PodId> live = new HashSet<>(sc.pods.stream().map(Pod::id).toList());
    ClusterConfig next = Allocations.apply(sc.config,
        kind.strategy.decide(sc.config, sc.pods, limits, new Random(sc.seed)), sc.config.epoch() + 1);
    for (int i = 0; i < next.size(); i++) {
      assertThat(live).contains(next.owner(i));
    }
  }

  @Property
  void nothingMovesToAnOldVersionPod(@ForAll("scenarios") Scenario sc, @ForAll("kinds") Kind kind,
      @ForAll("limits") RebalanceLimits limits) {
    PodVersion newest = sc.pods.stream().map(Pod::version).max(PodVersion::compareTo).orElseThrow();
    Map<PodId, PodVersion> versions = new java.util.HashMap<>();
    sc.pods.forEach(p -> versions.put(p.id(), p.version()));
    for (Move m : kind.strategy.decide(sc.config, sc.pods, limits, new Random(sc.seed))) {
      assertThat(versions.get(m.to())).isEqualTo(newest);
    }
  }

  @Property
  void noPeriodicMovesWhileVersionsAreMixed(@ForAll("scenarios") Scenario sc, @ForAll("kinds") Kind kind,
      @ForAll("limits") RebalanceLimits limits) {
    long distinct = sc.pods.stream().map(Pod::version).distinct().count();
    if (distinct > 1) {
      for (Move m : kind.strategy.decide(sc.config, sc.pods, limits, new Random(sc.seed))) {
        assertThat(m.isAllocation()).as("move of an owned shard during a rolling update: %s", m).isTrue();
      }
    }
  }

  @Property
  void repeatedRoundsConvergeToASpreadOfAtMostOne(@ForAll("scenarios") Scenario sc, @ForAll("kinds") Kind kind,
      @ForAll("limits") RebalanceLimits limits) {
    List<Pod> sameVersion = sc.pods.stream().map(p -> new Pod(p.id(), PodVersion.of("2.0"))).toList();
    ClusterConfig config = sc.config;
    Random random = new Random(sc.seed);
    int rounds = 0;
    while (true) {
      List<Move> moves = kind.strategy.decide(config, sameVersion, limits, random);
      if (moves.isEmpty()) {
        break;
      }
      config = Allocations.apply(config, moves, config.epoch() + 1);
      assertThat(++rounds).as("rounds").isLessThanOrEqualTo(sc.shards + 2);
    }
    assertThat(spread(config, sameVersion)).isLessThanOrEqualTo(1);
  }

  @Property
  void leastShardBalancesInAtMostTwoUnlimitedRounds(@ForAll("scenarios") Scenario sc) {
    List<Pod> sameVersion = sc.pods.stream().map(p -> new Pod(p.id(), PodVersion.of("2.0"))).toList();
    ClusterConfig config = sc.config;
    Random random = new Random(sc.seed);
    for (int round = 0; round < 2; round++) {
      config = Allocations.apply(config,
          AllocationStrategy.leastShard().decide(config, sameVersion, RebalanceLimits.UNLIMITED, random),
          config.epoch() + 1);
    }
    assertThat(spread(config, sameVersion)).isLessThanOrEqualTo(1);
  }

  /** Random join/leave histories: after each event and enough rounds, the cluster is balanced. */
  @Property
  void historiesOfJoinsAndLeavesStayBalanced(@ForAll("kinds") Kind kind, @ForAll @IntRange(min = 1, max = 300) int shards,
      @ForAll("histories") List<Integer> events, @ForAll long seed) {
    Random random = new Random(seed);
    List<Pod> live = new ArrayList<>();
    ClusterConfig config = ClusterConfig.empty(shards);
    int next = 0;
    for (int event : events) {
      if (event > 0 || live.size() <= 1) {
        Pod p = pod(next++, "1.0");
        live.add(p);
        config = config.toBuilder().pod(new PodEntry(p, PodStatus.ACTIVE, config.epoch() + 1)).build();
      } else {
        Pod gone = live.remove(random.nextInt(live.size()));
        config = config.toBuilder().pod(new PodEntry(gone, PodStatus.GONE, config.epoch() + 1)).build();
      }
      for (int round = 0; round < shards + 2; round++) {
        List<Move> moves = kind.strategy.decide(config, live, RebalanceLimits.DEFAULT, random);
        if (moves.isEmpty()) {
          break;
        }
        config = Allocations.apply(config, moves, config.epoch() + 1);
      }
      assertThat(spread(config, live)).isLessThanOrEqualTo(1);
      for (int i = 0; i < shards; i++) {
        assertThat(live.stream().map(Pod::id).toList()).contains(config.owner(i));
      }
    }
  }

  @Provide
  Arbitrary<List<Integer>> histories() {
    return Arbitraries.integers().between(-1, 1).filter(i -> i != 0).list().ofMinSize(1).ofMaxSize(12);
  }

  @Example
  void theSeedExampleOfThreeThreeOneMoves() {
    // With the average rounded down, 3/3/1 would never balance.
    Pod a = pod(1, "1");
    Pod b = pod(2, "1");
    Pod c = pod(3, "1");
    ClusterConfig.Builder builder = ClusterConfig.empty(7).toBuilder();
    List.of(a, b, c).forEach(p -> builder.pod(new PodEntry(p, PodStatus.ACTIVE, 1)));
    int[] owners = {0, 0, 0, 1, 1, 1, 2};
    List<Pod> pods = List.of(a, b, c);
    for (int s = 0; s < 7; s++) {
      builder.claim(s, io.atoll.core.Claim.stable(pods.get(owners[s]).id(), 1));
    }
    List<Move> moves = AllocationStrategy.versionAware().decide(builder.build(), pods, RebalanceLimits.UNLIMITED,
        new Random(1));
    assertThat(moves).hasSize(1);
    assertThat(moves.get(0).to()).isEqualTo(c.id());
  }

  @Example
  void theFirstPodGetsEveryShard() {
    Pod a = pod(1, "1");
    ClusterConfig config = ClusterConfig.empty(300).toBuilder().pod(new PodEntry(a, PodStatus.ACTIVE, 1)).build();
    List<Move> moves = AllocationStrategy.versionAware().decide(config, List.of(a), RebalanceLimits.DEFAULT, new Random(1));
    assertThat(moves).hasSize(300).allSatisfy(m -> assertThat(m.to()).isEqualTo(a.id()));
  }

  static int spread(ClusterConfig config, List<Pod> pods) {
    Map<PodId, Integer> counts = config.ownedCounts();
    int min = Integer.MAX_VALUE;
    int max = 0;
    for (Pod p : pods) {
      int c = counts.getOrDefault(p.id(), 0);
      min = Math.min(min, c);
      max = Math.max(max, c);
    }
    return max - min;
  }
}

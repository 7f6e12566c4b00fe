package io.atoll.core.allocation;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The Shard Manager seed's assignment algorithm, step by step:
 *
 * <ol>
 *   <li>average = number of shards / number of pods;
 *   <li>for each pod above the average, pick at random as many of its shards as it has above the
 *       average ({@code extraShardsToAllocate}), but none at all while pods run different versions
 *       (a rolling update is under way);
 *   <li>shards to place = unowned shards + those extras, sorted: unowned first, then shards of the
 *       pods with most shards (the seed's last key, shards of pods on older versions, cannot
 *       decide anything: there are extras only while all pods run one version);
 *   <li>for each: the target is the least-loaded pod of the newest version; skip when the target
 *       already owns it or has only one shard fewer than its owner; otherwise move it.
 * </ol>
 *
 * <p>One reading is ours: "as many as it has above the average" is rounded up. Rounded down, a
 * spread such as 3, 3, 1 (average 2.33) never moves, so the cluster would never balance; rounded
 * up, every round with a spread of two or more moves at least one shard, and repeated rounds
 * reach a spread of at most one. Moves of owned shards stop at the round's limit.
 */
final class VersionAwareStrategy implements AllocationStrategy {

  @Override
  public List<Move> decide(ClusterConfig config, List<Pod> pods, RebalanceLimits limits, RandomGenerator random) {
    if (pods.isEmpty()) {
      return List.of();
    }
    Loads loads = new Loads(config, pods);
    int n = loads.pods.size();
    int[] startCount = loads.count.clone();
    int[] ownerOf = new int[config.size() + 1];
    java.util.Arrays.fill(ownerOf, -1);
    List<Integer> extras = new ArrayList<>();
    if (!loads.mixedVersions) {
      double average = (double) config.size() / n;
      for (int i = 0; i < n; i++) {
        double above = loads.count[i] - average;
        if (above > 0) {
          List<Integer> mine = new ArrayList<>(loads.shardsOf.get(i));
          Collections.shuffle(mine, asRandom(random));
          int take = (int) Math.ceil(above - 1e-9);
          for (int s : mine.subList(0, Math.min(take, mine.size()))) {
            extras.add(s);
            ownerOf[s] = i;
          }
        }
      }
    }
    // Unowned first (by shard id), then shards of the most-loaded pods (by shard id). The seed's
    // third key, shards of older pods first, never decides: extras exist only while every pod
    // runs one version, so it is left out.
    Comparator<Integer> order = Comparator
        .comparingInt((Integer s) -> -startCount[ownerOf[s]])
        .thenComparingInt(s -> s);
    extras.sort(order);
    List<Integer> toPlace = new ArrayList<>(loads.unowned);
    toPlace.addAll(extras);

    int budget = limits.movesPerRound(config.size());
    List<Move> moves = new ArrayList<>();
    for (int shard : toPlace) {
      int from = ownerOf[shard];
      int to = loads.leastLoadedNewest(-1);
      if (to < 0 || to == from) {
        continue;
      }
      if (from >= 0) {
        if (loads.count[to] + 1 >= loads.count[from] || budget == 0) {
          continue;
        }
        budget--;
      }
      loads.move(from, to);
      moves.add(new Move(shard, from >= 0 ? loads.id(from) : null, loads.id(to)));
    }
    return moves;
  }

  static java.util.Random asRandom(RandomGenerator random) {
    return random instanceof java.util.Random r ? r : new java.util.Random(random.nextLong());
  }
}

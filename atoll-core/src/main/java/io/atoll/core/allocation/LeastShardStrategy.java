package io.atoll.core.allocation;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * A least-shard strategy in the spirit of Akka's {@code LeastShardAllocationStrategy}.
 *
 * <ul>
 *   <li>Unowned shards go, one by one, to the newest-version pod with the fewest shards.
 *   <li>Phase 1: every pod above {@code ceil(shards / pods)} gives up its excess.
 *   <li>Phase 2 (only when phase 1 found nothing): if some pod is below
 *       {@code floor(shards / pods)}, pods at the ceiling give up one shard each, as many as the
 *       deficit.
 *   <li>Each given-up shard goes to the least-loaded newest-version pod, if that narrows the gap.
 * </ul>
 *
 * <p>With limits that do not bind, the first round leaves no pod above the ceiling and the second
 * none below the floor: balance (a spread of at most one) in one or two rounds. While pods run
 * different versions only unowned shards move, as in the version-aware strategy.
 */
final class LeastShardStrategy implements AllocationStrategy {

  @Override
  public List<Move> decide(ClusterConfig config, List<Pod> pods, RebalanceLimits limits, RandomGenerator random) {
    if (pods.isEmpty()) {
      return List.of();
    }
    Loads loads = new Loads(config, pods);
    List<Move> moves = new ArrayList<>();
    for (int shard : loads.unowned) {
      int to = loads.leastLoadedNewest(-1);
      loads.move(-1, to);
      moves.add(new Move(shard, null, loads.id(to)));
    }
    if (loads.mixedVersions) {
      return moves;
    }
    int n = loads.pods.size();
    int total = config.size();
    int ceil = (total + n - 1) / n;
    int floor = total / n;
    java.util.Random rnd = VersionAwareStrategy.asRandom(random);

    List<int[]> givenUp = new ArrayList<>(); // {shard, fromPod}
    for (int i = 0; i < n; i++) {
      int excess = loads.count[i] - ceil;
      if (excess > 0) {
        takeRandom(loads.shardsOf.get(i), excess, i, rnd, givenUp);
      }
    }
    if (givenUp.isEmpty()) {
      int deficit = 0;
      for (int i = 0; i < n; i++) {
        deficit += Math.max(0, floor - loads.count[i]);
      }
      for (int i = 0; i < n && deficit > 0; i++) {
        if (loads.count[i] >= ceil && loads.count[i] > floor) {
          takeRandom(loads.shardsOf.get(i), 1, i, rnd, givenUp);
          deficit--;
        }
      }
    }
    int budget = limits.movesPerRound(total);
    for (int[] g : givenUp) {
      if (budget == 0) {
        break;
      }
      int from = g[1];
      int to = loads.leastLoadedNewest(from);
      if (to < 0 || loads.count[to] + 1 >= loads.count[from]) {
        continue;
      }
      budget--;
      loads.move(from, to);
      moves.add(new Move(g[0], loads.id(from), loads.id(to)));
    }
    return moves;
  }

  private static void takeRandom(List<Integer> shards, int howMany, int from, java.util.Random rnd, List<int[]> out) {
    List<Integer> copy = new ArrayList<>(shards);
    Collections.shuffle(copy, rnd);
    for (int s : copy.subList(0, Math.min(howMany, copy.size()))) {
      out.add(new int[] {s, from});
    }
  }
}

package io.atoll.core.allocation;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.Space;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * Runs an {@link AllocationStrategy} once per shard {@link Space space} of a config: each space's
 * shards are placed only on the given pods that host its role, balanced over those pods alone,
 * with the limits applied to each space on its own. A pod that hosts no role of a space is
 * invisible to it, so pods of one role joining, leaving or upgrading move nothing in another
 * space. Each space may have a strategy and limits of its own ({@link SpaceAllocation}, by role).
 * Pure and stateless, like the strategies.
 *
 * <p>With one default space and pods of the default role (a cluster without roles) this is the
 * strategy itself, called with the same arguments.
 */
public final class SpacedAllocation {

  private SpacedAllocation() {}

  /**
   * Decides one round over every space of {@code config}.
   *
   * @return the moves of every space, space by space in position order; global shards
   */
  public static List<Move> decide(AllocationStrategy strategy, ClusterConfig config, List<Pod> pods,
      RebalanceLimits limits, RandomGenerator random) {
    SpaceAllocation same = new SpaceAllocation(strategy, limits);
    return decide(role -> same, config, pods, random);
  }

  /**
   * Decides one round over every space of {@code config}, each space with the strategy and
   * limits {@code allocationOf} gives for its role.
   *
   * @param allocationOf the strategy and limits of a space, by its role ({@code ""} for the
   *     default space); never null for a role of the config's layout
   * @return the moves of every space, space by space in position order; global shards
   */
  public static List<Move> decide(Function<String, SpaceAllocation> allocationOf, ClusterConfig config,
      List<Pod> pods, RandomGenerator random) {
    List<Space> spaces = config.spaces().list();
    if (spaces.size() == 1 && spaces.get(0).role().isEmpty() && allDefault(pods)) {
      SpaceAllocation a = allocationOf.apply(spaces.get(0).role());
      return a.strategy().decide(config, pods, a.limits(), random);
    }
    List<Move> all = new ArrayList<>();
    for (Space space : spaces) {
      List<Pod> hosts = new ArrayList<>(pods.size());
      for (Pod p : pods) {
        if (p.hosts(space.role())) {
          hosts.add(p);
        }
      }
      if (hosts.isEmpty()) {
        continue; // nobody hosts it: its shards stay where they are (owners not live count as none)
      }
      ClusterConfig slice = config.slice(space);
      SpaceAllocation a = allocationOf.apply(space.role());
      for (Move m : a.strategy().decide(slice, hosts, a.limits(), random)) {
        all.add(new Move(space.globalShard(m.shard()), m.from(), m.to()));
      }
    }
    return all;
  }

  private static boolean allDefault(List<Pod> pods) {
    for (Pod p : pods) {
      if (!p.hasDefaultRoles()) {
        return false;
      }
    }
    return true;
  }
}

package io.atoll.testkit;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.runtime.Sharding;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Conditions on a cluster that tests, the demo and the load generator wait for, written once.
 * Stateless; every method reads one snapshot of a config.
 */
public final class ClusterChecks {

  private ClusterChecks() {}

  /** Whether every shard of {@code config} is owned by a pod that is active in it. */
  public static boolean everyShardOwnedByALivePod(ClusterConfig config) {
    for (int pos = 0; pos < config.size(); pos++) {
      if (config.activeOwner(pos) == null) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether every shard of {@code config} is owned by an active pod and exactly
   * {@code activePods} pods are active.
   */
  public static boolean everyShardOwnedByALivePod(ClusterConfig config, int activePods) {
    return config.activePods().size() == activePods && everyShardOwnedByALivePod(config);
  }

  /**
   * Whether the shards are spread evenly: {@code activePods} active pods own every shard, and
   * their counts differ by at most one.
   */
  public static boolean balanced(ClusterConfig config, int activePods) {
    if (!everyShardOwnedByALivePod(config, activePods)) {
      return false;
    }
    Map<PodId, Integer> counts = config.ownedCounts();
    int min = Integer.MAX_VALUE;
    int max = 0;
    int owners = 0;
    for (Map.Entry<PodId, Integer> e : counts.entrySet()) {
      if (config.isActive(e.getKey())) {
        owners++;
        min = Math.min(min, e.getValue());
        max = Math.max(max, e.getValue());
      }
    }
    return owners == activePods && max - min <= 1;
  }

  /**
   * Whether {@code config} is settled as the given pods see it: every shard is owned by an active
   * pod, and each of {@code pods} that is active serves exactly the shards it owns (shards
   * numbered from 1), so that no hand-off is still under way. Pods that are not active in the
   * config (clients, stopped pods) are skipped.
   */
  public static boolean settled(ClusterConfig config, Collection<Sharding> pods) {
    if (!everyShardOwnedByALivePod(config)) {
      return false;
    }
    Map<PodId, List<Integer>> byOwner = config.positionsByOwner();
    int served = 0;
    for (Sharding p : pods) {
      if (!config.isActive(p.podId())) {
        continue;
      }
      List<Integer> owned = byOwner.getOrDefault(p.podId(), List.of()).stream().map(i -> i + 1).toList();
      if (!p.servedShards().equals(owned)) {
        return false;
      }
      served += owned.size();
    }
    return served == config.size();
  }

  /**
   * Waits until {@code viewer}'s view of the cluster has {@code activePods} active pods owning
   * every shard.
   *
   * @throws Await.ConditionTimeoutException if that does not happen within {@code timeout}
   */
  public static void awaitEveryShardOwned(Sharding viewer, int activePods, Duration timeout) {
    Await.until("every shard owned by one of " + activePods + " live pods", timeout,
        () -> everyShardOwnedByALivePod(viewer.config(), activePods));
  }
}

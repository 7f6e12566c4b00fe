package io.atoll.testkit;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.core.Space;
import io.atoll.runtime.Sharding;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
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
   * Whether the shards are spread evenly: {@code activePods} active pods own every shard, and in
   * each shard space the counts of the active pods hosting its role differ by at most one (a
   * cluster without roles has one space, hosted by every pod).
   */
  public static boolean balanced(ClusterConfig config, int activePods) {
    if (!everyShardOwnedByALivePod(config, activePods)) {
      return false;
    }
    for (Space sp : config.spaces().list()) {
      Map<PodId, Integer> counts = new HashMap<>();
      for (Pod p : config.activePods()) {
        if (p.hosts(sp.role())) {
          counts.put(p.id(), 0);
        }
      }
      for (int pos = sp.first(); pos < sp.first() + sp.count(); pos++) {
        if (counts.computeIfPresent(config.owner(pos), (k, v) -> v + 1) == null) {
          return false; // owned by a pod that does not host the space
        }
      }
      int min = Integer.MAX_VALUE;
      int max = 0;
      for (int n : counts.values()) {
        min = Math.min(min, n);
        max = Math.max(max, n);
      }
      if (!counts.isEmpty() && max - min > 1) {
        return false;
      }
    }
    return true;
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
    try {
      Await.until("every shard owned by one of " + activePods + " live pods", timeout,
          () -> everyShardOwnedByALivePod(viewer.config(), activePods));
    } catch (Await.ConditionTimeoutException e) {
      ClusterConfig last = viewer.config();
      int orphans = 0;
      for (int pos = 0; pos < last.size(); pos++) {
        orphans += last.activeOwner(pos) == null ? 1 : 0;
      }
      throw new Await.ConditionTimeoutException(e.getMessage() + "; the last view: " + last.activePods().size()
          + " active pods, " + orphans + " shards without an active owner, " + last, e);
    }
  }
}

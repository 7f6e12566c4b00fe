package io.atoll.core.allocation;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The working state of one allocation round: for each live pod the shards it owns, and the shards
 * nobody live owns. Mutable, confined to one call of a strategy.
 */
final class Loads {
  final List<Pod> pods; // sorted by id
  final Map<PodId, Integer> index = new HashMap<>();
  final int[] count;
  final List<List<Integer>> shardsOf = new ArrayList<>();
  final List<Integer> unowned = new ArrayList<>();
  final PodVersion newest;
  final boolean[] isNewest;
  final boolean mixedVersions;
  final int numberOfShards;

  Loads(ClusterConfig config, List<Pod> livePods) {
    this.pods = livePods.stream().sorted((a, b) -> a.id().compareTo(b.id())).distinct().toList();
    this.numberOfShards = config.size();
    this.count = new int[pods.size()];
    PodVersion max = null;
    for (int i = 0; i < pods.size(); i++) {
      Pod p = pods.get(i);
      if (index.putIfAbsent(p.id(), i) != null) {
        throw new IllegalArgumentException("pods: " + p.id() + " listed twice (expected: distinct pods)");
      }
      shardsOf.add(new ArrayList<>());
      if (max == null || p.version().compareTo(max) > 0) {
        max = p.version();
      }
    }
    this.newest = max;
    this.isNewest = new boolean[pods.size()];
    boolean mixed = false;
    for (int i = 0; i < pods.size(); i++) {
      isNewest[i] = pods.get(i).version().compareTo(max) == 0;
      mixed |= !isNewest[i];
    }
    this.mixedVersions = mixed;
    for (int position = 0; position < numberOfShards; position++) {
      PodId owner = config.owner(position);
      Integer i = owner == null ? null : index.get(owner);
      if (i == null) {
        unowned.add(position + 1);
      } else {
        count[i]++;
        shardsOf.get(i).add(position + 1);
      }
    }
  }

  /** The newest-version pod with the fewest shards (ties: lowest id), or -1; skips {@code except}. */
  int leastLoadedNewest(int except) {
    int best = -1;
    for (int i = 0; i < pods.size(); i++) {
      if (isNewest[i] && i != except && (best == -1 || count[i] < count[best])) {
        best = i;
      }
    }
    return best;
  }

  PodId id(int i) {
    return pods.get(i).id();
  }

  void move(int from, int to) {
    if (from >= 0) {
      count[from]--;
    }
    count[to]++;
  }
}

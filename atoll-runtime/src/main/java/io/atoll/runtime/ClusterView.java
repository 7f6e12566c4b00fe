package io.atoll.runtime;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A pod's view of the cluster at one moment, read-only: which pods there are and which pod owns
 * each shard. Shards are numbered {@code 1..numberOfShards()}, as everywhere in this API. It does
 * not expose the manager's model (the config, its claims and builder), which may change between
 * releases. Immutable and thread-safe; take a new one with {@link Sharding#view()} to see changes.
 */
public final class ClusterView {

  private final ClusterConfig config;

  ClusterView(ClusterConfig config) {
    this.config = config;
  }

  /** The config epoch this view was taken at: it only grows. */
  public long epoch() {
    return config.epoch();
  }

  /** The number of shards of the cluster. */
  public int numberOfShards() {
    return config.size();
  }

  /**
   * The pod that owns {@code shard} and is active, if any.
   *
   * @throws IllegalArgumentException if {@code shard} is not in {@code 1..numberOfShards()}
   */
  public Optional<PodId> owner(int shard) {
    return Optional.ofNullable(config.activeOwner(position(shard)));
  }

  /** The active pods, in the config's order. */
  public List<PodId> activePods() {
    List<PodId> out = new ArrayList<>();
    for (Pod p : config.activePods()) {
      out.add(p.id());
    }
    return Collections.unmodifiableList(out);
  }

  /** The status of {@code pod} in the view, or empty if it is not listed. */
  public Optional<PodStatus> status(PodId pod) {
    return config.pod(pod).map(PodEntry::status);
  }

  /** Whether {@code pod} is listed and active. */
  public boolean isActive(PodId pod) {
    return config.isActive(pod);
  }

  /** How many shards have no owner. */
  public int unownedCount() {
    return config.unownedCount();
  }

  /**
   * The shards each pod holds a claim on, ascending, numbered from 1; unowned shards are left out.
   * A pod that left keeps its claims here until they move (see {@link #owner} for live owners).
   */
  public Map<PodId, List<Integer>> shardsByPod() {
    Map<PodId, List<Integer>> out = new LinkedHashMap<>();
    for (Map.Entry<PodId, List<Integer>> e : config.positionsByOwner().entrySet()) {
      List<Integer> shards = new ArrayList<>(e.getValue().size());
      for (int position : e.getValue()) {
        shards.add(position + 1);
      }
      out.put(e.getKey(), Collections.unmodifiableList(shards));
    }
    return Collections.unmodifiableMap(out);
  }

  private int position(int shard) {
    if (shard < 1 || shard > config.size()) {
      throw new IllegalArgumentException("shard: " + shard + " (expected: 1.." + config.size() + ")");
    }
    return shard - 1;
  }

  @Override
  public String toString() {
    return "ClusterView[epoch " + epoch() + ", " + activePods().size() + " active pods, " + unownedCount()
        + " of " + numberOfShards() + " shards unowned]";
  }
}

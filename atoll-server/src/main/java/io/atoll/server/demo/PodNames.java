package io.atoll.server.demo;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The names of a run's pod processes by the address they announce, for progress lines such as
 * "shards pod-1=100 pod-2=100". Thread-safe.
 */
public final class PodNames {

  private final Map<PodAddress, String> names = new ConcurrentHashMap<>();

  /** Names the pod announcing {@code address}. */
  public void put(PodAddress address, String name) {
    names.put(address, name);
  }

  /** The name of the pod announcing {@code address}, or "new-pod@PORT". */
  public String of(PodAddress address) {
    return names.getOrDefault(address, "new-pod@" + address.port());
  }

  /** Shards owned per active pod, by name. */
  public Map<String, Integer> shardCounts(ClusterConfig c) {
    Map<String, Integer> out = new TreeMap<>();
    Map<PodId, Integer> owned = c.ownedCounts();
    for (PodEntry e : c.pods()) {
      if (e.status() == PodStatus.ACTIVE) {
        out.put(of(e.id().address()), owned.getOrDefault(e.id(), 0));
      }
    }
    return out;
  }

  /** "shards pod-1=N pod-2=M ...". */
  public String shardsLine(ClusterConfig c) {
    StringBuilder b = new StringBuilder("shards");
    shardCounts(c).forEach((n, k) -> b.append(' ').append(n).append('=').append(k));
    return b.toString();
  }
}

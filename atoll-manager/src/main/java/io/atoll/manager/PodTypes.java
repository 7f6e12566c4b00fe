package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The entity types each pod declared when it registered (name to role), kept with the pod while
 * the config names it, live or gone, so that a space no live pod hosts can be reported with its
 * types. Not saved: a restarted manager knows the types of the pods that register with it, and
 * reports a space whose pods all left before that by its role alone. Bounded by the config's pod
 * table. Loop-confined.
 */
@GuardedBy("loop")
final class PodTypes {

  private final Map<PodId, SortedMap<String, String>> byPod = new HashMap<>();

  /** {@code pod} declares {@code types}; pods the config no longer names are forgotten. */
  void put(PodId pod, SortedMap<String, String> types, ClusterConfig config) {
    byPod.keySet().removeIf(p -> !p.equals(pod) && config.pod(p).isEmpty());
    if (types.isEmpty()) {
      byPod.remove(pod);
    } else {
      byPod.put(pod, new TreeMap<>(types));
    }
  }

  /** The types declared on {@code role} by pods that {@code config} names, live or gone, by name. */
  SortedSet<String> onRole(ClusterConfig config, String role) {
    SortedSet<String> out = new TreeSet<>();
    byPod.forEach((pod, types) -> {
      if (config.pod(pod).isPresent()) {
        types.forEach((name, r) -> {
          if (r.equals(role)) {
            out.add(name);
          }
        });
      }
    });
    return out;
  }

  /** Every type declared by pods that {@code config} names, name to role. */
  SortedMap<String, String> all(ClusterConfig config) {
    SortedMap<String, String> out = new TreeMap<>();
    byPod.forEach((pod, types) -> {
      if (config.pod(pod).isPresent()) {
        out.putAll(types);
      }
    });
    return out;
  }
}

package io.atoll.server.kvdemo;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Who serves each of the 16384 slots, as one node's CLUSTER SLOTS says (the client's own view of
 * the cluster). Immutable.
 *
 * @param owners per slot, the client address ({@code host:port}) of its owner, or null
 */
record SlotMap(String[] owners) {

  static final int SLOTS = 16384;

  /** Reads CLUSTER SLOTS through {@code node}. */
  static SlotMap read(RedisClusterCommands<String, String> node) {
    String[] owners = new String[SLOTS];
    for (Object o : node.clusterSlots()) {
      List<?> range = (List<?>) o;
      int start = ((Number) range.get(0)).intValue();
      int end = ((Number) range.get(1)).intValue();
      List<?> master = (List<?>) range.get(2);
      String addr = master.get(0) + ":" + master.get(1);
      for (int s = start; s <= end && s < SLOTS; s++) {
        owners[s] = addr;
      }
    }
    return new SlotMap(owners);
  }

  /** Slots per owner, in address order. */
  Map<String, Integer> counts() {
    Map<String, Integer> c = new TreeMap<>();
    for (String o : owners) {
      if (o != null) {
        c.merge(o, 1, Integer::sum);
      }
    }
    return c;
  }

  /** Whether every slot is owned by one of {@code live}. */
  boolean allServedBy(java.util.Collection<String> live) {
    for (String o : owners) {
      if (o == null || !live.contains(o)) {
        return false;
      }
    }
    return true;
  }
}

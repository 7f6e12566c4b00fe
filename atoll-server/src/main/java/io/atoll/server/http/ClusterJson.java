package io.atoll.server.http;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A cluster config as JSON: active pods with their versions and shard counts, the epoch, owners. */
final class ClusterJson {
  /** Configs up to this many positions list every shard's owner (the dashboard's picture). */
  static final int MAX_OWNERS_LISTED = 16_384;

  private ClusterJson() {}

  /**
   * Writes the fields of {@code c} into the open object of {@code j}: {@code epoch}, {@code shards},
   * {@code unowned}, {@code gonePods}, {@code pods} (active, sorted by id: id, address, version,
   * epoch, shards) and {@code owners} (per shard the index into {@code pods}, -1 for none).
   */
  static void write(Json j, ClusterConfig c) {
    j.field("epoch", c.epoch()).field("shards", c.size()).field("unowned", c.unownedCount());
    List<PodEntry> pods = c.pods();
    long gone = pods.stream().filter(e -> e.status() == PodStatus.GONE).count();
    j.field("gonePods", gone);
    Map<PodId, Integer> owned = c.ownedCounts();
    Map<PodId, Integer> index = new HashMap<>();
    j.name("pods").beginArray();
    for (PodEntry e : pods) {
      if (e.status() != PodStatus.ACTIVE) {
        continue;
      }
      index.put(e.id(), index.size());
      j.beginObject().field("id", e.id().toString()).field("address", e.pod().address().toString())
          .field("version", e.pod().version().toString()).field("epoch", e.epoch())
          .field("shards", owned.getOrDefault(e.id(), 0)).endObject();
    }
    j.endArray();
    if (c.size() <= MAX_OWNERS_LISTED) {
      j.name("owners").beginArray();
      for (int s = 0; s < c.size(); s++) {
        PodId o = c.activeOwner(s);
        j.value(o == null ? -1 : index.getOrDefault(o, -1));
      }
      j.endArray();
    }
  }
}

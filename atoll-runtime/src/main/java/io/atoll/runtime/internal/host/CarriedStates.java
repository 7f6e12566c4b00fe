package io.atoll.runtime.internal.host;

import io.atoll.core.spi.StoredState;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The durable entities' states that shards' previous owners carried to this pod in hand-offs,
 * until the first activation of each entity under the claim the hand-off led to takes its own.
 * Per shard, only the newest hand-off's are kept; all are bounded ({@link #MAX_BYTES}, counting
 * each entry's id, type and overhead as well as its state) and dropped after
 * {@link #KEEP_NANOS} if no activation took them (the entity was not used, or the shard came here
 * under another claim: its next activation reads the store). Thread-safe.
 */
final class CarriedStates {

  /** How long carried states wait for their activations. */
  static final long KEEP_NANOS = 60_000_000_000L;

  /** The most bytes of carried state this pod keeps at once, entries' overhead included. */
  static final long MAX_BYTES = 64L << 20;

  /** What an entry costs besides its state and its strings: the key, the record, the map's node. */
  static final int ENTRY_OVERHEAD = 96;

  private record Key(String type, String id) {}

  /** One shard's carried states, for activations under the claim at {@code epoch}. */
  private static final class Shard {
    final long epoch;
    final long expiresAt;
    final Map<Key, StoredState> states = new HashMap<>();
    long bytes;

    Shard(long epoch, long expiresAt) {
      this.epoch = epoch;
      this.expiresAt = expiresAt;
    }
  }

  private final Map<Integer, Shard> shards = new HashMap<>();
  private long bytes;
  private int entries;

  /** What keeping {@code l} costs. */
  static long cost(String type, String id, StoredState state) {
    return ENTRY_OVERHEAD + 2L * (type.length() + id.length()) + (state.bytes() == null ? 0 : state.bytes().length);
  }

  /**
   * Keeps {@code left} for the activations of {@code shard} under the claim at {@code epoch},
   * replacing what an older hand-off of the shard left. States beyond the bound are not kept.
   *
   * @return how many were kept
   */
  synchronized int keep(int shard, long epoch, List<Left> left, long now) {
    expire(now);
    Shard s = shards.get(shard);
    if (s != null && s.epoch > epoch) {
      return 0; // a newer hand-off's states are here already
    }
    if (s != null && s.epoch < epoch) {
      drop(shard);
      s = null;
    }
    if (s == null) {
      s = new Shard(epoch, now + KEEP_NANOS);
      shards.put(shard, s);
    }
    int kept = 0;
    for (Left l : left) {
      long size = cost(l.type(), l.id(), l.state());
      if (bytes + size > MAX_BYTES) {
        break;
      }
      StoredState before = s.states.put(new Key(l.type(), l.id()), l.state());
      long freed = before == null ? 0 : cost(l.type(), l.id(), before);
      s.bytes += size - freed;
      bytes += size - freed;
      entries += before == null ? 1 : 0;
      kept++;
    }
    if (s.states.isEmpty()) {
      shards.remove(shard);
    }
    return kept;
  }

  /** Takes the state carried for {@code type/id} of {@code shard} under the claim at {@code epoch}; null if none. */
  synchronized StoredState take(int shard, long epoch, String type, String id, long now) {
    Shard s = shards.get(shard);
    if (s == null || s.epoch != epoch) {
      return null;
    }
    if (now - s.expiresAt >= 0) {
      drop(shard); // only this shard's: the timer sweeps the rest, off the activation's path
      return null;
    }
    StoredState c = s.states.remove(new Key(type, id));
    if (c != null) {
      long size = cost(type, id, c);
      s.bytes -= size;
      bytes -= size;
      entries--;
    }
    if (s.states.isEmpty()) {
      shards.remove(shard);
    }
    return c;
  }

  /** Drops what was carried for {@code shard}. */
  synchronized void drop(int shard) {
    Shard s = shards.remove(shard);
    if (s != null) {
      bytes -= s.bytes;
      entries -= s.states.size();
    }
  }

  /** Drops what waited past its time; the pod's timer calls it too, so nothing outlives it for long. */
  synchronized void expire(long now) {
    for (Iterator<Map.Entry<Integer, Shard>> it = shards.entrySet().iterator(); it.hasNext();) {
      Shard s = it.next().getValue();
      if (now - s.expiresAt >= 0) {
        bytes -= s.bytes;
        entries -= s.states.size();
        it.remove();
      }
    }
  }

  /** How many states wait for their activations. */
  synchronized int size() {
    return entries;
  }

  /** How many bytes they cost. */
  synchronized long bytes() {
    return bytes;
  }
}

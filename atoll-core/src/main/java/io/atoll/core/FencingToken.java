package io.atoll.core;

/**
 * Proof of the ownership under which an entity instance runs: its shard and the epoch at which the
 * shard was assigned to the pod hosting it. A later owner of the same shard always holds a
 * strictly greater epoch, so a store that remembers the greatest token it has seen for an entity
 * can refuse writes from a stale instance.
 *
 * @param shard the shard id
 * @param epoch the epoch of the assignment the instance runs under
 */
public record FencingToken(int shard, long epoch) implements Comparable<FencingToken> {

  @Override
  public int compareTo(FencingToken other) {
    return Long.compare(epoch, other.epoch);
  }
}

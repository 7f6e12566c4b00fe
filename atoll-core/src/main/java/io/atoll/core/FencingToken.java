package io.atoll.core;

/**
 * Proof of the ownership under which an entity instance runs: its shard, the epoch at which the
 * shard was assigned to the pod hosting it, and the pod's lease generation under that claim.
 * Tokens order by epoch, then by generation. A later owner of the same shard always holds a
 * strictly greater epoch; a pod that serves a shard again under the same claim after its lease
 * ran out (a late renewal) starts a new lease generation. So every later activation of an entity
 * carries a strictly greater token, and a store that remembers the greatest token it has seen for
 * an entity can refuse writes from a stale instance.
 *
 * @param shard the shard id
 * @param epoch the epoch of the assignment the instance runs under
 * @param generation how many times the hosting pod's lease was granted anew after running out
 *     (0 until the first lapse); only meaningful between tokens of one epoch
 */
public record FencingToken(int shard, long epoch, long generation) implements Comparable<FencingToken> {

  /** A token of the first lease generation. */
  public FencingToken(int shard, long epoch) {
    this(shard, epoch, 0);
  }

  @Override
  public int compareTo(FencingToken other) {
    int c = Long.compare(epoch, other.epoch);
    return c != 0 ? c : Long.compare(generation, other.generation);
  }
}

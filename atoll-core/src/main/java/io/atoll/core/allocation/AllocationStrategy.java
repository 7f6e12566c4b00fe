package io.atoll.core.allocation;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Decides where shards should live: a pure function of the current assignments, the live pods
 * with their versions, and the limits. Implementations hold no state and do no I/O, so a round can
 * be replayed and property-tested; randomness comes only from the given source.
 *
 * <p>Every implementation guarantees: each shard appears in at most one move; a move's
 * {@code from} is the shard's current live owner (or null); {@code to} is one of the given pods
 * and runs the newest version among them; moves of owned shards respect the limits.
 */
public interface AllocationStrategy {

  /**
   * Decides one round.
   *
   * @param config the current assignments; position {@code s - 1} holds shard {@code s}. Owners
   *     not among {@code pods} count as no owner.
   * @param pods the live pods that may own shards
   * @param limits how many owned shards may move in this round
   * @param random the only source of randomness
   * @return the moves, in the order they were decided; empty when nothing should move
   */
  List<Move> decide(ClusterConfig config, List<Pod> pods, RebalanceLimits limits, RandomGenerator random);

  /** The version-aware strategy of the Shard Manager seed (the default). */
  static AllocationStrategy versionAware() {
    return new VersionAwareStrategy();
  }

  /** The least-shard strategy in the spirit of Akka's {@code LeastShardAllocationStrategy}. */
  static AllocationStrategy leastShard() {
    return new LeastShardStrategy();
  }
}

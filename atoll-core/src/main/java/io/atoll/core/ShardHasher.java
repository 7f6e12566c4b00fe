package io.atoll.core;

/**
 * Maps an entity id to a shard id in {@code 1..numberOfShards}.
 *
 * <p>Implementations must be pure and deterministic: every pod of a cluster must compute the same
 * shard for the same id, in every process and across restarts. They are called on the hot path of
 * every message, so they must not allocate or block. Thread-safe.
 */
@FunctionalInterface
public interface ShardHasher {

  /**
   * The default rule of the Shard Manager seed: {@code abs(entityId.hashCode() % numberOfShards) +
   * 1}. {@link String#hashCode()} is specified by the JLS, so it is stable across JVMs.
   */
  ShardHasher DEFAULT = (entityId, numberOfShards) ->
      Math.abs(entityId.hashCode() % numberOfShards) + 1;

  /**
   * Returns the shard of {@code entityId}.
   *
   * @param entityId the entity id, never null
   * @param numberOfShards the number of shards of the entity's type, at least 1
   * @return a shard id in {@code 1..numberOfShards}
   */
  int shardOf(String entityId, int numberOfShards);
}

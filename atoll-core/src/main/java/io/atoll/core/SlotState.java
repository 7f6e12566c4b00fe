package io.atoll.core;

/**
 * The state of a shard or slot in a {@link ClusterConfig}, after Garnet's slot states.
 */
public enum SlotState {
  /** No pod serves it; requests wait (shards) or fail with CLUSTERDOWN (slots). */
  OFFLINE,
  /** Its owner serves it. */
  STABLE,
  /** Its owner serves it but is moving it to the peer; keys already moved are asked there. */
  MIGRATING,
  /** It is moving from the peer to its owner-to-be, which serves only asked requests. */
  IMPORTING;

  private static final SlotState[] VALUES = values();

  /** The state with the given ordinal, for decoders. */
  static SlotState ofOrdinal(int ordinal) {
    if (ordinal < 0 || ordinal >= VALUES.length) {
      throw new MalformedConfigException("slot state: " + ordinal + " (expected: 0.." + (VALUES.length - 1) + ")");
    }
    return VALUES[ordinal];
  }

  /** Whether a claim in this state names a peer pod (the migration target or source). */
  boolean hasPeer() {
    return this == MIGRATING || this == IMPORTING;
  }
}

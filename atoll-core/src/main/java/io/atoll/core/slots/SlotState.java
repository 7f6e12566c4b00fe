package io.atoll.core.slots;

/**
 * The state of a shard or slot in a cluster config, after Garnet's slot states.
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

  /** Whether a claim in this state names a peer pod (the migration target or source). */
  public boolean hasPeer() {
    return this == MIGRATING || this == IMPORTING;
  }
}

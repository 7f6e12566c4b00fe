package io.atoll.core;

/** Whether a pod listed in a {@link ClusterConfig} is a member or has left. */
public enum PodStatus {
  /** Registered and serving (or about to serve) shards. */
  ACTIVE,
  /** Gone for good: it unregistered or was found dead. Kept as a tombstone so gossip cannot revive it. */
  GONE;

  private static final PodStatus[] VALUES = values();

  static PodStatus ofOrdinal(int ordinal) {
    if (ordinal < 0 || ordinal >= VALUES.length) {
      throw new MalformedConfigException("pod status: " + ordinal + " (expected: 0.." + (VALUES.length - 1) + ")");
    }
    return VALUES[ordinal];
  }
}

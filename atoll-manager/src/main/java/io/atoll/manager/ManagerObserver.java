package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;

/**
 * Hears what the shard manager does: for metrics, dashboards and tests. Called on the manager's
 * loop; implementations must be quick, must not block and must not throw.
 */
public interface ManagerObserver {

  /** Hears nothing. */
  ManagerObserver NONE = new ManagerObserver() {};

  /** A config was saved and installed (a pod joined or left, a round moved shards, a start). */
  default void configInstalled(ClusterConfig config) {}

  /** A pod asked to renew its lease: {@code granted}, or refused (unknown, gone or dying). */
  default void leaseRenewal(PodId pod, boolean granted) {}

  /** A pod was marked GONE: it left ({@code died} false) or its lease ran out or it was proven gone. */
  default void podGone(PodId pod, boolean died) {}

  /** A rebalance round began. */
  default void roundStarted() {}

  /** The round begun last ended: it moved {@code moved} shards; {@code failed} if a step failed. */
  default void roundFinished(int moved, boolean failed) {}
}

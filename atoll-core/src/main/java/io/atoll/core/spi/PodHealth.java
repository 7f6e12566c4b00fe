package io.atoll.core.spi;

import io.atoll.core.Pod;

/**
 * A source of truth about whether a pod is gone, such as Kubernetes. The shard manager re-homes a
 * silent pod's shards after its lease has run out; a health source may shorten that wait, but
 * only by proving the pod is gone.
 *
 * <p>Implementations are thread-safe and may block briefly (they are called off the manager's
 * serial executor); they never throw — an unreachable source answers {@link Verdict#UNKNOWN}.
 */
@FunctionalInterface
public interface PodHealth {

  /** What a health source can say about a pod. */
  enum Verdict {
    /** The source knows the pod runs. */
    ALIVE,
    /** The source proves the pod's process is gone: its shards may move at once. */
    GONE,
    /** The source cannot tell; only the lease decides. */
    UNKNOWN
  }

  /** The default: no source, the lease alone decides. */
  PodHealth LEASE_ONLY = pod -> Verdict.UNKNOWN;

  /** Checks one pod. */
  Verdict check(Pod pod);
}

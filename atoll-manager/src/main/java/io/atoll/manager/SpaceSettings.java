package io.atoll.manager;

import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.allocation.SpaceAllocation;

/**
 * One shard space's own allocation settings: what is set here replaces the manager's global
 * {@link ManagerSettings#limits() limits} and {@link ManagerSettings#strategy() strategy} for the
 * space of that role; what is null falls back to them, each part on its own (a space may set only
 * its absolute limit and keep the global fraction and strategy). Immutable.
 *
 * @param maxMoves at most this many of the space's owned shards move in one round (the absolute
 *     limit), at least 1; null for the global one
 * @param maxMovesFraction at most this fraction of the space's shards move in one round (the
 *     relative limit), in {@code (0, 1]}; null for the global one
 * @param strategy the space's allocation strategy; null for the global one
 */
public record SpaceSettings(Integer maxMoves, Double maxMovesFraction, AllocationStrategy strategy) {

  /** Validates what is set, naming the value and its expected form. */
  public SpaceSettings {
    if (maxMoves == null && maxMovesFraction == null && strategy == null) {
      throw new IllegalArgumentException("space settings: nothing set (expected: max-moves, max-moves-fraction"
          + " or strategy)");
    }
    if (maxMoves != null && maxMoves < 1) {
      throw new IllegalArgumentException("max-moves: " + maxMoves + " (expected: >= 1)");
    }
    if (maxMovesFraction != null && !(maxMovesFraction > 0 && maxMovesFraction <= 1)) {
      throw new IllegalArgumentException("max-moves-fraction: " + maxMovesFraction + " (expected: > 0 and <= 1)");
    }
  }

  /** Only an absolute limit of its own. */
  public static SpaceSettings maxMoves(int n) {
    return new SpaceSettings(n, null, null);
  }

  /** The space's allocation: what is set here, the rest from {@code limits} and {@code global}. */
  public SpaceAllocation resolve(RebalanceLimits limits, AllocationStrategy global) {
    return new SpaceAllocation(strategy != null ? strategy : global, new RebalanceLimits(
        maxMoves != null ? maxMoves : limits.absolute(),
        maxMovesFraction != null ? maxMovesFraction : limits.relative()));
  }
}

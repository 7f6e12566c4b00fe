package io.atoll.core.allocation;

import java.util.Objects;

/**
 * How one shard space is allocated: its strategy and its per-round limits. The limits count
 * the space's own shards only ({@link RebalanceLimits#movesPerRound} of the space's size), since
 * {@link SpacedAllocation} runs the strategy on each space alone.
 *
 * @param strategy the space's allocation strategy
 * @param limits how many of the space's owned shards one round may move
 */
public record SpaceAllocation(AllocationStrategy strategy, RebalanceLimits limits) {

  /** Checks that both are given. */
  public SpaceAllocation {
    Objects.requireNonNull(strategy, "strategy");
    Objects.requireNonNull(limits, "limits");
  }

  /** The same strategy with other limits (e.g. {@link RebalanceLimits#UNLIMITED}, to count what is left to do). */
  public SpaceAllocation withLimits(RebalanceLimits l) {
    return new SpaceAllocation(strategy, l);
  }
}

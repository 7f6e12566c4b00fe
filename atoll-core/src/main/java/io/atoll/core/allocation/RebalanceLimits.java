package io.atoll.core.allocation;

/**
 * How many already-owned shards one allocation round may move. Shards without a live owner are
 * always allocated at once: holding them back would only hold messages back.
 *
 * @param absolute at most this many moves per round, at least 1
 * @param relative at most this fraction of all shards per round, in {@code (0, 1]}
 */
public record RebalanceLimits(int absolute, double relative) {

  /** Akka's defaults: 20 shards, or 10% of them, whichever is fewer. */
  public static final RebalanceLimits DEFAULT = new RebalanceLimits(20, 0.1);
  /** No limit: a round may move every shard. */
  public static final RebalanceLimits UNLIMITED = new RebalanceLimits(Integer.MAX_VALUE, 1.0);

  /** Validates the numbers. */
  public RebalanceLimits {
    if (absolute < 1) {
      throw new IllegalArgumentException("absolute limit: " + absolute + " (expected: >= 1)");
    }
    if (!(relative > 0 && relative <= 1)) {
      throw new IllegalArgumentException("relative limit: " + relative + " (expected: > 0 and <= 1)");
    }
  }

  /** The moves allowed in one round for {@code numberOfShards} shards: at least 1. */
  public int movesPerRound(int numberOfShards) {
    return Math.min(absolute, Math.max(1, (int) (relative * numberOfShards)));
  }
}

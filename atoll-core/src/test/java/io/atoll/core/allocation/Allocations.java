package io.atoll.core.allocation;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import java.util.BitSet;
import java.util.List;

/**
 * A strict applier of a strategy's moves, for tests only: it throws on any move a strategy must
 * never produce, so the allocation properties check the strategies' promises. The production
 * applier, which re-checks each move against the config installed by then and tolerates what
 * changed meanwhile, is the shard manager's {@code Rounds.apply}.
 */
final class Allocations {

  private Allocations() {}

  /**
   * Returns {@code config} with every move applied as a STABLE claim at {@code epoch}.
   *
   * @throws IllegalArgumentException if a shard is moved twice, a move's {@code from} is not the
   *     shard's current owner, a target pod is not listed, or {@code epoch} is not greater than the
   *     claim it replaces
   */
  static ClusterConfig apply(ClusterConfig config, List<Move> moves, long epoch) {
    ClusterConfig.Builder b = config.toBuilder();
    BitSet seen = new BitSet(config.size() + 1);
    for (Move m : moves) {
      if (m.shard() > config.size()) {
        throw new IllegalArgumentException("move: shard " + m.shard() + " (expected: 1.." + config.size() + ")");
      }
      if (seen.get(m.shard())) {
        throw new IllegalArgumentException("move: shard " + m.shard() + " moved twice in one round");
      }
      seen.set(m.shard());
      int position = m.shard() - 1;
      if (m.from() != null && !m.from().equals(config.owner(position))) {
        throw new IllegalArgumentException("move of shard " + m.shard() + ": from " + m.from()
            + " (expected: the current owner " + config.owner(position) + ")");
      }
      if (epoch <= config.epoch(position)) {
        throw new IllegalArgumentException("move of shard " + m.shard() + ": epoch " + epoch
            + " (expected: > " + config.epoch(position) + ")");
      }
      b.claim(position, Claim.stable(m.to(), epoch));
    }
    return b.build();
  }
}

package io.atoll.core.allocation;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import java.util.BitSet;
import java.util.List;

/** Applies allocation decisions to a config. Pure; thread-safe. */
public final class Allocations {

  private Allocations() {}

  /**
   * Returns {@code config} with every move applied as a STABLE claim at {@code epoch}.
   *
   * @throws IllegalArgumentException if a shard is moved twice, a move's {@code from} is not the
   *     shard's current owner, a target pod is not listed, or {@code epoch} is not greater than the
   *     claim it replaces
   */
  public static ClusterConfig apply(ClusterConfig config, List<Move> moves, long epoch) {
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

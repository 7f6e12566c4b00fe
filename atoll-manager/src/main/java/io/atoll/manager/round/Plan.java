package io.atoll.manager.round;

import io.atoll.core.PodId;
import io.atoll.core.allocation.Move;
import java.util.List;
import java.util.Set;

/**
 * A planned round: the strategy's moves and the pods that must answer a ping before any of them
 * is made.
 *
 * @param moves the moves, in the strategy's order; each shard at most once
 * @param involved every pod a move takes a shard from or gives one to, in id order
 */
public record Plan(List<Move> moves, Set<PodId> involved) {

  /** Copies the parts. */
  public Plan {
    moves = List.copyOf(moves);
    involved = java.util.Collections.unmodifiableSet(new java.util.TreeSet<>(involved));
  }

  /** Whether the round has nothing to do. */
  public boolean isEmpty() {
    return moves.isEmpty();
  }
}

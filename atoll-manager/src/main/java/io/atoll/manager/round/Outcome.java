package io.atoll.manager.round;

import io.atoll.core.PodId;
import io.atoll.core.allocation.Move;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a round may write once the old owners answered their unassign.
 *
 * @param moves the moves to make: allocations, and moves whose old owner released the shard
 * @param regrants shards whose old owner did not answer: it may have released them, so they are
 *     handed back to it at the new epoch (a pod that released a shard waits for a claim at least
 *     as new as the release)
 * @param failed the old owners whose unassign failed
 */
public record Outcome(List<Move> moves, Map<Integer, PodId> regrants, Set<PodId> failed) {

  /** Copies the parts. */
  public Outcome {
    moves = List.copyOf(moves);
    regrants = Map.copyOf(regrants);
    failed = Set.copyOf(failed);
  }
}

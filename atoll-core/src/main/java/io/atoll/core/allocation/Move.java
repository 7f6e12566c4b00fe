package io.atoll.core.allocation;

import io.atoll.core.PodId;
import java.util.Objects;

/**
 * One decision of an allocation round: give {@code shard} to {@code to}, taking it from
 * {@code from} (null when nobody live owns it).
 *
 * @param shard the shard id, {@code 1..numberOfShards}
 * @param from the live pod that owns it now, or null
 * @param to the pod that will own it; never equal to {@code from}
 */
public record Move(int shard, PodId from, PodId to) {

  /** Validates the parts. */
  public Move {
    Objects.requireNonNull(to, "to");
    if (shard < 1) {
      throw new IllegalArgumentException("shard: " + shard + " (expected: >= 1)");
    }
    if (to.equals(from)) {
      throw new IllegalArgumentException("move of shard " + shard + " from " + from + " to itself");
    }
  }

  /** Whether the shard had no live owner before this move. */
  public boolean isAllocation() {
    return from == null;
  }
}

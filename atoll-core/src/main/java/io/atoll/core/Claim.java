package io.atoll.core;

import io.atoll.core.slots.SlotState;
import java.util.Objects;

/**
 * Who owns one shard or slot, in which state, decided at which epoch.
 *
 * @param owner the owning pod, or null when nobody owns it
 * @param state the state; {@link SlotState#OFFLINE} exactly when owner is null
 * @param peer the migration target (MIGRATING) or source (IMPORTING); in STABLE, the owner the
 *     position had before this owner, when the writer records it (the shard manager does for Atoll
 *     KV's slots: a node that holds keys of a hand-off needs to know whose the slot was before it
 *     came to it), else null; null when OFFLINE
 * @param epoch the epoch at which this claim was made
 */
public record Claim(PodId owner, SlotState state, PodId peer, long epoch) {

  /** The claim of a shard nobody has ever owned. */
  public static final Claim NONE = new Claim(null, SlotState.OFFLINE, null, 0);

  /** Validates that the parts fit together. */
  public Claim {
    Objects.requireNonNull(state, "state");
    if (epoch < 0) {
      throw new IllegalArgumentException("epoch: " + epoch + " (expected: >= 0)");
    }
    if ((owner == null) != (state == SlotState.OFFLINE)) {
      throw new IllegalArgumentException(
          "state: " + state + " with owner " + owner + " (expected: OFFLINE exactly when there is no owner)");
    }
    if (state.hasPeer() && peer == null) {
      throw new IllegalArgumentException(
          "peer: null in state " + state + " (expected: a peer in MIGRATING and IMPORTING)");
    }
    if (state == SlotState.OFFLINE && peer != null) {
      throw new IllegalArgumentException("peer: " + peer + " in state OFFLINE (expected: none without an owner)");
    }
  }

  /**
   * The owner before this one, as the writer of a STABLE claim recorded it ({@link #stable(PodId,
   * PodId, long)}), or null if it recorded none (it may not have known, or the position had none).
   */
  public PodId previousOwner() {
    return state == SlotState.STABLE ? peer : null;
  }

  /** A STABLE claim of {@code owner} at {@code epoch}. */
  public static Claim stable(PodId owner, long epoch) {
    return new Claim(Objects.requireNonNull(owner, "owner"), SlotState.STABLE, null, epoch);
  }

  /**
   * A STABLE claim of {@code owner} at {@code epoch} that records {@code previous}, the owner the
   * position had before (null: none recorded).
   */
  public static Claim stable(PodId owner, PodId previous, long epoch) {
    return new Claim(Objects.requireNonNull(owner, "owner"), SlotState.STABLE, previous, epoch);
  }

  /** An OFFLINE claim (nobody owns it) at {@code epoch}. */
  public static Claim offline(long epoch) {
    return new Claim(null, SlotState.OFFLINE, null, epoch);
  }
}

package io.atoll.runtime;

/**
 * Not API: the last saved state of a durable entity, carried in a planned hand-off from its shard's
 * previous owner to the next, so that the next owner's first activation starts from it without
 * reading the store. The two interfaces are the seam between {@link Durable}'s activations and the
 * pod under {@code io.atoll.runtime.internal}, which implements {@link Arriving} and looks for
 * {@link Leaving}; may change in any release.
 *
 * @param revision the revision last read or written (0: nothing was ever saved)
 * @param bytes the state at that revision; null for revision 0
 */
public record CarriedState(long revision, byte[] bytes) {

  /** Checks that revision 0 goes with no bytes, and every other revision with some. */
  public CarriedState {
    if (revision < 0 || (revision == 0) != (bytes == null)) {
      throw new IllegalArgumentException("carried state: revision " + revision + " with "
          + (bytes == null ? "no bytes" : bytes.length + " bytes") + " (expected: revision 0 without bytes, or > 0 with)");
    }
  }

  /** Not API: an activation's behaviour that can say what it leaves behind when its shard is handed off. */
  public interface Leaving {

    /**
     * The state this activation last read or saved, exactly as the store holds it now; null if
     * it cannot be sure (a save failed or its outcome is unknown, a state was set and not saved).
     * Called once, on the activation's thread, after its last message.
     */
    CarriedState leave();
  }

  /** Not API: an activation's context that may hold the state the shard's previous owner left. */
  public interface Arriving {

    /**
     * The state carried here for this entity by the hand-off that gave this pod the shard, under
     * the claim this activation runs under; null if none. Taken once: a later activation reads the
     * store.
     */
    CarriedState takeCarried();
  }
}

package io.atoll.runtime;

import io.atoll.core.spi.StoredState;

/**
 * Not API: how a durable entity's last saved state is carried in a planned hand-off from its
 * shard's previous owner to the next, so that the next owner's first activation starts from it
 * without reading the store. The seam between {@link Durable}'s activations and the pod under
 * {@code io.atoll.runtime.internal}, which implements {@link Arriving} and looks for
 * {@link Leaving}; may change in any release. The state is a {@link StoredState}: a revision and
 * the bytes a store holds at it.
 */
public final class Carrying {

  private Carrying() {}

  /** Not API: an activation's behaviour that can say what it leaves behind when its shard is handed off. */
  public interface Leaving {

    /**
     * The state this activation last read or saved, exactly as the store holds it now; null if
     * it cannot be sure (a save failed or its outcome is unknown, a state was set and not saved).
     * Called once, on the activation's thread, after its last message.
     */
    StoredState leave();
  }

  /** Not API: an activation's context that may hold the state the shard's previous owner left. */
  public interface Arriving {

    /**
     * The state carried here for this entity by the hand-off that gave this pod the shard, under
     * the claim this activation runs under; null if none. Taken once: a later activation reads the
     * store.
     */
    StoredState takeCarried();
  }
}

package io.atoll.core.spi;

/** A {@link StateStore} refused or could not do a claim or a save. The message names the entity. */
public final class StateStoreException extends Exception {

  /** Why. */
  public enum Reason {
    /** An activation with a greater fencing token owns the entity now: this one must stop. */
    FENCED,
    /** The stored revision is not the one the writer read: its state is out of date. */
    CONFLICT,
    /** The store did not answer, or failed: the call may or may not have taken effect. */
    UNAVAILABLE
  }

  private final Reason reason;

  /** With a reason and a message naming the entity and what happened. */
  public StateStoreException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  /** With a reason, a message and the cause. */
  public StateStoreException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /** Why the call failed. */
  public Reason reason() {
    return reason;
  }
}

package io.atoll.runtime.internal.host;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Reply;

/**
 * One message in an entity's mailbox: a local send ({@link Pending}), a message from another pod
 * ({@link InboundDelivery}), or a stop marker. Mailboxes link deliveries through {@link #next}.
 */
public interface Delivery {

  /** The message to hand to the entity. */
  Object message();

  /** Whether the sender waits for an answer through {@link #reply()}. */
  boolean isAsk();

  /** When the sender stops waiting, in ticker nanoseconds. */
  long deadlineNanos();

  /** No time known: see {@link #queuedAt()}. */
  long NOT_QUEUED = Long.MIN_VALUE;

  /**
   * When it entered its entity's mailbox, in ticker nanoseconds ({@link #NOT_QUEUED} if never
   * set): the pod's admission measures how long messages wait from there.
   */
  default long queuedAt() {
    return NOT_QUEUED;
  }

  /** Sets {@link #queuedAt()}; called by the host as it hands the delivery to its entity. */
  default void queuedAt(long now) {}

  /** Whether nobody waits for this any more (answered, failed or timed out). */
  boolean isDone();

  /**
   * A drain takes this delivery to handle it: false if nobody waits for it any more. After a true
   * answer it can no longer expire in its mailbox (see {@link InboundDelivery#expire}), so a
   * message answered TIMEOUT was surely not handled.
   */
  default boolean begin() {
    return !isDone();
  }

  /** The entity's handler returned: acknowledges a tell; an ask waits for its answer. */
  void handled();

  /**
   * As {@link #handled()}, but the sender's bookkeeping may join {@code open} (null if none), the
   * batch of this drain's turn, or a new batch; returns the batch now open. The caller flushes
   * what it returns (see {@link Deferred}). The acknowledgement itself is never deferred.
   */
  default Deferred handled(Deferred open) {
    handled();
    return open;
  }

  /** The message failed; the sender gets {@code e}. */
  void failed(DeliveryException e);

  /** Not handled here (the shard is no longer served): the sender retries where it lives now. */
  void bounce();

  /** The reply handle of this delivery. */
  Reply<Object> reply();

  /** The next delivery in the mailbox (guarded by the mailbox's instance). */
  Delivery next();

  /** Links the next delivery in the mailbox (guarded by the mailbox's instance). */
  void next(Delivery d);
}

package io.atoll.runtime;

/**
 * A message could not be delivered or handled. {@link #reason()} says which case it is; the
 * message says which entity, where, and what to do about it.
 */
public final class DeliveryException extends RuntimeException {

  /** Why a delivery failed. */
  public enum Reason {
    /** No answer within the timeout; the message names what it was waiting for. */
    TIMEOUT,
    /** The shard's buffer was full while its owner was unknown or moving; nothing was sent. */
    BUFFER_FULL,
    /** Too many messages of this pod are in flight; nothing was sent. */
    TOO_MANY_IN_FLIGHT,
    /**
     * The owning pod refused this message unhandled, rather than let it wait past its timeout:
     * it had as many messages waiting for their entities as it allows ({@code maxQueued}), or it
     * expected the message to wait longer than it allows ({@code maxQueueTime}) or to miss its
     * deadline. {@link #retryAfter()} says how long the pod expected its queue to need. Send less,
     * or add pods.
     */
    OVERLOADED,
    /** The encoded message is larger than the limit; nothing was sent. */
    MESSAGE_TOO_LARGE,
    /** The message (or an answer) could not be encoded or decoded. */
    CODEC,
    /** The receiving pod has no such entity type. */
    UNKNOWN_ENTITY_TYPE,
    /** The entity's factory or handler threw, or it failed the reply. */
    ENTITY_FAILED,
    /** The receiver refused the request as malformed. */
    BAD_REQUEST,
    /** The connection to the owning pod broke after the message was sent: it may or may not have been handled. */
    OUTCOME_UNKNOWN,
    /** This sharding is closing or closed. */
    SHUT_DOWN
  }

  private final Reason reason;
  private final java.time.Duration retryAfter;

  /** A failure for one reason, with a message naming the entity, the place and the remedy. */
  public DeliveryException(Reason reason, String message) {
    super(message);
    this.reason = reason;
    this.retryAfter = java.time.Duration.ZERO;
  }

  /**
   * A refusal ({@link Reason#OVERLOADED}) with a hint: the refusing pod expected its queue to need
   * about {@code retryAfter} (zero or negative: no estimate). It carries no stack trace: it is made
   * by a pod for its sender, often, under load, and the message says where and why.
   */
  public DeliveryException(Reason reason, String message, java.time.Duration retryAfter) {
    super(message, null, true, false);
    this.reason = reason;
    this.retryAfter = retryAfter == null || retryAfter.isNegative() ? java.time.Duration.ZERO : retryAfter;
  }

  /** The same, with a cause. */
  public DeliveryException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
    this.retryAfter = java.time.Duration.ZERO;
  }

  /** Why the delivery failed. */
  public Reason reason() {
    return reason;
  }

  /**
   * For an {@link Reason#OVERLOADED} refusal, how long the refusing pod expected its queue to need
   * before a retry is likely to be taken; {@link java.time.Duration#ZERO} when it gave no estimate.
   * A sender that retries should wait at least this long (with jitter), or send less.
   */
  public java.time.Duration retryAfter() {
    return retryAfter;
  }
}

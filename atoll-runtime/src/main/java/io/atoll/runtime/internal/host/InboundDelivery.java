package io.atoll.runtime.internal.host;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Reply;
import io.atoll.runtime.internal.util.GuardedBy;

/**
 * A message from another pod, in a local mailbox. Its answer (or acknowledgement, or refusal) goes
 * back on the stream it came by, matched by the envelope id. Only the first answer counts.
 */
public final class InboundDelivery implements Delivery, Reply<Object> {

  final InboundStream stream;
  final long id;
  final boolean ask;
  final long deadlineNanos;
  final TypeRuntime type;
  final int shard;
  final String entityId;
  Object message;
  private final int bytes;
  /** Whether it left the stream's backlog (its mailbox, or expired in it). */
  @GuardedBy("this")
  private boolean left;
  /** Whether a drain took it to handle it: from then on it cannot expire. */
  @GuardedBy("this")
  private boolean taken;
  private volatile boolean answered;
  private Delivery next;
  private long queuedAt = NOT_QUEUED;
  /** Links of the stream's list of outstanding deliveries (guarded by that list). */
  InboundDelivery prevOut;
  InboundDelivery nextOut;

  InboundDelivery(InboundStream stream, long id, boolean ask, long deadlineNanos, TypeRuntime type, int shard,
      String entityId, int bytes) {
    this.stream = stream;
    this.bytes = bytes;
    this.id = id;
    this.ask = ask;
    this.deadlineNanos = deadlineNanos;
    this.type = type;
    this.shard = shard;
    this.entityId = entityId;
  }

  /** Leaves the stream's backlog once, whichever way it leaves its mailbox. */
  private void leave() {
    synchronized (this) {
      if (left) {
        return;
      }
      left = true;
    }
    stream.left(this, bytes);
  }

  @Override
  public boolean begin() {
    synchronized (this) {
      if (answered || stream.isClosed()) {
        return false;
      }
      taken = true;
      return true;
    }
  }

  /**
   * Answers TIMEOUT and leaves the stream's backlog if its deadline passed at {@code now} while it
   * still waits in its mailbox (no drain took it): an entity blocked in a handler then holds no
   * room of the stream. It stays linked in the mailbox, answered, until the drain skips it.
   */
  boolean expire(long now) {
    if (now - deadlineNanos < 0) {
      return false;
    }
    synchronized (this) {
      if (taken || answered) {
        return false;
      }
      answered = true;
    }
    leave();
    stream.failure(id, DeliveryException.Reason.TIMEOUT, "message to " + type.name + "/" + entityId
        + " expired in its mailbox before it was handled (its entity is busy or blocked)");
    return true;
  }

  private boolean claim() {
    if (answered) {
      return false;
    }
    synchronized (this) {
      if (answered) {
        return false;
      }
      answered = true;
      return true;
    }
  }

  @Override
  public Object message() {
    return message;
  }

  @Override
  public long queuedAt() {
    return queuedAt;
  }

  @Override
  public void queuedAt(long now) {
    queuedAt = now;
  }

  @Override
  public boolean isAsk() {
    return ask;
  }

  @Override
  public long deadlineNanos() {
    return deadlineNanos;
  }

  @Override
  public boolean isDone() {
    return answered || stream.isClosed();
  }

  @Override
  public void handled() {
    leave();
    if (!ask && claim()) {
      stream.accepted(id);
    }
  }

  @Override
  public void failed(DeliveryException e) {
    leave();
    if (claim()) {
      stream.failure(id, e.reason(), e.getMessage(), e.retryAfter().toMillis());
    }
  }

  @Override
  public void bounce() {
    leave();
    if (claim()) {
      stream.notOwner(id, shard);
    }
  }

  @Override
  public Reply<Object> reply() {
    return this;
  }

  @Override
  public void send(Object value) {
    if (!claim()) {
      return;
    }
    byte[] bytes;
    try {
      bytes = type.codec.encode(value);
    } catch (RuntimeException e) {
      stream.failure(id, DeliveryException.Reason.CODEC, "the answer of " + type.name + "/" + entityId
          + " could not be encoded: " + e.getMessage());
      return;
    }
    if (bytes.length > stream.maxReplyBytes()) {
      stream.failure(id, DeliveryException.Reason.MESSAGE_TOO_LARGE, "the answer of " + type.name + "/" + entityId
          + " is " + bytes.length + " bytes encoded (expected: <= " + stream.maxReplyBytes()
          + ", the answering pod's max message bytes); it was not sent");
      return;
    }
    stream.value(id, bytes);
  }

  @Override
  public void fail(String message) {
    if (claim()) {
      stream.failure(id, DeliveryException.Reason.ENTITY_FAILED, "ask to " + type.name + "/" + entityId
          + " failed: " + message);
    }
  }

  @Override
  public Delivery next() {
    return next;
  }

  @Override
  public void next(Delivery d) {
    next = d;
  }
}

package io.atoll.runtime.internal;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Reply;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;

/**
 * One message sent from this pod, from its send until its answer, failure or timeout. It is the
 * future the caller holds, the reply handle a local entity answers through, and, for local
 * deliveries, the mailbox entry itself: one object per message.
 */
final class Pending extends CompletableFuture<Object> implements Reply<Object>, Delivery {

  private static final VarHandle DISPATCHED;

  static {
    try {
      DISPATCHED = MethodHandles.lookup().findVarHandle(Pending.class, "dispatched", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final PodRuntime runtime;
  final TypeRuntime type;
  final String entityId;
  final int shard;
  /** Set once before the message is routed (an ask builds it from this object). */
  Object message;
  final boolean ask;
  final long startNanos;
  final long timeoutNanos;
  final long deadlineNanos;

  /** Order among the sends of this pod to this shard; set by the route. */
  long seq;
  /** The encoded message, made once when first sent to another pod. */
  byte[] payload;
  /**
   * Set by the route on the first message it sends after a refusal: it lifts the receiver's
   * refusal of the shard on that stream (see InboundStream).
   */
  boolean resume;
  /** Where it waits, for timeout messages: set by whoever holds it. */
  volatile String where = "waiting to be routed";

  // Timeouts: an intrusive doubly-linked list per lane.
  Pending prevT;
  Pending nextT;
  Timeouts.Lane lane;

  // Sent to another pod: the client and the envelope id in its in-flight map.
  volatile PeerClient client;
  long envelopeId;
  int generation;

  private Delivery next;
  @SuppressWarnings("unused") // accessed through DISPATCHED
  private volatile int dispatched;

  Pending(PodRuntime runtime, TypeRuntime type, String entityId, int shard, Object message, boolean ask,
      long timeoutNanos) {
    this.runtime = runtime;
    this.type = type;
    this.entityId = entityId;
    this.shard = shard;
    this.message = message;
    this.ask = ask;
    this.startNanos = runtime.ticker.nanoTime();
    // Whole milliseconds: timeouts computed per call (deadline budgets) share a few lanes.
    this.timeoutNanos = Math.max(1, timeoutNanos / 1_000_000) * 1_000_000;
    this.deadlineNanos = startNanos + this.timeoutNanos;
  }

  /** Marks it dispatched (counted as outstanding by its route). */
  void markDispatched() {
    DISPATCHED.setVolatile(this, 1);
  }

  /** Clears the dispatched mark; true only for the one caller that cleared it. */
  boolean clearDispatched() {
    return DISPATCHED.compareAndSet(this, 1, 0);
  }

  String describe() {
    return type.name + "/" + entityId + " (shard " + shard + ")";
  }

  // ---- Reply

  @Override
  public void send(Object value) {
    if (complete(value)) {
      runtime.timeouts.remove(this);
    }
  }

  @Override
  public void fail(String message) {
    if (completeExceptionally(new DeliveryException(DeliveryException.Reason.ENTITY_FAILED,
        (ask ? "ask to " : "tell to ") + describe() + " failed: " + message))) {
      runtime.timeouts.remove(this);
    }
  }

  /** Fails it with {@code e} unless already complete; leaves route bookkeeping to the caller. */
  boolean failWith(DeliveryException e) {
    if (completeExceptionally(e)) {
      runtime.timeouts.remove(this);
      return true;
    }
    return false;
  }

  // ---- Delivery (a local send in a local mailbox)

  @Override
  public Object message() {
    return message;
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
  public void handled() {
    if (!ask && complete(null)) {
      runtime.timeouts.remove(this);
    }
    runtime.router.resolved(this, false);
  }

  @Override
  public void failed(DeliveryException e) {
    failWith(e);
    runtime.router.resolved(this, false);
  }

  @Override
  public void bounce() {
    runtime.router.resolved(this, true);
  }

  @Override
  public Reply<Object> reply() {
    return this;
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

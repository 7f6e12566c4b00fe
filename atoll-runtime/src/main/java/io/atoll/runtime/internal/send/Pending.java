package io.atoll.runtime.internal.send;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Reply;
import io.atoll.runtime.internal.host.Deferred;
import io.atoll.runtime.internal.host.Delivery;
import io.atoll.runtime.internal.util.Draining;
import io.atoll.runtime.internal.host.TypeRuntime;
import io.atoll.runtime.internal.util.GuardedBy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One message sent from this pod, from its send until its answer, failure or timeout. It is the
 * future the caller holds, the reply handle a local entity answers through, and, for local
 * deliveries, the mailbox entry itself: one object per message.
 *
 * <p><b>The caller cannot complete it.</b> The public ways to complete a {@link CompletableFuture}
 * ({@code complete}, {@code completeExceptionally}, {@code cancel}, {@code obtrude...},
 * {@code completeAsync}) throw {@link UnsupportedOperationException}; the pod completes it through
 * its own methods. This costs nothing per message, where a {@code minimalCompletionStage()} view
 * would allocate a second future and a relay for every send. {@code orTimeout} and
 * {@code completeOnTimeout} apply to a dependent copy, which they return.
 */
public final class Pending extends CompletableFuture<Object> implements Reply<Object>, Delivery {

  private static final VarHandle DISPATCHED;

  static {
    try {
      DISPATCHED = MethodHandles.lookup().findVarHandle(Pending.class, "dispatched", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** What a message reports to the room that sent it. */
  interface Owner {
    /** It completed (answered or failed): it no longer counts as in flight. */
    void completed(Pending p);

    /** Its owner resolved it: handled or failed, or refused ({@code retry}). */
    void resolved(Pending p, boolean retry);

    /**
     * A shared drain handled the messages of {@code shard} linked from {@code first} through
     * {@code nextHandled} (a {@link HandledBatch}): each that its acknowledgement completed is no
     * longer in flight, and each is resolved.
     */
    void handled(int shard, Pending first);
  }

  final Owner owner;
  final TypeRuntime type;
  final String entityId;
  /**
   * The global shard; 0 while the type's role has no space in this pod's layout, set once when a
   * space appended at run time places it (see {@code Router.grow}).
   */
  volatile int shard;
  /** Set once before the message is routed (an ask builds it from this object). */
  Object message;
  final boolean ask;
  final long startNanos;
  final long timeoutNanos;
  final long deadlineNanos;

  /** Order among the sends of this pod to this shard; set by the route. */
  @GuardedBy("its ShardRoute")
  long seq;
  /** The encoded message, made once when first sent to another pod. */
  byte[] payload;
  /**
   * Set by the route on the first message it sends after a refusal: it lifts the receiver's
   * refusal of the shard on that stream (see InboundStream).
   */
  boolean resume;
  /**
   * Where it waits, for timeout messages: set by whoever holds it, read by the deadline sweep. Not
   * volatile: a sweep that reads the place before last says a moment-old truth, and the field is
   * written several times per message.
   */
  String where = "waiting to be routed";

  // Timeouts: an intrusive doubly-linked list per lane.
  @GuardedBy("lane.stripe")
  Pending prevT;
  @GuardedBy("lane.stripe")
  Pending nextT;
  @GuardedBy("lane.stripe")
  Timeouts.Lane lane;

  // Sent to another pod: the client and the envelope id in its in-flight map.
  volatile PeerClient client;
  /**
   * When its peer client's sweep first found that the pod it went to no longer owns its shard,
   * and the envelope id it was in flight under then (a message sent again, under a new id, starts
   * afresh). Only the sweep, on the pod's timer, reads and writes them: nothing on the send path.
   */
  long movedSeenAt;
  long movedSeenEnvelope = -1;
  long envelopeId;
  int generation;

  private Delivery next;
  /** When it entered its entity's mailbox on this pod (see {@link Delivery#queuedAt()}). */
  private long queuedAt = NOT_QUEUED;
  /** The next message of the {@link HandledBatch} it is in; the drain's thread's. */
  Pending nextHandled;
  /** In a {@link HandledBatch}: whether the drain's acknowledgement completed it. */
  boolean settledInBatch;
  @SuppressWarnings("unused") // accessed through DISPATCHED
  private volatile int dispatched;

  Pending(Owner owner, TypeRuntime type, String entityId, int shard, Object message, boolean ask,
      long timeoutNanos, long startNanos) {
    this.owner = owner;
    this.type = type;
    this.entityId = entityId;
    this.shard = shard;
    this.message = message;
    this.ask = ask;
    this.startNanos = startNanos;
    // Whole milliseconds: timeouts computed per call (deadline budgets) share a few lanes.
    this.timeoutNanos = Math.max(1, timeoutNanos / 1_000_000) * 1_000_000;
    this.deadlineNanos = startNanos + this.timeoutNanos;
  }

  /**
   * Marks it dispatched (counted as outstanding by its route). Called under the route's monitor,
   * whose release publishes it before the message is handed over: no fence of its own.
   */
  void markDispatched() {
    DISPATCHED.setRelease(this, 1);
  }

  /** Clears the dispatched mark; true only for the one caller that cleared it. */
  boolean clearDispatched() {
    return DISPATCHED.compareAndSet(this, 1, 0);
  }

  String describe() {
    return type.name + "/" + entityId + " (shard " + shard + ")";
  }

  // ---- Completion by the pod only

  /**
   * Completes it with {@code value} unless already complete; true if this call completed it. The
   * caller's continuations run now, inside the pod's code: the thread is marked meanwhile, so
   * that their sends never handle a message on the spot ({@link Draining}).
   */
  boolean settle(Object value) {
    boolean[] mark = Draining.enter();
    try {
      return super.complete(value);
    } finally {
      Draining.exit(mark);
    }
  }

  /** Fails it with {@code e} unless already complete; true if this call completed it. As {@link #settle}. */
  boolean settleExceptionally(Throwable e) {
    boolean[] mark = Draining.enter();
    try {
      return super.completeExceptionally(e);
    } finally {
      Draining.exit(mark);
    }
  }

  private static UnsupportedOperationException notYours() {
    return new UnsupportedOperationException("the outcome of a send is decided by the pod; a caller cannot"
        + " complete or cancel it (copy the stage, e.g. thenApply(x -> x), for a future of your own)");
  }

  @Override
  public boolean complete(Object value) {
    throw notYours();
  }

  @Override
  public boolean completeExceptionally(Throwable ex) {
    throw notYours();
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    throw notYours();
  }

  @Override
  public void obtrudeValue(Object value) {
    throw notYours();
  }

  @Override
  public void obtrudeException(Throwable ex) {
    throw notYours();
  }

  @Override
  public CompletableFuture<Object> completeAsync(Supplier<?> supplier) {
    throw notYours();
  }

  @Override
  public CompletableFuture<Object> completeAsync(Supplier<?> supplier, Executor executor) {
    throw notYours();
  }

  /** Returns a dependent copy that fails after {@code timeout}; this send keeps its own deadline. */
  @Override
  public CompletableFuture<Object> orTimeout(long timeout, TimeUnit unit) {
    return copy().orTimeout(timeout, unit);
  }

  /** Returns a dependent copy completed with {@code value} after {@code timeout}. */
  @Override
  public CompletableFuture<Object> completeOnTimeout(Object value, long timeout, TimeUnit unit) {
    return copy().completeOnTimeout(value, timeout, unit);
  }

  // ---- Waiting: a platform thread spins briefly before it parks

  /**
   * How long a platform thread waiting for this future spins before it parks. A local answer
   * comes back from the entity's virtual thread within microseconds; a parked platform thread
   * then needs an OS wake-up, which costs tens of microseconds on a virtual machine. Virtual
   * threads never spin: parking one is cheap, and it frees its carrier for the entity.
   */
  static final long SPIN_NANOS = 20_000;

  private void spinIfPlatformThread() {
    if (isDone() || Thread.currentThread().isVirtual()) {
      return;
    }
    long until = System.nanoTime() + SPIN_NANOS;
    while (!isDone() && System.nanoTime() - until < 0) {
      Thread.onSpinWait();
    }
  }

  /** As {@link CompletableFuture#get()}; a platform thread spins briefly first (see {@link #SPIN_NANOS}). */
  @Override
  public Object get() throws InterruptedException, java.util.concurrent.ExecutionException {
    spinIfPlatformThread();
    return super.get();
  }

  /** As {@link CompletableFuture#get(long, TimeUnit)}; a platform thread spins briefly first. */
  @Override
  public Object get(long timeout, TimeUnit unit) throws InterruptedException,
      java.util.concurrent.ExecutionException, java.util.concurrent.TimeoutException {
    spinIfPlatformThread();
    return super.get(timeout, unit);
  }

  /** As {@link CompletableFuture#join()}; a platform thread spins briefly first. */
  @Override
  public Object join() {
    spinIfPlatformThread();
    return super.join();
  }

  // ---- Reply

  @Override
  public void send(Object value) {
    if (settle(value)) {
      owner.completed(this);
    }
  }

  @Override
  public void fail(String message) {
    if (settleExceptionally(new DeliveryException(DeliveryException.Reason.ENTITY_FAILED,
        (ask ? "ask to " : "tell to ") + describe() + " failed: " + message))) {
      owner.completed(this);
    }
  }

  /** Fails it with {@code e} unless already complete; leaves route bookkeeping to the caller. */
  boolean failWith(DeliveryException e) {
    if (settleExceptionally(e)) {
      owner.completed(this);
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
  public long queuedAt() {
    return queuedAt;
  }

  @Override
  public void queuedAt(long now) {
    queuedAt = now;
  }

  @Override
  public void handled() {
    if (!ask && settle(null)) {
      owner.completed(this);
    }
    owner.resolved(this, false);
  }

  @Override
  public Deferred handled(Deferred open) {
    boolean settled = !ask && settle(null);
    int s = shard;
    if (open instanceof HandledBatch b && b.takes(this, s)) {
      b.add(this, settled);
      return b;
    }
    if (open != null) {
      open.flush();
    }
    HandledBatch b = new HandledBatch(owner, s);
    b.add(this, settled);
    return b;
  }

  @Override
  public void failed(DeliveryException e) {
    failWith(e);
    owner.resolved(this, false);
  }

  @Override
  public void bounce() {
    owner.resolved(this, true);
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

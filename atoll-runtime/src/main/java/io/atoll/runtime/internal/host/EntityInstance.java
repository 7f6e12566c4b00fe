package io.atoll.runtime.internal.host;

import io.atoll.core.FencingToken;
import io.atoll.core.PodId;
import io.atoll.core.spi.StoredState;
import io.atoll.runtime.Carrying;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.OverloadCause;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.internal.codec.NoReply;
import io.atoll.runtime.internal.util.Draining;
import io.atoll.runtime.internal.util.GuardedBy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * One entity on this pod: its mailbox and its current activation.
 *
 * <p>The mailbox is an intrusive linked list of deliveries guarded by the instance's monitor.
 * When a message arrives at an idle instance, a virtual thread is started to drain the mailbox;
 * it handles one message at a time and ends when the mailbox is empty, so an idle entity holds no
 * thread and costs only this object, its id and its behaviour. The instance is its activation's
 * {@link EntityContext}, to save an object per entity.
 *
 * <p>Its mode: {@code OPEN} (takes deliveries), {@code CLOSING} (a hand-off: handles what is
 * queued, then its termination message, then closes), {@code CLOSED} (released or fenced: bounces
 * deliveries) or {@code REMOVED} (passivated: its shard makes a new instance for the next message).
 * It reports to its {@link InstanceHost}, never to the pod.
 *
 * <p><b>Never two at once.</b> A fenced instance whose handler is still running stays in its
 * shard's map, closed, until that handler returns; a message that finds it there (the shard is
 * served again) starts a <em>successor</em> that waits for the fenced instance's activation to
 * end before its own drain handles anything. So two activations of one entity never run handlers
 * at the same time on one pod, however the lease and the views come and go.
 *
 * <p><b>Why one class of some 540 lines.</b> The mailbox, the mode, the wait for a predecessor
 * and the activation's life (start, token, handler, termination, passivation, end) are read and
 * changed together under this instance's monitor or by its one draining thread; each transition
 * (a delivery meets a fence, a passivation meets a late message, a release meets a running
 * handler) checks the mailbox and the mode at once. Split, that lock would span classes. What is
 * not the instance's own state lives elsewhere: counts, events and threads in {@link Activations},
 * the shard's serving state in {@link EntityHost}.
 */
final class EntityInstance implements Runnable, EntityContext, Carrying.Arriving {

  /** What {@link #offer} did with a delivery. */
  enum Offer {
    /** Queued in the mailbox. */
    ACCEPTED,
    /** Passivated and removed from its shard: the caller creates a new instance. */
    REMOVED,
    /** Its shard is released or fenced: the caller bounces the delivery. */
    CLOSED,
    /** Its mailbox is full: the caller refuses the delivery as overloaded. */
    FULL,
    /**
     * Not linked: the instance was idle and active, and the caller now holds the right to drain
     * it; it must hand the delivery to {@link #runHere} (asked for by the caller, see
     * {@link #offer(Delivery, int, boolean)}).
     */
    RUN_HERE
  }

  private enum Mode { OPEN, CLOSING, CLOSED, REMOVED }

  final InstanceHost host;
  final ShardState shard;
  final TypeRuntime type;
  final String id;

  @GuardedBy("this")
  private Delivery head;
  @GuardedBy("this")
  private Delivery tail;
  @GuardedBy("this")
  private boolean scheduled;
  /** Messages linked in the mailbox (answered or not), bounded by {@link #offer}'s caller. */
  @GuardedBy("this")
  private int size;
  @GuardedBy("this")
  private Mode mode = Mode.OPEN;
  /** Opens when an activation closed by a fence has ended; made by the fence (most never need one). */
  @GuardedBy("this")
  private CountDownLatch ended;
  /**
   * Whether a fence closed this instance (its {@link #ended} latch was made): set once, read by
   * the drain before each message without taking the monitor its senders take.
   */
  private volatile boolean fencedMark;
  /** Whether an activation closed by a fence has ended (its {@link #ended} latch is open). */
  @GuardedBy("this")
  private boolean fencedEnded;
  /** Hand-offs that found this instance fenced with a handler still running: told when it ends. */
  @GuardedBy("this")
  private List<CountDownLatch> releasesWaiting;
  /** A fenced instance of the same entity whose activation must end before this one starts. */
  private volatile EntityInstance predecessor;

  @GuardedBy("the draining thread")
  private Entity<Object> behaviour;
  /** The activation's token, shared with the shard's other activations of that epoch and generation. */
  @GuardedBy("the draining thread")
  private FencingToken token;
  /**
   * What the last activation left for a hand-off ({@link Carrying.Leaving}), read by the
   * releasing thread once the activation ended; null if nothing (or a fence ended it).
   */
  private volatile StoredState left;
  @GuardedBy("the draining thread")
  private Delivery current;
  @GuardedBy("the draining thread")
  private boolean passivateAfter;

  /** When the last message began, or the last drain ended; see {@link #drain}. */
  volatile long lastActive;

  private static final VarHandle LAST_ACTIVE;

  static {
    try {
      LAST_ACTIVE = MethodHandles.lookup().findVarHandle(EntityInstance.class, "lastActive", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  EntityInstance(InstanceHost host, ShardState shard, TypeRuntime type, String id) {
    this.host = host;
    this.shard = shard;
    this.type = type;
    this.id = id;
    this.lastActive = host.now();
  }

  /**
   * A successor of {@code fenced}, a closed instance of the same entity: its drain handles nothing
   * until the fenced activation has ended.
   */
  EntityInstance(EntityInstance fenced) {
    this(fenced.host, fenced.shard, fenced.type, fenced.id);
    this.predecessor = fenced;
  }

  /** Waits, without giving up on interrupts, until an activation closed by a fence has ended. */
  void awaitEnded() {
    CountDownLatch l;
    synchronized (this) {
      l = ended;
    }
    if (l == null) {
      return; // never fenced, or fenced idle: its activation ended before it was closed
    }
    boolean interrupted = false;
    for (;;) {
      try {
        l.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Appends a delivery with no bound on the mailbox (tests of the states). */
  Offer offer(Delivery d) {
    return offer(d, Integer.MAX_VALUE);
  }

  /**
   * Appends a delivery, unless the instance was removed or closed, or its mailbox already links
   * {@code maxSize} messages. One entity's backlog is bounded so that an entity whose handler blocks
   * cannot take the whole pod's (or a stream's) room from the others: its senders are refused fast.
   */
  Offer offer(Delivery d, int maxSize) {
    return offer(d, maxSize, false);
  }

  /**
   * As {@link #offer(Delivery, int)}; if {@code mayRunHere} and the instance was idle with its
   * activation started (so no factory runs on the caller's thread), and no fenced predecessor
   * must end first, it takes the right to drain for the caller and returns {@link Offer#RUN_HERE}
   * without linking {@code d}: the caller hands {@code d} to {@link #runHere}, which handles it
   * first.
   */
  Offer offer(Delivery d, int maxSize, boolean mayRunHere) {
    boolean start;
    synchronized (this) {
      if (mode != Mode.OPEN) {
        return mode == Mode.REMOVED ? Offer.REMOVED : Offer.CLOSED;
      }
      if (size >= maxSize) {
        return Offer.FULL;
      }
      // behaviour is the last drain's, published by the monitor as it cleared scheduled.
      if (mayRunHere && !scheduled && head == null && behaviour != null && predecessor == null) {
        scheduled = true;
        return Offer.RUN_HERE;
      }
      append(d);
      start = !scheduled;
      scheduled = true;
    }
    if (start) {
      host.start(this);
    }
    return Offer.ACCEPTED;
  }

  /**
   * Handles {@code first}, the delivery {@link #offer(Delivery, int, boolean)} did not link, on
   * the calling thread, the sender's, which that offer gave the right to drain; whatever came
   * meanwhile (other senders' messages, other pods') then goes to the pod's drains, never run
   * here. Only for types whose handlers never block and whose senders accept this
   * ({@code EntityType.withInlineLocalSends}). The caller's interrupt status is hidden from the
   * handler and kept; an interrupt that comes while it runs stays with the caller.
   *
   * @param draining the calling thread's {@link Draining#mark()}, not set: this thread drains no
   *     other entity now
   */
  void runHere(Delivery first, boolean[] draining) {
    boolean callerInterrupted = Thread.interrupted();
    draining[0] = true; // a handler's sends to other entities go to the pod's drains
    boolean more;
    try {
      more = drain(first, 1, false); // its bookkeeping at once: this thread holds those locks anyway
    } finally {
      draining[0] = false;
      if (callerInterrupted) {
        Thread.currentThread().interrupt();
      }
    }
    if (more) {
      host.start(this); // still scheduled: the right passes to a drain
    }
  }

  /**
   * Messages ahead of a new one: those linked in the mailbox, and one more while a drain is running
   * or due. Read without the monitor, for an estimate only (it may be a moment stale).
   */
  int ahead() {
    return size + (scheduled ? 1 : 0);
  }

  /** Whether a drain is running or due (a handler may be running). */
  synchronized boolean busy() {
    return scheduled;
  }

  /** Empties the mailbox, returning what it held in order. Call holding the monitor. */
  private List<Delivery> takeAll() {
    List<Delivery> all = new ArrayList<>();
    int messages = 0;
    for (Delivery d = head; d != null; ) {
      Delivery n = d.next();
      d.next(null);
      all.add(d);
      messages += d instanceof StopMarker ? 0 : 1;
      d = n;
    }
    head = null;
    tail = null;
    size -= messages;
    host.queued(-messages);
    return all;
  }

  private void append(Delivery d) {
    if (!(d instanceof StopMarker)) {
      size++;
      host.queued(1);
    }
    if (tail == null) {
      head = d;
    } else {
      tail.next(d);
    }
    tail = d;
  }

  /**
   * Begins a hand-off: refuses new deliveries, and ends the activation after those already queued
   * and the termination message. Counts {@code done} down when finished.
   */
  void release(CountDownLatch done) {
    boolean start;
    synchronized (this) {
      if (mode != Mode.OPEN) {
        if (ended != null && !fencedEnded) {
          // Fenced, its handler still running: the hand-off is done only when that handler is.
          if (releasesWaiting == null) {
            releasesWaiting = new ArrayList<>(1);
          }
          releasesWaiting.add(done);
        } else {
          done.countDown();
        }
        return;
      }
      mode = Mode.CLOSING;
      if (!scheduled && head == null && (behaviour == null || type.terminationMessage == null)) {
        // Idle, with no termination message to run: closes at once. No drain runs, and none
        // can start, so this thread may end the activation.
        mode = Mode.CLOSED;
        start = false;
      } else {
        append(new StopMarker(true, done));
        start = !scheduled;
        scheduled = true;
      }
    }
    if (start) {
      host.start(this);
    } else if (mode == Mode.CLOSED) {
      try {
        endActivation(false);
      } finally {
        done.countDown();
      }
    }
  }

  /**
   * Ends the activation if it has been idle since {@code idleSince}: with its termination message
   * if it has one, else at once. Returns true if it was removed at once.
   */
  boolean passivateIfIdle(long idleBefore) {
    boolean start;
    synchronized (this) {
      if (mode != Mode.OPEN || scheduled || head != null || lastActive - idleBefore > 0) {
        return false;
      }
      if (behaviour == null || type.terminationMessage == null) {
        mode = Mode.REMOVED;
        start = false;
      } else {
        append(new StopMarker(false, null));
        scheduled = true;
        start = true;
      }
    }
    if (start) {
      host.start(this);
      return false;
    }
    endActivation(false); // idle and removed: no drain runs or can start
    return true;
  }

  /**
   * Closes at once without a termination message (the lease ran out, or a hand-off took longer
   * than its timeout): bounces everything queued. A handler already running finishes its message.
   */
  void fence() {
    List<Delivery> rest;
    boolean idle;
    synchronized (this) {
      if (mode == Mode.CLOSED || mode == Mode.REMOVED) {
        return;
      }
      mode = Mode.CLOSED;
      ended = new CountDownLatch(1);
      fencedMark = true;
      idle = !scheduled;
      rest = takeAll();
    }
    for (Delivery d : rest) {
      if (d instanceof StopMarker m) {
        m.finished();
      } else {
        d.bounce();
      }
    }
    if (idle) {
      closedEnd(); // no drain runs or can start: this thread ends the activation
    }
  }

  /**
   * Ends an activation closed by a fence, then leaves the shard and lets a successor start. Runs
   * once: on the fencing thread if the instance was idle, else on its drain as it finishes.
   */
  private void closedEnd() {
    try {
      endActivation(false);
    } finally {
      fencedActivationEnded(); // a successor waits for it, whatever the end threw
    }
  }

  /** The activation of a fenced instance has ended: it leaves the shard; waiters are told. */
  private void fencedActivationEnded() {
    try {
      host.removed(this);
    } finally {
      letSuccessorStart();
    }
  }

  /** Tells those waiting for this fenced activation to end: a successor, and releases. */
  private void letSuccessorStart() {
    CountDownLatch l;
    List<CountDownLatch> waiting;
    synchronized (this) {
      l = ended;
      fencedEnded = true;
      waiting = releasesWaiting;
      releasesWaiting = null;
    }
    if (l != null) {
      l.countDown();
    }
    if (waiting != null) {
      waiting.forEach(CountDownLatch::countDown);
    }
  }

  /** Whether a fenced activation of this entity must end first (its drain waits on a thread of its own). */
  boolean waitsForPredecessor() {
    return predecessor != null;
  }

  /** Drains the whole mailbox on the calling thread, after a fenced predecessor has ended. */
  @Override
  public void run() {
    EntityInstance before = predecessor;
    if (before != null) {
      before.awaitEnded(); // a fenced activation of this entity may still be in its handler
      predecessor = null;
    }
    boolean[] mark = Draining.enter(); // a handler's sends to other entities never run them on this thread
    try {
      while (drain(64)) {
        Thread.yield(); // a busy entity leaves the carrier to others now and then
      }
    } finally {
      Draining.exit(mark);
    }
  }

  /**
   * Handles at most {@code max} messages of the mailbox, in order. Returns true if messages are
   * left: the instance stays scheduled, and the caller must drain it again (no one else will).
   * Returns false when the mailbox was found empty (the instance is no longer scheduled, and the
   * next delivery schedules it again) or the activation ended. Only the holder of the
   * {@code scheduled} flag calls it, so one thread at a time.
   */
  boolean drain(int max) {
    return drain(null, max, type.sharedDrains);
  }

  /**
   * As {@link #drain(int)}, handling {@code first} (not linked in the mailbox, null if none) first.
   * With {@code defer}, the senders' bookkeeping of the messages handled waits (see
   * {@link Deferred}) until the drain is about to give the instance up or meets a stop marker, and
   * is done while it still holds it.
   */
  private boolean drain(Delivery first, int max, boolean defer) {
    int handled = 0;
    Delivery next = first;
    Deferred open = null;
    for (;;) {
      Delivery d = next;
      next = null;
      if (d == null) {
        synchronized (this) {
          d = head;
          boolean empty = d == null;
          if (open == null && (empty || handled >= max)) {
            if (!empty) {
              return true;
            }
            if (mode != Mode.CLOSED) {
              scheduled = false;
              if (!type.sharedDrains) {
                lastActive = host.now(); // a handler that may block may have run long: idle from now
              } // else idle since the last message began (see process): a short handler, no clock read
              return false;
            }
            // Fenced while this drain ran: it holds the instance until the activation has ended
            // (below), so a release waiting for the instance (busy) reports the shard released
            // only after that end.
          } else if (!empty && handled < max) {
            head = d.next();
            if (head == null) {
              tail = null;
            }
            d.next(null);
            if (!(d instanceof StopMarker)) {
              size--;
              host.queued(-1);
            }
          } else {
            d = null; // the turn ends, once its deferred bookkeeping is done
          }
        }
        if (d == null) {
          if (open != null) {
            open = flushHeld(open);
            continue;
          }
          try {
            closedEnd(); // fenced while this drain ran
          } finally {
            synchronized (this) {
              scheduled = false;
            }
          }
          return false;
        }
      }
      if (d instanceof StopMarker m) {
        if (open != null) {
          open = flushHeld(open);
        }
        if (stop(m)) {
          return false;
        }
        continue;
      }
      try {
        open = process(d, open, defer);
      } catch (RuntimeException e) {
        // A delivery's own callback threw (the handler's failures are caught in process): the
        // drain must go on, or the instance would stay scheduled with nobody draining it.
        reportHeld("delivery", e);
      } catch (Error e) {
        handOver(e);
      }
      handled++;
    }
  }

  /**
   * Does the senders' deferred bookkeeping (see {@link Deferred}) while this drain holds the
   * instance; returns null.
   */
  private Deferred flushHeld(Deferred open) {
    try {
      open.flush();
    } catch (RuntimeException e) {
      reportHeld("delivery", e);
    } catch (Error e) {
      handOver(e);
    }
    return null;
  }

  /**
   * Reports a failure of {@code hook} while this drain holds the instance, and goes on; if the
   * report itself throws, the drain is handed over as for an error.
   */
  private void reportHeld(String hook, RuntimeException e) {
    try {
      host.hookFailed(this, hook, e);
    } catch (RuntimeException | Error x) {
      x.addSuppressed(e);
      handOver(x);
    }
  }

  /**
   * An error outside the handler (process catches the handler's), e.g. a stack overflow on a
   * sender's deep stack, while this drain holds the instance: a drain of the pod's takes over the
   * mailbox, or the instance would stay scheduled with nobody draining it, and the error goes on.
   * A message in hand ends at its deadline.
   */
  private void handOver(Throwable e) {
    try {
      host.start(this);
    } catch (Throwable t) {
      e.addSuppressed(t);
    }
    if (e instanceof RuntimeException r) {
      throw r;
    }
    throw (Error) e;
  }

  /**
   * Handles a stop marker; true if the instance ended and the drain must return. An error from
   * ending the activation (its hooks; e.g. a stack overflow on a sender's deep stack) does not stop
   * the instance from ending or going on: the error goes on after the instance is given up, or
   * after a drain of the pod's has taken it over when more messages came.
   */
  private boolean stop(StopMarker m) {
    Throwable failed = null;
    try {
      endActivation(true);
    } catch (RuntimeException | Error e) {
      failed = e;
    }
    List<Delivery> rest = List.of();
    boolean removed = false;
    boolean fenced;
    boolean goesOn = false;
    synchronized (this) {
      fenced = ended != null; // fenced while the termination message ran: end as a fenced instance
      if (fenced) {
        rest = takeAll();
        scheduled = false;
      } else if (m.release) {
        mode = Mode.CLOSED;
        rest = takeAll();
        scheduled = false;
      } else if (head == null) {
        mode = Mode.REMOVED;
        scheduled = false;
        removed = true;
      } else {
        goesOn = true; // more arrived: the next message starts a new activation
      }
    }
    if (goesOn) {
      if (failed instanceof RuntimeException r) {
        reportHeld("deactivation", r);
      } else if (failed != null) {
        handOver(failed); // still held: a drain of the pod's takes the rest
      }
      return false;
    }
    try {
      for (Delivery d : rest) {
        d.bounce();
      }
    } finally {
      m.finished(); // a release waits for it
      if (fenced) {
        fencedActivationEnded(); // a successor may be waiting for this activation to end
      } else if (removed) {
        host.removed(this);
      }
    }
    if (failed instanceof RuntimeException r) {
      host.hookFailed(this, "deactivation", r); // given up: nothing waits on this drain any more
    } else if (failed != null) {
      throw (Error) failed;
    }
    return true;
  }

  private Deferred process(Delivery d, Deferred open, boolean defer) {
    if (!d.begin()) {
      return open; // the sender stopped waiting, or it expired in the mailbox and was answered
    }
    long now = host.now();
    LAST_ACTIVE.setOpaque(this, now); // read by the passivation sweep; no fence per message
    long queuedAt = d.queuedAt();
    if (queuedAt != Delivery.NOT_QUEUED) {
      host.began(now - queuedAt, now);
    }
    if (now - d.deadlineNanos() >= 0) {
      d.failed(new DeliveryException(DeliveryException.Reason.TIMEOUT, "message to " + type.name + "/" + id
          + " expired in its mailbox before it was handled"));
      return open;
    }
    if (host.lateToBegin(type, now, d.deadlineNanos())) {
      tooLate(d, now);
      return open;
    }
    if (!host.serving(shard, now) || fenced()) {
      // Bounce this and everything behind it, so a lease renewed a moment later cannot let a
      // later message be handled before this one is retried. A fenced activation starts nothing
      // more, even if the shard is served again by now (a renewal after the lapse, a new claim):
      // its drain may have taken this message just before the fence emptied the mailbox.
      d.bounce();
      fence(); // the drain ends the activation when it finds the mailbox empty
      return open;
    }
    boolean activated = false;
    if (behaviour == null) {
      if (!activate(d)) {
        return open;
      }
      activated = true;
      // The factory may take long (a database round trip to claim the entity's row) or the process
      // may freeze inside it: look at the lease again before the first handler runs.
      if (!host.serving(shard, host.now()) || fenced()) {
        d.bounce();
        fence();
        return open;
      }
    }
    current = d;
    boolean ok = false;
    // Handlers that may block are timed every time (a clock read is nothing beside them); those
    // on shared drains, which never block, one in eight. The handler only: an activation's
    // factory (a database load, say) is paid once per entity, not by every message of its type.
    boolean timed = !type.sharedDrains || (now & 7) == 0;
    long began = timed && activated ? host.now() : now;
    try {
      behaviour.onMessage(d.message(), this);
      ok = true;
    } catch (Throwable t) {
      d.failed(new DeliveryException(DeliveryException.Reason.ENTITY_FAILED, "entity " + type.name + "/" + id
          + " failed on " + d.message().getClass().getSimpleName() + ": " + t, t));
      endActivation(false); // restart: the next message gets a fresh activation
    } finally {
      current = null;
      if (timed) {
        long end = host.now();
        host.handlerTime(type, end - began, end); // a handler that threw took its time too
      }
    }
    // Outside the handler's try: the delivery's own failure is not the entity's (see drain).
    try {
      if (ok) {
        if (defer) {
          open = d.handled(open); // a handler that never blocks: the bookkeeping waits for the turn's end
        } else {
          d.handled(); // a handler may block next: nothing waits behind it
        }
      }
    } finally {
      if (passivateAfter) {
        passivateAfter = false;
        endActivation(false);
      }
    }
    return open;
  }

  /**
   * Refuses {@code d}, taken but not handled, as overloaded: too little of its deadline is left
   * for this type's handlers. The sender hears it before it would have timed out.
   */
  private void tooLate(Delivery d, long now) {
    try {
      host.refused(type, OverloadCause.DEADLINE_AT_HANDLER);
    } finally {
      d.failed(new DeliveryException(DeliveryException.Reason.OVERLOADED, "message to " + type.name + "/" + id
          + " refused by pod " + host.self() + " unhandled: overloaded, it waited until "
          + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(d.deadlineNanos() - now)
          + " ms were left of its sender's deadline, less than this type's handlers take now; retry later, send"
          + " less, or add pods", java.time.Duration.ZERO));
    }
  }

  /** Whether a fence closed this instance: its activation may finish a running handler, never start one. */
  private boolean fenced() {
    return fencedMark;
  }

  private boolean activate(Delivery d) {
    token = host.token(shard);
    left = null;
    try {
      behaviour = type.factory.create(this);
      if (behaviour == null) {
        throw new IllegalStateException("the factory returned null");
      }
    } catch (Throwable t) {
      behaviour = null;
      d.failed(new DeliveryException(DeliveryException.Reason.ENTITY_FAILED, "entity " + type.name + "/" + id
          + " could not start: " + t, t));
      return false;
    }
    try {
      host.activated(this);
    } catch (RuntimeException e) {
      host.hookFailed(this, "activation", e); // a report failed, not the activation: go on
    }
    return true;
  }

  private void endActivation(boolean terminate) {
    if (behaviour == null) {
      return;
    }
    try {
      if (terminate && type.terminationMessage != null && host.serving(shard, host.now()) && !fenced()) {
        try {
          behaviour.onMessage(type.terminationMessage, this);
        } catch (Throwable t) {
          host.terminationFailed(this, t);
        }
      }
    } finally {
      if (!fenced() && behaviour instanceof Carrying.Leaving l) {
        try {
          left = l.leave();
        } catch (RuntimeException e) {
          left = null; // nothing carried: the next owner reads the store
        }
      }
      behaviour = null; // ended, even if an error outside the handler goes on from here
      try {
        host.deactivated(this);
      } catch (RuntimeException e) {
        host.hookFailed(this, "deactivation", e);
      }
    }
  }

  /** What the activation left when it ended by a hand-off; null if nothing can be carried. */
  StoredState left() {
    return fenced() ? null : left;
  }

  @Override
  public StoredState takeCarried() {
    FencingToken t = token;
    return t == null ? null : host.takeCarried(shard, t, type.name, id);
  }

  // ---- EntityContext

  @Override
  public String entityId() {
    return id;
  }

  @Override
  public String entityType() {
    return type.name;
  }

  @Override
  public FencingToken token() {
    FencingToken t = token;
    return t != null ? t : new FencingToken(shard.shard, 0, 0); // asked before its first activation
  }

  @Override
  public PodId pod() {
    return host.self();
  }

  @Override
  public Sharding sharding() {
    return host.sharding();
  }

  @Override
  public Reply<Object> reply() {
    Delivery d = current;
    return d == null ? NoReply.INSTANCE : d.reply();
  }

  @Override
  public void passivate() {
    passivateAfter = true;
  }

  @Override
  public String toString() {
    return type.name + "/" + id;
  }
}

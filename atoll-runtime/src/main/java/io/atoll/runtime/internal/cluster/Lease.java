package io.atoll.runtime.internal.cluster;

import io.atoll.core.Ticker;
import io.atoll.runtime.internal.util.GuardedBy;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pod's lease: every piece of its state, in one place. The lease is a deadline on the
 * injected clock, counted from when the pod sent its last successful renewal, never shortened.
 * Every delivery checks {@link #valid()}: after the deadline the pod handles nothing, even before
 * {@link #check()} notices and fences the shards.
 *
 * <p>States: never granted (deadline 0); valid; lapsed (deadline passed, not yet noticed); fenced
 * (lapsed and noticed: the host stopped every shard). A renewal that arrives while fenced unfences
 * and the pod serves what the view gives it again. Fencing and unfencing happen under the
 * view's guard, so they never interleave with a view change. A client's lease is always valid.
 *
 * <p>Also the renewal bookkeeping the manager link needs: the lease length the manager granted,
 * when the last renewal succeeded, and since when renewals fail. Thread-safe.
 */
public final class Lease {

  private static final Logger log = LoggerFactory.getLogger(Lease.class);

  /** What the lease reports upward. */
  public interface Callback {
    /** Under the guard: the lease ran out; stop serving every shard at once. */
    void fence();

    /** Under the guard: a fenced pod holds a valid lease again; serve what the view gives it. */
    void unfence();

    /** Outside the guard, after the deadline moved: messages held back may go now. */
    void extended();

    /** Outside the guard, after this pod stopped serving because of its lease. */
    void fenced();
  }

  private final Ticker ticker;
  private final boolean clientOnly;
  private final Object guard;
  private final Supplier<?> owner;
  private final Callback callback;

  @GuardedBy("guard") // for writes; read without it
  private volatile long until;
  @GuardedBy("guard")
  private volatile boolean fenced;
  private volatile boolean closing;
  private volatile boolean closed;

  /** Grants after a lapse so far; set before {@link #until} moves, read after it. */
  @GuardedBy("guard") // for writes
  private volatile long generation;

  private volatile long ttlNanos = TimeUnit.SECONDS.toNanos(10);
  private volatile long renewedAt;
  private volatile long failingSince;

  /**
   * A lease not yet granted.
   *
   * @param guard the view's guard, held while fencing and unfencing
   * @param owner names the pod in log lines
   */
  public Lease(Ticker ticker, boolean clientOnly, Object guard, Supplier<?> owner, Callback callback) {
    this.ticker = ticker;
    this.clientOnly = clientOnly;
    this.guard = guard;
    this.owner = owner;
    this.callback = callback;
  }

  /** Whether the lease is valid now (always for a client). One volatile read. */
  public boolean valid() {
    return clientOnly || ticker.nanoTime() - until < 0;
  }

  /** The same, with the time already read. */
  public boolean valid(long now) {
    return clientOnly || now - until < 0;
  }

  /**
   * How many times the lease was granted anew after it had run out (or was revoked): activations
   * under the same claim carry it in their token, so one started after a lapse outranks any that
   * started before it. Never decreases.
   */
  public long generation() {
    return generation;
  }

  /** Whether the manager ever granted this lease. */
  public boolean granted() {
    return until != 0;
  }

  /** Whether the pod stopped serving because its lease ran out (or it was dropped). */
  public boolean fenced() {
    return fenced;
  }

  /** The lease length the manager granted last. */
  public long ttlNanos() {
    return ttlNanos;
  }

  /** Whether renewals have been failing since the last success. */
  public boolean failing() {
    return failingSince != 0;
  }

  /** Milliseconds since the last successful renewal, or -1 if none. */
  public long renewedMillisAgo() {
    long at = renewedAt;
    return at == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - at);
  }

  /**
   * A registration or renewal sent at {@code sentAt} succeeded with a lease of {@code ttlNanos}:
   * the lease runs until {@code sentAt + ttlNanos} (unless it already runs longer).
   */
  public void renewed(long sentAt, long ttlNanos) {
    this.ttlNanos = ttlNanos;
    this.renewedAt = ticker.nanoTime();
    this.failingSince = 0;
    extend(sentAt + ttlNanos);
  }

  /** A renewal sent at {@code sentAt} failed. */
  public void renewalFailed(long sentAt) {
    if (failingSince == 0) {
      failingSince = sentAt;
    }
  }

  /** The lease now runs until {@code deadline} (never shortened); a fenced pod serves again. */
  public void extend(long deadline) {
    synchronized (guard) {
      if (deadline - until > 0) {
        if (until != 0 && ticker.nanoTime() - until >= 0) {
          generation++; // before the deadline moves: whoever sees the new deadline sees this too
        }
        until = deadline;
      }
      if (fenced && valid() && !closing) {
        fenced = false;
        log.info("pod {}: lease renewed; serving again", owner.get());
        callback.unfence();
      }
    }
    callback.extended();
  }

  /** Fences the pod if its lease ran out; the timer calls it often. */
  public void check() {
    if (clientOnly || until == 0 || fenced || closed || valid()) {
      return;
    }
    synchronized (guard) {
      if (fenced || valid()) {
        return;
      }
      fenced = true;
      log.warn("pod {}: lease ran out without a renewal; stopped serving every shard (self-fencing)", owner.get());
      callback.fence();
    }
    callback.fenced();
  }

  /** Ends the lease now and marks the pod fenced (the manager no longer knows it); the caller holds the guard. */
  @GuardedBy("guard")
  public void revokeLocked() {
    assert Thread.holdsLock(guard);
    until = ticker.nanoTime();
    fenced = true;
  }

  /** The pod is stopping gracefully: a renewal no longer unfences it. */
  public void closing() {
    closing = true;
  }

  /** The pod is closed: nothing is fenced any more. */
  public void closed() {
    closed = true;
  }
}

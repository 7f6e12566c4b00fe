package io.atoll.server.demo;

import io.atoll.runtime.DeliveryException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * When each deposit was sent and answered, and how: so that a run's summary can tell what happened
 * in steady state from what happened around a kill -9, and when the first deposit was acknowledged.
 * Thread-safe; times are {@link System#nanoTime()}.
 */
public final class Outcomes {

  /** How a deposit ended. */
  public enum Kind {
    /** Acknowledged: handled. */
    ACKED,
    /** Refused as overloaded: never handled. */
    REFUSED,
    /** Timed out: may or may not have been handled. */
    TIMED_OUT,
    /** Failed otherwise (outcome unknown, shut down, ...). */
    FAILED
  }

  private record Outcome(long sent, long done, Kind kind) {}

  /**
   * Most outcomes kept (about 40 MB): a run kept going ({@code --keep-running}) records no more
   * once it has this many, and counts them apart.
   */
  static final int MAX_KEPT = 1_000_000;

  private final List<Outcome> all = new ArrayList<>();
  private final AtomicLong firstAck = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong notKept = new AtomicLong();
  private final int maxKept;

  /** Keeps up to {@link #MAX_KEPT} outcomes. */
  public Outcomes() {
    this(MAX_KEPT);
  }

  Outcomes(int maxKept) {
    this.maxKept = maxKept;
  }

  /** Deposits that ended after {@link #MAX_KEPT} were kept: counted in no phase. */
  public long notKept() {
    return notKept.get();
  }

  /** A deposit sent at {@code sent} ended at {@code done} with {@code failure} (null: acknowledged). */
  public void record(long sent, long done, Throwable failure) {
    Kind k;
    if (failure == null) {
      k = Kind.ACKED;
      firstAck.compareAndSet(Long.MIN_VALUE, done);
    } else {
      DeliveryException.Reason r = Ledger.reason(failure);
      k = r == DeliveryException.Reason.OVERLOADED ? Kind.REFUSED
          : r == DeliveryException.Reason.TIMEOUT ? Kind.TIMED_OUT : Kind.FAILED;
    }
    Outcome o = new Outcome(sent, done, k);
    synchronized (all) {
      if (all.size() < maxKept) {
        all.add(o);
        return;
      }
    }
    notKept.incrementAndGet();
  }

  /** When the first deposit was acknowledged, or {@link Long#MIN_VALUE} if none was. */
  public long firstAck() {
    return firstAck.get();
  }

  /** Deposits of one phase by how they ended. */
  public record Tally(long sent, long acked, long refused, long timedOut, long failed) {

    /** The share acknowledged or refused as overloaded (1 with nothing sent). */
    public double answered() {
      return sent == 0 ? 1 : (acked + refused) / (double) sent;
    }

    Tally plus(Kind k) {
      return new Tally(sent + 1, acked + (k == Kind.ACKED ? 1 : 0), refused + (k == Kind.REFUSED ? 1 : 0),
          timedOut + (k == Kind.TIMED_OUT ? 1 : 0), failed + (k == Kind.FAILED ? 1 : 0));
    }
  }

  /** Steady state, and around kills. */
  public record Split(Tally steady, Tally aroundKills) {}

  /**
   * Splits the deposits: one is "around a kill" if it was in flight at a kill (sent before it,
   * answered after it) or sent within {@code window} after one; the rest are steady state.
   */
  public Split split(List<Long> kills, long windowNanos) {
    Tally steady = new Tally(0, 0, 0, 0, 0);
    Tally around = steady;
    List<Outcome> copy;
    synchronized (all) {
      copy = List.copyOf(all);
    }
    for (Outcome o : copy) {
      boolean near = false;
      for (long k : kills) {
        if ((o.sent - k <= 0 && o.done - k >= 0) || (o.sent - k >= 0 && o.sent - k < windowNanos)) {
          near = true;
          break;
        }
      }
      if (near) {
        around = around.plus(o.kind);
      } else {
        steady = steady.plus(o.kind);
      }
    }
    return new Split(steady, around);
  }

  /** Milliseconds from {@code from} to the first acknowledgement, or -1 if none came. */
  public long firstAckMillisAfter(long from) {
    long f = firstAck.get();
    return f == Long.MIN_VALUE ? -1 : TimeUnit.NANOSECONDS.toMillis(f - from);
  }
}

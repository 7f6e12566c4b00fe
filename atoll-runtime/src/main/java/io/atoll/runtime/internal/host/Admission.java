package io.atoll.runtime.internal.host;

import io.atoll.runtime.OverloadCause;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Deadline-aware admission: whether a message arriving for an entity is likely to be handled
 * within the time its pod allows and its sender waits, so that a pod that cannot keep up refuses
 * at once, unhandled, instead of letting senders time out.
 *
 * <p>Two estimates, both kept cheap enough to read on every message:
 * <ul>
 *   <li><b>A type's handler time</b>: a moving average (weight 1/8) of how long its handlers ran,
 *       from the moment a drain took the message to the handler's return. It includes whatever the
 *       handler waited for (a database, a connection pool): to the pod that is the handler's time.
 *   <li><b>The pod's standing queue delay</b>, as CoDel measures one: the least time any message
 *       waited between entering its mailbox and a drain taking it, over the last interval of
 *       {@link #INTERVAL_NANOS}. A burst that drains quickly leaves it at zero; only a queue that
 *       stays (the drains or the carrier threads cannot keep up) raises it. An interval in which
 *       no message began says nothing, and counts as zero.
 * </ul>
 *
 * <p>A message with {@code ahead} messages before it in its entity's mailbox (one more if a
 * handler of that entity runs) is expected to wait {@code standing + ahead × handlerTime}. It is
 * refused for {@link OverloadCause#QUEUE_TIME} if that exceeds {@code maxQueueTime}, and for
 * {@link OverloadCause#DEADLINE} if the wait, its own handler time and a margin for the answer's
 * way back exceed what is left of its deadline. When a drain takes a message, it is refused
 * ({@link OverloadCause#DEADLINE_AT_HANDLER}) if less than the type's handler time and the margin
 * is left: an answer before the sender gives up, instead of a timeout whose outcome it cannot know.
 *
 * <p>An average that no handler has refreshed for {@link #HALF_LIFE_NANOS} fades by half per
 * such time, so a type whose handlers all stalled once is not refused for good. The standing delay
 * is measured only on messages that found their entity idle: a message behind its own entity's
 * backlog says nothing about the pod, and that backlog is counted per entity already.
 *
 * <p>The estimates are racy on purpose (a lost update of an average is harmless); nothing here
 * decides safety, only whether a message is worth taking. Times are the pod ticker's nanoseconds.
 */
final class Admission {

  /** CoDel's interval: the standing delay is the least wait over one. */
  static final long INTERVAL_NANOS = 100_000_000L;
  /** At most this much of a deadline is kept for the answer's way back. */
  static final long MARGIN_CAP_NANOS = 100_000_000L;

  /**
   * With no handler of a type timed for this long, its handler time counts half, then a quarter,
   * and so on: an estimate that refuses everything (one handler stalled, say, while nothing else of
   * its type is admitted to be timed) fades, and messages are let through to measure again.
   */
  static final long HALF_LIFE_NANOS = 1_000_000_000L;
  /** Longs between two types' slots: each on a cache line of its own. */
  private static final int STRIDE = 8;

  private final long maxQueueNanos;
  /**
   * By type index × {@link #STRIDE}: the handler time's moving average (0 until measured); at
   * +1, when it was last timed.
   */
  private final AtomicLongArray handlerNanos;
  private volatile long intervalStart;
  /** The least wait seen in the current interval ({@link Long#MAX_VALUE}: none yet). */
  private volatile long intervalMin = Long.MAX_VALUE;
  /** The least wait of the last whole interval. */
  private volatile long standing;

  /**
   * @param types how many types the pod hosts (their indexes are 0..types-1)
   * @param maxQueueNanos the longest expected wait admitted; 0 or less for none (deadlines still count)
   * @param now the ticker now
   */
  Admission(int types, long maxQueueNanos, long now) {
    this.maxQueueNanos = maxQueueNanos;
    this.handlerNanos = new AtomicLongArray(Math.max(1, types) * STRIDE);
    this.intervalStart = now;
  }

  /** A refusal: why, and how long the pod expects its queue to need (the sender's retry hint). */
  record Refusal(OverloadCause cause, long waitNanos) {}

  /** The part of a deadline {@code left} away kept for the answer's way back. */
  static long margin(long left) {
    return Math.min(MARGIN_CAP_NANOS, Math.max(0, left) / 10);
  }

  /**
   * The recent handler time of the type of index {@code type} at {@code now}: the moving average,
   * halved for every {@link #HALF_LIFE_NANOS} since a handler of the type was last timed.
   */
  long handlerNanos(int type, long now) {
    long h = handlerNanos.getOpaque(type * STRIDE);
    if (h == 0) {
      return 0;
    }
    long age = now - handlerNanos.getOpaque(type * STRIDE + 1);
    return age < HALF_LIFE_NANOS ? h : Math.max(1, h >>> Math.min(62, age / HALF_LIFE_NANOS));
  }

  /** The pod's standing queue delay at {@code now}. */
  long standing(long now) {
    return now - intervalStart >= 2 * INTERVAL_NANOS ? 0 : standing;
  }

  /**
   * Whether to take a message for an entity of type {@code type} with {@code ahead} messages
   * before it, whose sender waits until {@code deadline}: null to take it, else the refusal.
   */
  Refusal admit(int type, int ahead, long now, long deadline) {
    long h = handlerNanos(type, now);
    long wait = standing(now) + ahead * h;
    if (maxQueueNanos > 0 && wait > maxQueueNanos) {
      return new Refusal(OverloadCause.QUEUE_TIME, wait);
    }
    long left = deadline - now;
    if (wait + h + margin(left) >= left && (wait > 0 || h > 0)) {
      return new Refusal(OverloadCause.DEADLINE, wait + h);
    }
    return null;
  }

  /**
   * Whether a message a drain takes at {@code now}, its sender waiting until {@code deadline}, is
   * now too late to begin: less than the type's handler time and the margin is left (the same test
   * as on arrival, with nothing ahead of it any more). Before any handler of the type was timed,
   * only the margin counts.
   */
  boolean lateToBegin(int type, long now, long deadline) {
    long left = deadline - now;
    return handlerNanos(type, now) + margin(left) >= left;
  }

  /** A drain took a message at {@code now} that had waited {@code waited} in its mailbox. */
  void began(long waited, long now) {
    long start = intervalStart;
    if (now - start >= INTERVAL_NANOS) {
      synchronized (this) { // once per interval
        if (intervalStart == start) {
          long min = intervalMin;
          standing = now - start >= 2 * INTERVAL_NANOS || min == Long.MAX_VALUE ? 0 : min;
          intervalMin = Math.max(0, waited);
          intervalStart = now;
          return;
        }
      }
    }
    if (waited < intervalMin) {
      intervalMin = Math.max(0, waited); // racy: a concurrent smaller one may be lost, harmless
    }
  }

  /** A handler of the type of index {@code type} ran for {@code nanos}, returning at {@code now}. */
  void handled(int type, long nanos, long now) {
    long old = handlerNanos(type, now); // an average that had faded starts again from what is left of it
    long n = Math.max(1, nanos);
    handlerNanos.setOpaque(type * STRIDE, old == 0 ? n : Math.max(1, old + (n - old) / 8));
    handlerNanos.setOpaque(type * STRIDE + 1, now);
  }
}

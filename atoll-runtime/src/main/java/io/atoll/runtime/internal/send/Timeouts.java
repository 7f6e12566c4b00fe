package io.atoll.runtime.internal.send;

import io.atoll.runtime.internal.util.GuardedBy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every message in flight from this pod, so that each one fails at its deadline, and so that the
 * number in flight is bounded (one counter for the pod).
 *
 * <p>Striped by sending thread; within a stripe, messages are kept in one FIFO list per timeout
 * length (a lane). Messages of one lane are added in deadline order, so a sweep pops expired ones
 * from the heads and stops at the first live one: its cost is the number that expired, not the
 * number in flight. Adding and removing are O(1) with no allocation (intrusive links in
 * {@link Pending}). Thread-safe.
 */
final class Timeouts {

  private static final int STRIPES = 16;

  private final Stripe[] stripes = new Stripe[STRIPES];
  private final int maxInFlight;
  private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();

  /** A bound of {@code maxInFlight} messages in all. */
  Timeouts(int maxInFlight) {
    for (int i = 0; i < STRIPES; i++) {
      stripes[i] = new Stripe();
    }
    this.maxInFlight = maxInFlight;
  }

  static final class Lane {
    final Stripe stripe;
    @GuardedBy("stripe")
    Pending head;
    @GuardedBy("stripe")
    Pending tail;

    Lane(Stripe stripe) {
      this.stripe = stripe;
    }
  }

  static final class Stripe {
    @GuardedBy("this")
    final Map<Long, Lane> lanes = new HashMap<>();
    // Nearly every message of a pod has the same timeout: skip the map (and boxing) for it.
    @GuardedBy("this")
    long lastTimeout = -1;
    @GuardedBy("this")
    Lane lastLane;
  }

  /** Adds a message; false if this pod already has its maximum in flight. */
  boolean add(Pending p) {
    if (inFlight.incrementAndGet() > maxInFlight) {
      inFlight.decrementAndGet();
      return false;
    }
    Stripe s = stripes[(int) (Thread.currentThread().threadId() & (STRIPES - 1))];
    synchronized (s) {
      Lane lane = s.lastLane;
      if (s.lastTimeout != p.timeoutNanos) {
        lane = s.lanes.computeIfAbsent(p.timeoutNanos, k -> new Lane(s));
        s.lastTimeout = p.timeoutNanos;
        s.lastLane = lane;
      }
      p.lane = lane;
      p.prevT = lane.tail;
      p.nextT = null;
      if (lane.tail == null) {
        lane.head = p;
      } else {
        lane.tail.nextT = p;
      }
      lane.tail = p;
      return true;
    }
  }

  /** Removes a message if present. */
  void remove(Pending p) {
    Lane lane = p.lane;
    if (lane == null) {
      return;
    }
    Stripe s = lane.stripe;
    synchronized (s) {
      if (p.lane != lane) {
        return;
      }
      unlink(lane, p);
    }
    inFlight.decrementAndGet();
  }

  /**
   * Removes the messages linked from {@code first} through {@code nextHandled} that are marked
   * {@code settledInBatch}, if present: one hold of a stripe for each run of messages added on
   * it, and one update of the count.
   */
  void removeSettled(Pending first) {
    int removed = 0;
    Pending p = first;
    while (p != null) {
      Lane lane = p.settledInBatch ? p.lane : null;
      if (lane == null) {
        p = p.nextHandled;
        continue;
      }
      Stripe s = lane.stripe;
      synchronized (s) {
        // The run of messages on this stripe; any other ends it (read again under its own stripe).
        while (p != null) {
          if (p.settledInBatch) {
            Lane l = p.lane;
            if (l != null && l.stripe != s) {
              break;
            }
            if (l != null) {
              unlink(l, p);
              removed++;
            }
          }
          p = p.nextHandled;
        }
      }
    }
    if (removed > 0) {
      inFlight.addAndGet(-removed);
    }
  }

  @GuardedBy("lane.stripe")
  private static void unlink(Lane lane, Pending p) {
    if (p.prevT == null) {
      lane.head = p.nextT;
    } else {
      p.prevT.nextT = p.nextT;
    }
    if (p.nextT == null) {
      lane.tail = p.prevT;
    } else {
      p.nextT.prevT = p.prevT;
    }
    p.prevT = null;
    p.nextT = null;
    p.lane = null;
  }

  /** Removes and returns every message whose deadline is at or before {@code now}. */
  List<Pending> expired(long now) {
    List<Pending> out = null;
    for (Stripe s : stripes) {
      synchronized (s) {
        for (java.util.Iterator<Lane> it = s.lanes.values().iterator(); it.hasNext(); ) {
          Lane lane = it.next();
          Pending p = lane.head;
          while (p != null && now - p.deadlineNanos >= 0) {
            Pending next = p.nextT;
            unlink(lane, p);
            inFlight.decrementAndGet();
            if (out == null) {
              out = new ArrayList<>();
            }
            out.add(p);
            p = next;
          }
          if (lane.head == null && lane != s.lastLane) {
            it.remove(); // lanes of one-off timeouts do not pile up
          }
        }
      }
    }
    return out == null ? List.of() : out;
  }

  /** Removes and returns every message in flight. */
  List<Pending> all() {
    List<Pending> out = new ArrayList<>();
    for (Stripe s : stripes) {
      synchronized (s) {
        for (Lane lane : s.lanes.values()) {
          Pending p = lane.head;
          while (p != null) {
            Pending next = p.nextT;
            unlink(lane, p);
            inFlight.decrementAndGet();
            out.add(p);
            p = next;
          }
        }
      }
    }
    return out;
  }

  /** The messages in flight now, left in place. */
  List<Pending> snapshot() {
    List<Pending> out = new ArrayList<>();
    for (Stripe s : stripes) {
      synchronized (s) {
        for (Lane lane : s.lanes.values()) {
          for (Pending p = lane.head; p != null; p = p.nextT) {
            out.add(p);
          }
        }
      }
    }
    return out;
  }

  /** How many messages are in flight. */
  int size() {
    return inFlight.get();
  }
}

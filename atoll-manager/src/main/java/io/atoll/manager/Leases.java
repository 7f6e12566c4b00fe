package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The leases the manager granted, by its own monotonic clock.
 *
 * <p>A pod's lease runs {@code ttl} from when the pod sent its last renewal that succeeded; the
 * manager counts from when it granted that renewal (later), and finds a pod dead only after
 * {@code ttl + margin} since then — by then the pod has fenced itself. Each grant sets a deadline,
 * and no grant ever moves a deadline earlier: a pod never shortens a lease it holds, so a starting
 * manager that inherited longer leases from an earlier term ({@link #grant(PodId, long, long)})
 * keeps waiting for them even after the pod renews under its own, shorter lease. A pod being
 * declared gone is refused renewals at once, before the change is saved: a renewal granted
 * meanwhile would let it serve shards about to be given away.
 *
 * <p><b>Pauses.</b> The manager checks for dead pods every few hundred milliseconds. When two
 * checks are further apart than {@code stall} (its process was stopped, its loop starved, or its
 * clock jumped), the time in between is not the pods' fault: their renewals may be waiting in
 * the manager's own queues. Every pod's deadline then moves by the length of the gap, so the
 * pause is not charged to anyone, and nobody is judged by the check that noticed. Only the pause
 * is forgiven: a dead pod is still found once it has been silent for {@code ttl + margin} of the
 * manager's running time, however often the manager pauses. Waiting longer is always safe; only
 * declaring a pod dead early is not.
 *
 * <p>Loop-confined; times are the manager's {@link io.atoll.core.Ticker} nanoseconds.
 */
@GuardedBy("loop")
final class Leases {

  /** A pod found dead, and how long it had been silent. */
  record Expired(PodId pod, long silentNanos) {}

  /**
   * One check for dead pods.
   *
   * @param dead the pods found dead
   * @param stalledNanos how far this check ran late, when it noticed a pause of the manager (else 0)
   */
  record Check(List<Expired> dead, long stalledNanos) {}

  private static final class Grant {
    long last;
    long deadline;

    Grant(long last, long deadline) {
      this.last = last;
      this.deadline = deadline;
    }
  }

  private final long limitNanos;
  private final long stallNanos;
  private final Map<PodId, Grant> grants = new HashMap<>();
  private final Set<PodId> dying = new HashSet<>();
  private boolean checked;
  private long lastCheck;

  /**
   * @param ttl the lease this manager grants
   * @param margin what it waits beyond a lease
   * @param stall a gap between two checks longer than this is a pause of the manager
   */
  Leases(Duration ttl, Duration margin, Duration stall) {
    this.limitNanos = ttl.plus(margin).toNanos();
    this.stallNanos = stall.toNanos();
  }

  /** Grants {@code pod} a lease at {@code now} (a start, a registration). */
  void grant(PodId pod, long now) {
    grant(pod, now, limitNanos);
  }

  /**
   * Counts {@code pod} as renewed at {@code now} with a wait of {@code limitNanos} (a start that
   * inherited a longer lease); a deadline already further away is kept.
   */
  void grant(PodId pod, long now, long limitNanos) {
    Grant g = grants.get(pod);
    if (g == null) {
      grants.put(pod, new Grant(now, now + limitNanos));
    } else {
      g.last = now;
      g.deadline = Math.max(g.deadline, now + limitNanos);
    }
  }

  /** Renews {@code pod}'s lease if {@code config} lists it as active and it is not dying. */
  boolean renew(PodId pod, ClusterConfig config, long now) {
    if (config.isActive(pod) && !dying.contains(pod)) {
      grant(pod, now);
      return true;
    }
    return false;
  }

  /** Whether {@code pod} is being declared gone. */
  boolean isDying(PodId pod) {
    return dying.contains(pod);
  }

  /** From now on {@code pod} gets no renewal. */
  void dying(PodId pod) {
    dying.add(pod);
  }

  /** {@code pod}'s GONE entry is saved: forget it. */
  void gone(PodId pod) {
    grants.remove(pod);
    dying.remove(pod);
  }

  /** How many pods have a lease recorded (bounded by the active pods and those being removed). */
  int size() {
    return grants.size();
  }

  /**
   * The active pods whose wait ran out. Each is reported once: its wait starts again at
   * {@code now} so it is not declared twice while its removal is saved. A pod without a grant
   * gets one now (every pod in the config has a lease from the start or its registration). If
   * this check comes more than the stall threshold after the previous one, every deadline first
   * moves by the gap, and nobody is found dead by this check.
   */
  Check check(List<Pod> active, long now) {
    long stalled = checked && now - lastCheck > stallNanos ? now - lastCheck : 0;
    checked = true;
    lastCheck = now;
    if (stalled > 0) {
      for (Grant g : grants.values()) {
        g.deadline += stalled;
      }
    }
    Set<PodId> activeIds = new HashSet<>(active.size() * 2);
    active.forEach(p -> activeIds.add(p.id()));
    // Grants of pods no longer active (a registration whose save failed, a removal saved by
    // another path) are forgotten, so nothing here outgrows the config.
    dying.removeIf(id -> !activeIds.contains(id));
    grants.keySet().removeIf(id -> !activeIds.contains(id));
    List<Expired> out = new ArrayList<>();
    for (Pod p : active) {
      Grant g = grants.get(p.id());
      if (g == null) {
        grant(p.id(), now);
      } else if (now - g.deadline > 0) {
        out.add(new Expired(p.id(), now - g.last));
        g.last = now;
        g.deadline = now + limitNanos;
      }
    }
    return new Check(out, stalled);
  }

  /**
   * The manager cannot grant leases now (it is not sure it leads its store): the time since the
   * last check is not charged to any pod, as for a pause, and nobody is judged.
   */
  void hold(long now) {
    long gap = checked ? now - lastCheck : 0;
    checked = true;
    lastCheck = now;
    if (gap > 0) {
      for (Grant g : grants.values()) {
        g.deadline += gap;
      }
    }
  }

  /** Whether a check at {@code now} would find the manager paused since the last check. */
  boolean pausedAt(long now) {
    return checked && now - lastCheck > stallNanos;
  }

  /** {@link #check} without the pause detection's report, for tests. */
  List<Expired> expired(List<Pod> active, long now) {
    return check(active, now).dead();
  }
}

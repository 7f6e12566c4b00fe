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
 * {@code ttl + margin} since then — by then the pod has fenced itself. A starting manager counts
 * every pod as renewed at its start. A pod being declared gone is refused renewals at once, before
 * the change is saved: a renewal granted meanwhile would let it serve shards about to be given
 * away.
 *
 * <p>Loop-confined; times are the manager's {@link io.atoll.core.Ticker} nanoseconds.
 */
@GuardedBy("loop")
final class Leases {

  /** A pod found dead, and how long it had been silent. */
  record Expired(PodId pod, long silentNanos) {}

  private final long limitNanos;
  private final Map<PodId, Long> lastGrant = new HashMap<>();
  private final Set<PodId> dying = new HashSet<>();

  Leases(Duration ttl, Duration margin) {
    this.limitNanos = ttl.plus(margin).toNanos();
  }

  /** Grants {@code pod} a lease at {@code now} (a start, a registration). */
  void grant(PodId pod, long now) {
    lastGrant.put(pod, now);
  }

  /** Renews {@code pod}'s lease if {@code config} lists it as active and it is not dying. */
  boolean renew(PodId pod, ClusterConfig config, long now) {
    if (config.isActive(pod) && !dying.contains(pod)) {
      lastGrant.put(pod, now);
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
    lastGrant.remove(pod);
    dying.remove(pod);
  }

  /**
   * The active pods whose lease ran out more than the margin ago. Each is reported once: its
   * grant is reset to {@code now} so it is not declared twice while its removal is saved. A pod
   * without a grant gets one now (every pod in the config has a lease from the start or its
   * registration).
   */
  List<Expired> expired(List<Pod> active, long now) {
    List<Expired> out = new ArrayList<>();
    for (Pod p : active) {
      Long granted = lastGrant.get(p.id());
      if (granted == null) {
        lastGrant.put(p.id(), now);
      } else if (now - granted > limitNanos) {
        lastGrant.put(p.id(), now);
        out.add(new Expired(p.id(), now - granted));
      }
    }
    return out;
  }
}

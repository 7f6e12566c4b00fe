package io.atoll.kv.internal.managed;

import java.util.function.LongSupplier;

/**
 * A KV node's lease with the shard manager, by the node's monotonic clock: a renewal that succeeds
 * extends it to its <em>send</em> time plus the lease length (never shortening it), so the node
 * stops serving no later than the manager may count its lease as ended. Thread-safe.
 */
final class NodeLease {
  private final LongSupplier nanoClock;
  private final boolean servesBeforeGrant;
  private long deadline;
  private boolean granted;
  private boolean everGranted;
  /** Declared dead or left: no grant heard later (one sent before) makes it valid again. */
  private boolean revoked;
  private long lastRenewed;
  private long ttlNanos;
  /** Send time of the first renewal that failed since the last success; 0 if none failed. */
  private long failingSince;

  /** A lease of a node that owns no slot in its own view: it may serve before its first grant. */
  NodeLease(LongSupplier nanoClock) {
    this(nanoClock, true);
  }

  /**
   * @param servesBeforeGrant whether the node may serve before its first grant: only if it owns no
   *     slot in its own view. A node started again on a saved view owns the slots it had, which the
   *     manager may have given away meanwhile (it declared the node dead, a replica took over and
   *     took writes): it serves none of them until the manager grants it a lease.
   */
  NodeLease(LongSupplier nanoClock, boolean servesBeforeGrant) {
    this.nanoClock = nanoClock;
    this.servesBeforeGrant = servesBeforeGrant;
  }

  /** A grant heard for a request sent at {@code sentNanos}. */
  synchronized void renewed(long sentNanos, long ttlNanos) {
    if (revoked) {
      return; // a renewal answered after the node left, or was declared dead
    }
    long d = sentNanos + ttlNanos;
    if (!granted || d - deadline > 0) {
      deadline = d;
    }
    granted = true;
    everGranted = true;
    lastRenewed = sentNanos;
    this.ttlNanos = ttlNanos;
    failingSince = 0;
  }

  /** A renewal sent at {@code sentNanos} failed (no answer, or a refused connection). */
  synchronized void renewalFailed(long sentNanos) {
    if (granted && failingSince == 0) {
      failingSince = sentNanos == 0 ? 1 : sentNanos;
    }
  }

  /** Whether renewals fail since the last success. */
  synchronized boolean failing() {
    return failingSince != 0;
  }

  /** The length of the last lease granted, 0 before the first grant. */
  synchronized long ttlNanos() {
    return ttlNanos;
  }

  /**
   * Extends a live lease to {@code deadline} without a grant (never shortening it, and never
   * reviving one that lapsed or was revoked): how a node rides out a manager that is down, see
   * {@link ManagerOutage}. Not a renewal: {@link #renewedMillisAgo} is unchanged, so peers that
   * ask keep seeing that nobody reaches the manager.
   *
   * @return whether the lease was live (and now runs at least until {@code deadline})
   */
  synchronized boolean extend(long deadline) {
    if (!valid()) {
      return false;
    }
    if (deadline - this.deadline > 0) {
      this.deadline = deadline;
    }
    return true;
  }

  /** Whether the node holds a live lease now. */
  synchronized boolean valid() {
    return granted && nanoClock.getAsLong() - deadline < 0;
  }

  /**
   * Whether the node may serve keys: not once a lease it held lapsed or was revoked. Before its
   * first grant, only if it may ({@code servesBeforeGrant}: it owns no slot in its own view, so it
   * serves only keys a source hands it, with ASKING, while the manager's answer to its registration
   * is on its way).
   */
  synchronized boolean serving() {
    return everGranted ? valid() : servesBeforeGrant && !revoked;
  }

  /** Milliseconds since the last renewal was sent that succeeded, -1 if none. */
  synchronized long renewedMillisAgo() {
    return granted ? (nanoClock.getAsLong() - lastRenewed) / 1_000_000 : -1;
  }

  /** Never valid again (declared dead, or left), whatever renewal is answered later. */
  synchronized void revoke() {
    revoked = true;
    granted = false;
    failingSince = 0;
  }
}

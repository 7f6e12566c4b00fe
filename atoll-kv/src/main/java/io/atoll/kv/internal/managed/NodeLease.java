package io.atoll.kv.internal.managed;

import java.util.function.LongSupplier;

/**
 * A KV node's lease with the shard manager, by the node's monotonic clock: a renewal that succeeds
 * extends it to its <em>send</em> time plus the lease length (never shortening it), so the node
 * stops serving no later than the manager may count its lease as ended. Thread-safe.
 */
final class NodeLease {
  private final LongSupplier nanoClock;
  private long deadline;
  private boolean granted;
  private boolean everGranted;
  private long lastRenewed;

  NodeLease(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
  }

  /** A grant heard for a request sent at {@code sentNanos}. */
  synchronized void renewed(long sentNanos, long ttlNanos) {
    long d = sentNanos + ttlNanos;
    if (!granted || d - deadline > 0) {
      deadline = d;
    }
    granted = true;
    everGranted = true;
    lastRenewed = sentNanos;
  }

  /** Whether the node holds a live lease now. */
  synchronized boolean valid() {
    return granted && nanoClock.getAsLong() - deadline < 0;
  }

  /**
   * Whether the node may serve keys: not once a lease it held lapsed or was revoked. Before its
   * first grant it owns no slot in its own view, so it serves only keys a source hands it (with
   * ASKING) while the manager's answer to its registration is on its way.
   */
  synchronized boolean serving() {
    return !everGranted || valid();
  }

  /** Milliseconds since the last renewal was sent that succeeded, -1 if none. */
  synchronized long renewedMillisAgo() {
    return granted ? (nanoClock.getAsLong() - lastRenewed) / 1_000_000 : -1;
  }

  /** Never valid again (declared dead, or left). */
  synchronized void revoke() {
    granted = false;
  }
}

package io.atoll.kv.internal.managed;

import io.atoll.core.PodAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides, while a KV node's lease renewals fail, whether the shard manager is <em>down</em>
 * rather than merely unreachable from here, and if so extends the node's lease: how a KV node
 * rides out a manager restart, with the entity runtime's rule ({@code OutageWatch}) and its
 * safety argument unchanged.
 *
 * <p>The manager counts as down only if (a) a fresh TCP connect to every manager address is
 * refused, so no manager process (leading or standing by) listens at any of them, and (b) no other
 * node of the cluster that answers on its control port renewed within about one renewal period
 * (nodes renew every third of a lease: if the manager runs and only this node cannot reach it,
 * some node always has). Then no manager can be granting anything, and a manager that starts
 * later waits a whole lease plus margin after it starts listening before it moves any slot, while
 * the lease is extended from the check's <em>start</em> by one lease: it ends before that manager
 * may give any of this node's slots away. A lease that lapsed is never revived this way. A manager
 * unreachable for any other reason (partition, frozen process, refused for this node alone while
 * others renew) lets the lease run out, and the node fences itself.
 *
 * <p>Nothing else a node does needs the manager: slots move only by the manager's Unassign, so
 * during an outage the slot table, the migration marks and every key stay where they are, and a
 * hand-off already running finishes with both nodes serving their side as before. Thread-safe.
 */
final class ManagerOutage implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ManagerOutage.class);
  private static final long MIN_STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /** How the checks reach the world: probed by a fresh TCP connect, peers by their Ping. */
  interface Probes {
    /** Whether a fresh TCP connect to {@code manager} was refused (nothing listens there). */
    boolean refused(PodAddress manager);

    /** How long ago the node at control address {@code peer} last renewed; -1 if it did not answer. */
    long peerRenewedMillisAgo(PodAddress peer);
  }

  private final LongSupplier nanoClock;
  private final List<PodAddress> managers;
  private final boolean enabled;
  private final NodeLease lease;
  private final Supplier<List<PodAddress>> peers;
  private final Probes probes;
  private final String me;
  private final AtomicBoolean watching = new AtomicBoolean();
  private volatile boolean managerDown;
  private volatile boolean closed;

  /**
   * @param peers the control addresses of the cluster's other active nodes, as the latest config
   *     names them
   * @param enabled false: never extend (the node fences itself when its lease runs out)
   */
  ManagerOutage(String me, LongSupplier nanoClock, List<PodAddress> managers, boolean enabled, NodeLease lease,
      Supplier<List<PodAddress>> peers, Probes probes) {
    this.me = me;
    this.nanoClock = nanoClock;
    this.managers = List.copyOf(managers);
    this.enabled = enabled;
    this.lease = lease;
    this.peers = peers;
    this.probes = probes;
  }

  /** A renewal succeeded. */
  void renewed() {
    if (managerDown) {
      managerDown = false;
      LOG.info("kv node {}: the shard manager at {} is back", me, managers);
    }
  }

  /** Whether the last check found the manager down (and extended the lease). */
  boolean managerDown() {
    return managerDown;
  }

  /**
   * A renewal failed: until one succeeds or the lease runs out, check every tenth of a lease
   * whether the manager is down and, if so, extend the lease.
   */
  void renewalFailed() {
    if (!enabled || closed || !watching.compareAndSet(false, true)) {
      return;
    }
    Thread.ofVirtual().name("kv-lease-watch").start(() -> {
      try {
        long step = Math.max(MIN_STEP_NANOS, lease.ttlNanos() / 10);
        while (!closed && lease.failing() && lease.valid()) {
          check();
          LockSupport.parkNanos(step); // the pace of the checks, not synchronization
        }
      } finally {
        watching.set(false);
      }
    });
  }

  /**
   * One check during an outage: extends the lease by one lease from the check's start if the
   * manager is down.
   *
   * @return whether it extended the lease
   */
  boolean check() {
    long started = nanoClock.getAsLong();
    if (closed || !lease.valid()) {
      return false;
    }
    for (PodAddress manager : managers) {
      if (!probes.refused(manager)) {
        return false; // a manager (a leader or a standby) may be running there
      }
    }
    long ttlNanos = lease.ttlNanos();
    long recent = TimeUnit.NANOSECONDS.toMillis(ttlNanos / 3 + Math.max(MIN_STEP_NANOS, ttlNanos / 10));
    for (PodAddress peer : peers.get()) {
      long ago = probes.peerRenewedMillisAgo(peer);
      if (ago >= 0 && ago < recent) {
        if (!managerDown) {
          LOG.debug("kv node {}: the shard manager refuses this node but node {} renewed {} ms ago", me, peer, ago);
        }
        return false; // the manager may be alive for others: no ride-through
      }
    }
    if (closed || !lease.extend(started + ttlNanos)) {
      return false; // lapsed while asking: never revived
    }
    if (!managerDown) {
      managerDown = true;
      LOG.warn("kv node {}: the shard manager at {} is down (connection refused, and no other node reaches it);"
          + " serving the slots it holds", me, managers.size() == 1 ? managers.get(0) : managers);
    }
    return true;
  }

  @Override
  public void close() {
    closed = true;
  }
}

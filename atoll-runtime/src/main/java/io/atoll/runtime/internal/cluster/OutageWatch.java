package io.atoll.runtime.internal.cluster;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.PingRequest;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides, while lease renewals fail, whether the manager is down rather than merely unreachable
 * from here, and if so extends the lease: how pods ride out a manager restart.
 *
 * <p>The manager counts as down only if (a) a fresh TCP connect to every manager address is
 * refused, so no manager process (leading or standing by) listens at any of them, and (b) no peer that answers renewed within about one renewal
 * period (peers renew every third of a lease; if the manager runs and only this pod cannot reach
 * it, some peer always has). Then no manager can be granting anyone anything, and a restarted one
 * waits a whole lease (plus margin) after it starts listening before it moves any shard. The lease
 * is extended from the check's start, and never once it has lapsed. A manager that is unreachable
 * for any other reason (partition, frozen process) lets the lease run out, and the pod fences
 * itself. Thread-safe.
 */
final class OutageWatch {

  private static final Logger log = LoggerFactory.getLogger(OutageWatch.class);
  private static final long MIN_STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private final Ticker ticker;
  private final List<PodAddress> managers;
  private final boolean enabled;
  private final View view;
  private final Lease lease;
  private final PeerChannels peers;
  private final AtomicBoolean watching = new AtomicBoolean();
  private volatile boolean managerDown;
  private volatile boolean closed;

  OutageWatch(Ticker ticker, List<PodAddress> managers, boolean enabled, View view, Lease lease,
      PeerChannels peers) {
    this.ticker = ticker;
    this.managers = List.copyOf(managers);
    this.enabled = enabled;
    this.view = view;
    this.lease = lease;
    this.peers = peers;
  }

  /** A renewal succeeded. */
  void renewed(PodId me) {
    if (managerDown) {
      managerDown = false;
      log.info("pod {}: the shard manager at {} is back", me, managers);
    }
  }

  /**
   * A renewal failed: until one succeeds or the lease runs out, check every tenth of a lease
   * whether the manager is down and, if so, extend the lease.
   */
  void renewalFailed() {
    if (!enabled || closed || !watching.compareAndSet(false, true)) {
      return;
    }
    Thread.ofVirtual().name("atoll-lease-watch").start(() -> {
      try {
        long step = Math.max(MIN_STEP_NANOS, lease.ttlNanos() / 10);
        while (!closed && lease.failing() && lease.valid()) {
          probe();
          LockSupport.parkNanos(step); // the pace of the checks
        }
      } finally {
        watching.set(false);
      }
    });
  }

  /** One check during an outage. */
  private void probe() {
    long started = ticker.nanoTime();
    if (closed || !lease.valid(started)) {
      return;
    }
    for (PodAddress manager : managers) {
      if (Wire.probe(manager, 1000) != Wire.Probe.REFUSED) {
        return; // a manager (a leader or a standby) may be running there
      }
    }
    long ttlNanos = lease.ttlNanos();
    long recent = TimeUnit.NANOSECONDS.toMillis(ttlNanos / 3 + Math.max(MIN_STEP_NANOS, ttlNanos / 10));
    for (PodId peer : view.peers()) {
      long ago = peerRenewedMillisAgo(peer);
      if (ago >= 0 && ago < recent) {
        if (!managerDown) {
          log.debug("pod {}: the shard manager refuses this pod but pod {} renewed {} ms ago", view.self(), peer,
              ago);
        }
        return; // the manager may be alive for others: no ride-through
      }
    }
    if (closed || !lease.valid()) {
      return; // lapsed while asking: never revived
    }
    if (!managerDown) {
      managerDown = true;
      log.warn("pod {}: the shard manager at {} is down (connection refused, and no peer reaches it); serving"
          + " the shards it holds", view.self(), managers.size() == 1 ? managers.get(0) : managers);
    }
    lease.extend(started + ttlNanos);
  }

  /** Asks a peer how long ago its last renewal succeeded; -1 if it does not answer in time. */
  private long peerRenewedMillisAgo(PodId peer) {
    try {
      return PodServiceGrpc.newBlockingStub(peers.channel(peer))
          .withDeadlineAfter(500, TimeUnit.MILLISECONDS)
          .ping(PingRequest.getDefaultInstance())
          .getLeaseRenewedMillisAgo();
    } catch (StatusRuntimeException e) {
      return -1;
    }
  }

  void close() {
    closed = true;
  }
}

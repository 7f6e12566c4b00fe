package io.atoll.runtime.internal;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodRequest;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodResponse;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RegisterResponse;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.RenewLeaseResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnregisterRequest;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pod's side of the shard manager: registration, the lease keeper, the watch on new configs,
 * and unregistration.
 *
 * <p><b>Lease keeping.</b> Renewals go every third of the lease. A renewal that succeeds extends
 * the lease to its send time plus the lease length. One that fails extends nothing, unless (a) a
 * fresh TCP connect to the manager's address is refused, so no manager process listens there, and
 * (b) no peer that answers renewed since this pod's renewals began to fail, so the manager is not
 * merely unreachable from here. Then no manager can be granting anyone anything, and a restarted
 * one waits a whole lease (plus margin) after it starts listening before it moves any shard; the
 * pod keeps serving what it holds, which is how pods ride out a manager restart. A lapsed lease is
 * never revived this way. A manager that is unreachable for any other reason (partition, frozen
 * process) lets the lease run out, and the pod fences itself. The ride-through can be turned off
 * ({@code Sharding.Builder.keepServingWhileManagerDown(false)}).
 */
final class ManagerLink {

  private static final Logger log = LoggerFactory.getLogger(ManagerLink.class);

  private final PodRuntime rt;
  private final PodAddress address;
  private final ManagedChannel channel;
  private final ScheduledExecutorService renewTimer;
  private final AtomicBoolean renewing = new AtomicBoolean();
  private final Map<PodId, Long> lastUnhealthy = new ConcurrentHashMap<>();
  private volatile long ttlNanos = TimeUnit.SECONDS.toNanos(10);
  private volatile long term;
  private volatile boolean registering;
  private volatile boolean closed;
  private volatile boolean managerDown;
  private volatile long renewedAt;
  private volatile long failingSince;
  private final boolean rideThrough;
  private final AtomicBoolean watchingOutage = new AtomicBoolean();
  private ScheduledFuture<?> renewals;
  private volatile ClientCallStreamObserver<WatchRequest> watchCall;
  private long watchBackoffMillis;

  ManagerLink(PodRuntime rt, PodAddress address, boolean rideThrough) {
    this.rt = rt;
    this.address = address;
    this.rideThrough = rideThrough;
    this.channel = Wire.channel(address);
    this.renewTimer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "atoll-lease-keeper");
      t.setDaemon(true);
      return t;
    });
  }

  private ShardManagerServiceGrpc.ShardManagerServiceBlockingStub blocking(long millis) {
    return ShardManagerServiceGrpc.newBlockingStub(Wire.reconnecting(channel)).withWaitForReady()
        .withDeadlineAfter(millis, TimeUnit.MILLISECONDS);
  }

  private ShardManagerServiceGrpc.ShardManagerServiceStub async() {
    return ShardManagerServiceGrpc.newStub(Wire.reconnecting(channel)).withWaitForReady();
  }

  /** The newest manager term seen. */
  long term() {
    return term;
  }

  private void seeTerm(long t) {
    if (t > term) {
      term = t;
    }
  }

  /**
   * Reads the current config from the manager, retrying until {@code timeout}.
   *
   * @throws IllegalStateException naming the manager and the last error if it never answered
   */
  ClusterConfig fetchConfig(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long backoff = 50;
    for (;;) {
      try {
        ConfigBytes b = blocking(2000).getAssignments(GetAssignmentsRequest.getDefaultInstance());
        return Wire.config(b);
      } catch (StatusRuntimeException e) {
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException("cannot reach the shard manager at " + address + " within "
              + timeout.toMillis() + " ms: " + Wire.describe(e) + "; is it running (atoll manager)?", e);
        }
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(backoff)); // retry pacing, not synchronization
      backoff = Math.min(backoff * 2, 1000);
    }
  }

  /**
   * Registers this pod (its current incarnation), retrying until {@code timeout}; then renews the
   * lease every third of it.
   *
   * @throws IllegalStateException if the manager never accepted the registration
   */
  void register(Duration timeout) {
    registering = true;
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      long backoff = 50;
      for (;;) {
        if (closed) {
          return;
        }
        long sent = rt.ticker.nanoTime();
        try {
          RegisterResponse r = blocking(5000).register(RegisterRequest.newBuilder()
              .setPod(Wire.info(rt.selfPod())).build());
          if (r.getNumberOfShards() != rt.numberOfShards()) {
            throw new IllegalStateException("the shard manager at " + address + " has " + r.getNumberOfShards()
                + " shards (expected: " + rt.numberOfShards() + ")");
          }
          ttlNanos = TimeUnit.MILLISECONDS.toNanos(r.getLeaseTtlMillis());
          seeTerm(r.getManagerTerm());
          renewedAt = rt.ticker.nanoTime();
          failingSince = 0;
          rt.extendLease(sent + ttlNanos);
          rt.onConfig(Wire.config(r.getConfig()));
          log.info("pod {} registered with the shard manager at {} (term {}, lease {} ms)", rt.self(), address,
              r.getManagerTerm(), r.getLeaseTtlMillis());
          startRenewals();
          return;
        } catch (StatusRuntimeException e) {
          if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("pod " + rt.self() + " could not register with the shard manager at "
                + address + " within " + timeout.toMillis() + " ms: " + Wire.describe(e), e);
          }
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(backoff)); // retry pacing
        backoff = Math.min(backoff * 2, 1000);
      }
    } finally {
      registering = false;
    }
  }

  private synchronized void startRenewals() {
    if (renewals != null || closed) {
      return;
    }
    long every = Math.max(1, TimeUnit.NANOSECONDS.toMillis(ttlNanos) / 3);
    renewals = renewTimer.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
  }

  private void renew() {
    if (closed || registering || !renewing.compareAndSet(false, true)) {
      return;
    }
    long sent = rt.ticker.nanoTime();
    PodId me = rt.self();
    long deadline = Math.max(100, TimeUnit.NANOSECONDS.toMillis(ttlNanos) / 3);
    try {
      // No waitForReady: a refused connection must fail the renewal at once, not at its deadline.
      ShardManagerServiceGrpc.newStub(Wire.reconnecting(channel)).withDeadlineAfter(deadline, TimeUnit.MILLISECONDS)
          .renewLease(
          RenewLeaseRequest.newBuilder().setPod(Wire.ref(me)).build(), new StreamObserver<>() {
            @Override
            public void onNext(RenewLeaseResponse r) {
              seeTerm(r.getManagerTerm());
              if (r.getStatus() == RenewLeaseResponse.Status.RENEWED) {
                renewedAt = rt.ticker.nanoTime();
                failingSince = 0;
                ttlNanos = TimeUnit.MILLISECONDS.toNanos(r.getLeaseTtlMillis());
                if (managerDown) {
                  managerDown = false;
                  log.info("pod {}: the shard manager at {} is back", me, address);
                }
                rt.extendLease(sent + ttlNanos);
              } else if (me.equals(rt.self())) {
                rt.rejoin("the shard manager does not know it (declared dead?)");
              }
            }

            @Override
            public void onError(Throwable t) {
              if (failingSince == 0) {
                failingSince = sent;
              }
              renewing.set(false);
              watchOutage();
            }

            @Override
            public void onCompleted() {
              renewing.set(false);
            }
          });
    } catch (RuntimeException e) {
      renewing.set(false);
    }
  }

  /**
   * Renewals are failing: until one succeeds or the lease runs out, check every tenth of a lease
   * whether the manager is down (see the class comment) and, if so, extend the lease.
   */
  private void watchOutage() {
    if (!rideThrough || closed || !watchingOutage.compareAndSet(false, true)) {
      return;
    }
    Thread.ofVirtual().name("atoll-lease-watch").start(() -> {
      try {
        long step = Math.max(TimeUnit.MILLISECONDS.toNanos(50), ttlNanos / 10);
        while (!closed && failingSince != 0 && rt.leaseValid()) {
          probe();
          LockSupport.parkNanos(step); // the pace of the checks
        }
      } finally {
        watchingOutage.set(false);
      }
    });
  }

  /**
   * One check during an outage. The manager counts as down only if a fresh connect to it is
   * refused and no peer renewed within about one renewal period (peers renew every third of a
   * lease; if the manager runs and only this pod cannot reach it, some peer always has). Then the
   * lease is extended from the check's start, and never once it has lapsed.
   */
  private void probe() {
    long started = rt.ticker.nanoTime();
    if (closed || !rt.leaseValid(started)) {
      return;
    }
    if (Wire.probe(address, 1000) != Wire.Probe.REFUSED) {
      return;
    }
    long recent = TimeUnit.NANOSECONDS.toMillis(ttlNanos / 3 + Math.max(TimeUnit.MILLISECONDS.toNanos(50),
        ttlNanos / 10));
    for (PodId peer : rt.peers()) {
      long ago = peerRenewedMillisAgo(peer);
      if (ago >= 0 && ago < recent) {
        if (!managerDown) {
          log.debug("pod {}: the shard manager refuses this pod but pod {} renewed {} ms ago", rt.self(), peer, ago);
        }
        return; // the manager may be alive for others: no ride-through
      }
    }
    if (closed || !rt.leaseValid()) {
      return; // lapsed while asking: never revived
    }
    if (!managerDown) {
      managerDown = true;
      log.warn("pod {}: the shard manager at {} is down (connection refused, and no peer reaches it); serving"
          + " the shards it holds", rt.self(), address);
    }
    rt.extendLease(started + ttlNanos);
  }

  /** Asks a peer how long ago its last renewal succeeded; -1 if it does not answer in time. */
  private long peerRenewedMillisAgo(PodId peer) {
    try {
      return io.atoll.transport.grpc.proto.PodServiceGrpc.newBlockingStub(rt.client(peer).channel())
          .withDeadlineAfter(500, TimeUnit.MILLISECONDS)
          .ping(io.atoll.transport.grpc.proto.PingRequest.getDefaultInstance())
          .getLeaseRenewedMillisAgo();
    } catch (StatusRuntimeException e) {
      return -1;
    }
  }

  long renewedMillisAgo() {
    long at = renewedAt;
    return at == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(rt.ticker.nanoTime() - at);
  }

  /** Follows the manager's configs, reconnecting after failures. */
  void watch() {
    if (closed) {
      return;
    }
    try {
      async().watch(WatchRequest.newBuilder().setPod(Wire.ref(rt.self())).build(),
          new ClientResponseObserver<WatchRequest, ConfigBytes>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<WatchRequest> call) {
              watchCall = call;
            }

            @Override
            public void onNext(ConfigBytes b) {
              watchBackoffMillis = 0;
              try {
                rt.onConfig(Wire.config(b));
              } catch (RuntimeException e) {
                log.warn("pod {}: ignored a config from the manager: {}", rt.self(), e.getMessage());
              }
            }

            @Override
            public void onError(Throwable t) {
              rewatch();
            }

            @Override
            public void onCompleted() {
              rewatch();
            }
          });
    } catch (RuntimeException e) {
      rewatch();
    }
  }

  private void rewatch() {
    if (closed) {
      return;
    }
    watchBackoffMillis = Math.min(Math.max(watchBackoffMillis * 2, 100), 2000);
    try {
      renewTimer.schedule(this::watch, watchBackoffMillis, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closed
    }
  }

  /** Tells the manager this pod leaves; waits up to five seconds. */
  void unregister() {
    try {
      blocking(5000).unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(rt.self())).build());
      log.info("pod {} unregistered", rt.self());
    } catch (StatusRuntimeException e) {
      log.warn("pod {}: could not unregister from the shard manager at {} ({}); its shards move when its lease"
          + " runs out", rt.self(), address, Wire.describe(e));
    }
  }

  /** Reports an unreachable peer, at most every five seconds per peer. */
  void notifyUnhealthy(PodId peer) {
    long now = System.nanoTime();
    Long last = lastUnhealthy.get(peer);
    if (last != null && now - last < TimeUnit.SECONDS.toNanos(5)) {
      return;
    }
    lastUnhealthy.put(peer, now);
    try {
      async().withDeadlineAfter(2, TimeUnit.SECONDS).notifyUnhealthyPod(NotifyUnhealthyPodRequest.newBuilder()
          .setPod(Wire.ref(peer)).setReporter(Wire.ref(rt.self())).build(), new StreamObserver<>() {
            @Override
            public void onNext(NotifyUnhealthyPodResponse v) {}

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
          });
    } catch (RuntimeException e) {
      // best effort
    }
  }

  void close() {
    closed = true;
    synchronized (this) {
      if (renewals != null) {
        renewals.cancel(false);
      }
    }
    ClientCallStreamObserver<WatchRequest> w = watchCall;
    if (w != null) {
      w.cancel("pod closing", null);
    }
    renewTimer.shutdownNow();
    Wire.close(channel);
  }
}

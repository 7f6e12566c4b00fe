package io.atoll.kv.internal.managed;

import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
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
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KV node's side of the shard manager, over the transport's generated stubs: register, renew the
 * lease every third of it, follow the manager's configs (Watch), drain and unregister. The
 * runtime's {@code ManagerLink} does the same for entity pods but is built from the runtime's
 * view, lease and peer rooms; a KV node has none of them, and does not ride out a manager outage
 * (its lease lapses and it fences itself).
 *
 * <p>Configs go to {@code onConfig} (in the manager's terms); an UNKNOWN_POD answer to a renewal
 * (the manager declared this node dead and gave its slots away) goes to {@code onDeclaredDead}.
 */
final class ManagerClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ManagerClient.class);

  private final PodAddress manager;
  private final ManagedChannel channel;
  private final Pod me;
  private final NodeLease lease;
  private final LongSupplier nanoClock;
  private final Consumer<ClusterConfig> onConfig;
  private final Runnable onDeclaredDead;
  private final ScheduledExecutorService timer;
  private final AtomicBoolean renewing = new AtomicBoolean();
  private volatile boolean closed;
  private volatile long ttlNanos;
  private volatile long term;
  private volatile ClusterId clusterId = ClusterId.NONE;
  private volatile ClientCallStreamObserver<WatchRequest> watchCall;

  ManagerClient(PodAddress manager, Pod me, NodeLease lease, LongSupplier nanoClock, Consumer<ClusterConfig> onConfig,
      Runnable onDeclaredDead) {
    this.manager = manager;
    this.me = me;
    this.lease = lease;
    this.nanoClock = nanoClock;
    this.onConfig = onConfig;
    this.onDeclaredDead = onDeclaredDead;
    this.channel = Wire.channel(manager);
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "kv-lease-keeper");
      t.setDaemon(true);
      return t;
    });
  }

  private ShardManagerServiceGrpc.ShardManagerServiceBlockingStub blocking(long millis) {
    return ShardManagerServiceGrpc.newBlockingStub(Wire.reconnecting(channel)).withWaitForReady()
        .withDeadlineAfter(millis, TimeUnit.MILLISECONDS);
  }

  /** The newest manager term seen. */
  long term() {
    return term;
  }

  /** The manager's cluster id (NONE before registering). */
  ClusterId clusterId() {
    return clusterId;
  }

  /**
   * Registers, retrying until {@code timeout}; then renews every third of the lease and watches.
   *
   * @throws IllegalStateException naming the manager and the last error if it never accepted
   */
  void register(Duration timeout) {
    long deadline = nanoClock.getAsLong() + timeout.toNanos();
    long backoff = 50_000_000L;
    while (true) {
      long sent = nanoClock.getAsLong();
      try {
        RegisterResponse r = blocking(5000).register(RegisterRequest.newBuilder().setPod(Wire.info(me)).build());
        ClusterConfig config = Wire.config(r.getConfig());
        ManagedConfigs.toKv(config); // refuses a manager without 16384 shards, saying so
        clusterId = config.clusterId();
        term = r.getManagerTerm();
        ttlNanos = TimeUnit.MILLISECONDS.toNanos(r.getLeaseTtlMillis());
        lease.renewed(sent, ttlNanos);
        onConfig.accept(config);
        long every = Math.max(1, r.getLeaseTtlMillis() / 3);
        timer.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
        LOG.info("kv node {} registered with the shard manager at {} (term {}, lease {} ms)", me.id(), manager,
            r.getManagerTerm(), r.getLeaseTtlMillis());
        watch();
        return;
      } catch (StatusRuntimeException e) {
        if (nanoClock.getAsLong() - deadline > 0) {
          throw new IllegalStateException("could not register with the shard manager at " + manager + " within "
              + timeout.toMillis() + " ms: " + Wire.describe(e) + "; is it running (atoll manager --shards 16384)?", e);
        }
      }
      LockSupport.parkNanos(backoff); // retry pacing, not synchronization
      backoff = Math.min(1_000_000_000L, backoff * 2);
    }
  }

  private void renew() {
    if (closed || !renewing.compareAndSet(false, true)) {
      return;
    }
    long sent = nanoClock.getAsLong();
    long deadline = Math.max(100, TimeUnit.NANOSECONDS.toMillis(ttlNanos) / 3);
    try {
      ShardManagerServiceGrpc.newStub(Wire.reconnecting(channel)).withDeadlineAfter(deadline, TimeUnit.MILLISECONDS)
          .renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(me.id())).setClusterId(clusterId.toString())
              .build(), new StreamObserver<>() {
                @Override
                public void onNext(RenewLeaseResponse r) {
                  term = Math.max(term, r.getManagerTerm());
                  if (r.getStatus() == RenewLeaseResponse.Status.RENEWED) {
                    lease.renewed(sent, TimeUnit.MILLISECONDS.toNanos(r.getLeaseTtlMillis()));
                  } else if (!closed) {
                    lease.revoke();
                    onDeclaredDead.run();
                  }
                }

                @Override
                public void onError(Throwable t) {
                  renewing.set(false);
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

  private void watch() {
    if (closed) {
      return;
    }
    ShardManagerServiceGrpc.newStub(Wire.reconnecting(channel)).withWaitForReady().watch(
        WatchRequest.newBuilder().setPod(Wire.ref(me.id())).build(),
        new ClientResponseObserver<WatchRequest, ConfigBytes>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<WatchRequest> call) {
            watchCall = call;
          }

          @Override
          public void onNext(ConfigBytes b) {
            try {
              onConfig.accept(Wire.config(b));
            } catch (RuntimeException e) {
              LOG.warn("kv node {}: ignored a config from the manager: {}", me.id(), e.getMessage());
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
  }

  private void rewatch() {
    if (closed) {
      return;
    }
    try {
      timer.schedule(this::watch, 200, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // closed
    }
  }

  /**
   * Asks the manager to move every slot of this node to the others (the node stays a member).
   *
   * @throws IllegalStateException if the manager refused or did not answer
   */
  void drain() {
    try {
      blocking(5000).unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(me.id())).setDrain(true).build());
    } catch (StatusRuntimeException e) {
      throw new IllegalStateException("the shard manager at " + manager + " did not start draining this node: "
          + Wire.describe(e), e);
    }
  }

  /** Leaves the cluster; false if the manager did not answer (the lease then runs out). */
  boolean unregister() {
    try {
      blocking(5000).unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(me.id())).build());
      return true;
    } catch (StatusRuntimeException e) {
      LOG.warn("kv node {}: could not unregister from the shard manager at {} ({}); its slots move when its lease"
          + " runs out", me.id(), manager, Wire.describe(e));
      return false;
    }
  }

  @Override
  public void close() {
    closed = true;
    ClientCallStreamObserver<WatchRequest> w = watchCall;
    if (w != null) {
      w.cancel("kv node closing", null);
    }
    timer.shutdownNow();
    Wire.close(channel);
  }
}

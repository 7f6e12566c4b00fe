package io.atoll.kv.internal.managed;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.kv.internal.cluster.NodeKey;
import io.atoll.runtime.internal.cluster.ManagerAddresses;
import io.atoll.runtime.internal.util.BackoffPolicy;
import io.atoll.transport.grpc.LeaderHint;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RegisterResponse;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.RenewLeaseResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnregisterRequest;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.atoll.transport.grpc.security.ManagerTrust;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.AbstractStub;
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
 * view, lease and peer rooms, which a KV node does not have. While renewals fail it tells the
 * {@link ManagerOutage}, which rides out a manager that is down with the runtime's rule.
 *
 * <p>Like a pod, it talks to one of several managers at a time ({@link ManagerAddresses}): when a
 * call fails it moves on to the leader a standby named ({@link LeaderHint}), else to the next
 * address; grants from a manager term older than the highest seen are ignored. Every config it
 * takes from a manager must be signed by the manager's key ({@link ManagerTrust}, which then
 * checks pushes and Unassigns on the control port), and every renewal, drain and unregistration
 * carries the credential Register gave this incarnation.
 *
 * <p>Configs go to {@code onConfig} (in the manager's terms); an UNKNOWN_POD answer to a renewal,
 * or a refusal of its credential (PERMISSION_DENIED: the manager declared this node dead and gave
 * its slots away, or a manager with another key took over), revokes the lease and goes to
 * {@code onDeclaredDead}, once, on this client's timer thread: never on a gRPC I/O thread, which a
 * callback that blocks (a process exiting while its shutdown hook unregisters) would stall for every
 * call on the channel, the unregistration included. Once the node has asked to unregister, a
 * renewal that finds it unknown is the manager having heard it: not a death.
 */
final class ManagerClient implements AutoCloseable {

  /** Pause before watching again after the watch broke: the runtime's pacing for the same stream. */
  private static final BackoffPolicy WATCH_BACKOFF =
      BackoffPolicy.exponential(Duration.ofMillis(100), Duration.ofSeconds(2));
  private volatile long watchBackoffNanos;
  private static final Logger LOG = LoggerFactory.getLogger(ManagerClient.class);

  private final ManagerAddresses managers;
  private final ManagerTrust trust;
  private final Pod me;
  private final NodeLease lease;
  private final ManagerOutage outage;
  private final LongSupplier nanoClock;
  private final Consumer<ClusterConfig> onConfig;
  private final Runnable onDeclaredDead;
  private volatile boolean unregistering;
  private final ScheduledExecutorService timer;
  private final AtomicBoolean renewing = new AtomicBoolean();
  private final AtomicBoolean dead = new AtomicBoolean();
  private volatile boolean closed;
  private volatile long ttlNanos;
  private volatile long term;
  private volatile long renewBackoffNanos;
  private volatile ClusterId clusterId = ClusterId.NONE;
  /** The credential Register gave this incarnation; empty before. */
  private volatile ByteString credential = ByteString.EMPTY;
  private volatile ClientCallStreamObserver<WatchRequest> watchCall;
  /** Takes the key Register gives, by which this node proves itself to the others. */
  private final NodeKey nodeKey;

  /**
   * @param managers the managers to talk to (closed by {@link #close})
   * @param trust checks the manager's signature on every config; learns its key from Register
   */
  ManagerClient(ManagerAddresses managers, ManagerTrust trust, Pod me, NodeLease lease, ManagerOutage outage,
      LongSupplier nanoClock, Consumer<ClusterConfig> onConfig, NodeKey nodeKey, Runnable onDeclaredDead) {
    this.nodeKey = nodeKey;
    this.outage = outage;
    this.managers = managers;
    this.trust = trust;
    this.me = me;
    this.lease = lease;
    this.nanoClock = nanoClock;
    this.onConfig = onConfig;
    this.onDeclaredDead = onDeclaredDead;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "kv-lease-keeper");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * With one manager, a call waits for it to be reachable (it may be restarting); with several, a
   * call to one that cannot be reached fails at once, so that the client moves on to another.
   */
  private <S extends AbstractStub<S>> S ready(S stub) {
    return managers.all().size() == 1 ? stub.withWaitForReady() : stub;
  }

  private ShardManagerServiceGrpc.ShardManagerServiceBlockingStub blocking(long millis) {
    return ready(ShardManagerServiceGrpc.newBlockingStub(Wire.reconnecting(managers.channel())))
        .withDeadlineAfter(millis, TimeUnit.MILLISECONDS);
  }

  private String describe() {
    return managers.all().size() == 1 ? managers.all().get(0).toString() : managers.all().toString();
  }

  /** The newest manager term seen. */
  long term() {
    return term;
  }

  /** The manager's cluster id (NONE before registering). */
  ClusterId clusterId() {
    return clusterId;
  }

  /** The credential of this incarnation (empty before registering). */
  ByteString credential() {
    return credential;
  }

  /**
   * The manager refused to register this node's incarnation for good: it was declared gone (its
   * lease ran out while the node was down). A node restarted on its data directory then joins as a
   * new incarnation, without the keys it kept.
   */
  static final class IncarnationGone extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    IncarnationGone(String message) {
      super(message);
    }
  }

  /**
   * Registers again as an incarnation that registered before this process started (an Atoll KV
   * node restarted on its data directory): Register presents {@code credential} (the one it was
   * given then; empty if unknown) and {@code cluster}, so that a manager of another cluster refuses
   * and one that took over from the first accepts the same TLS identity.
   */
  void rejoin(ByteString credential, ClusterId cluster) {
    this.credential = java.util.Objects.requireNonNull(credential, "credential");
    this.clusterId = java.util.Objects.requireNonNull(cluster, "cluster");
  }

  /**
   * Registers, retrying until {@code timeout} (moving to the leader a standby names, or to the
   * next manager, after each failure); then renews every third of the lease and watches.
   *
   * @throws IllegalStateException naming the managers and the last error if none accepted
   */
  void register(Duration timeout) {
    long deadline = nanoClock.getAsLong() + timeout.toNanos();
    long backoff = 50_000_000L;
    while (true) {
      long sent = nanoClock.getAsLong();
      PodAddress at = managers.current();
      try {
        RegisterRequest.Builder request = RegisterRequest.newBuilder().setPod(Wire.info(me)).setCredential(credential);
        if (!clusterId.equals(ClusterId.NONE)) {
          request.setClusterId(clusterId.toString());
        }
        RegisterResponse r = blocking(5000).register(request.build());
        ClusterConfig config = trust.fromManager(r.getConfig()); // refuses an unsigned or badly signed config
        ManagedConfigs.toKv(config); // refuses a manager without 16384 shards, saying so
        if (r.getManagerTerm() < term) {
          throw Status.FAILED_PRECONDITION.withDescription("the shard manager at " + at + " answered under term "
              + r.getManagerTerm() + ", older than term " + term + " seen (a deposed manager)").asRuntimeException();
        }
        credential = r.getCredential();
        nodeKey.set(r.getKvNodeKey().toByteArray());
        clusterId = config.clusterId();
        term = r.getManagerTerm();
        ttlNanos = TimeUnit.MILLISECONDS.toNanos(r.getLeaseTtlMillis());
        lease.renewed(sent, ttlNanos);
        onConfig.accept(config);
        long every = Math.max(1, r.getLeaseTtlMillis() / 3);
        timer.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
        LOG.info("kv node {} registered with the shard manager at {} (term {}, lease {} ms)", me.id(), at,
            r.getManagerTerm(), r.getLeaseTtlMillis());
        watch();
        return;
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() == Status.Code.FAILED_PRECONDITION
            && String.valueOf(e.getStatus().getDescription()).startsWith(Wire.INCARNATION_GONE)) {
          throw new IncarnationGone(me.id() + ": " + e.getStatus().getDescription());
        }
        if (nanoClock.getAsLong() - deadline > 0) {
          throw new IllegalStateException("could not register with the shard manager at " + describe() + " within "
              + timeout.toMillis() + " ms: " + Wire.describe(e) + "; is it running (atoll manager --shards 16384)?", e);
        }
        managers.failed(at, e);
      }
      LockSupport.parkNanos(backoff); // retry pacing, not synchronization
      backoff = Math.min(1_000_000_000L, backoff * 2);
    }
  }

  private void renew() {
    if (closed || dead.get() || !renewing.compareAndSet(false, true)) {
      return;
    }
    long sent = nanoClock.getAsLong();
    long deadline = Math.max(100, TimeUnit.NANOSECONDS.toMillis(ttlNanos) / 3);
    PodAddress at = managers.current();
    try {
      // No waitForReady: a refused connection must fail the renewal at once, not at its deadline.
      ShardManagerServiceGrpc.newStub(Wire.reconnecting(managers.channel()))
          .withDeadlineAfter(deadline, TimeUnit.MILLISECONDS)
          .renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(me.id())).setClusterId(clusterId.toString())
              .setCredential(credential).build(), new StreamObserver<>() {
                @Override
                public void onNext(RenewLeaseResponse r) {
                  if (r.getManagerTerm() < term) {
                    return; // a deposed manager that has not noticed yet: its grant is worth nothing
                  }
                  term = r.getManagerTerm();
                  if (r.getStatus() == RenewLeaseResponse.Status.RENEWED) {
                    renewBackoffNanos = 0;
                    managers.answered(at); // the link has settled on a leader
                    lease.renewed(sent, TimeUnit.MILLISECONDS.toNanos(r.getLeaseTtlMillis()));
                    outage.renewed();
                  } else {
                    declaredDead("the shard manager does not know it");
                  }
                }

                @Override
                public void onError(Throwable t) {
                  renewing.set(false);
                  Status s = Status.fromThrowable(t);
                  if (s.getCode() == Status.Code.PERMISSION_DENIED) {
                    declaredDead("the shard manager refused its credential: " + s.getDescription());
                    return;
                  }
                  lease.renewalFailed(sent);
                  outage.renewalFailed();
                  if (managers.failed(at, t)) {
                    retryRenewalSoon(); // another manager: try it before the next period
                  }
                }

                @Override
                public void onCompleted() {
                  renewing.set(false);
                }
              });
    } catch (RuntimeException e) {
      renewing.set(false);
      lease.renewalFailed(sent);
      outage.renewalFailed();
    }
  }

  /** Whether the manager has declared this node dead (its lease is revoked for good). */
  boolean declaredDead() {
    return dead.get();
  }

  private void declaredDead(String why) {
    if (closed || unregistering || !dead.compareAndSet(false, true)) {
      return;
    }
    lease.revoke();
    LOG.warn("kv node {}: {}", me.id(), why);
    try {
      timer.execute(onDeclaredDead);
    } catch (RejectedExecutionException e) {
      // closed meanwhile: nobody is left to tell
    }
  }

  private void retryRenewalSoon() {
    long wait = Math.min(1_000_000_000L, Math.max(50_000_000L, renewBackoffNanos * 2));
    renewBackoffNanos = wait;
    try {
      timer.schedule(this::renew, wait, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // closed
    }
  }

  private void watch() {
    if (closed) {
      return;
    }
    PodAddress at = managers.current();
    try {
      ready(ShardManagerServiceGrpc.newStub(Wire.reconnecting(managers.channel()))).watch(
          WatchRequest.newBuilder().setPod(Wire.ref(me.id())).build(),
          new ClientResponseObserver<WatchRequest, ConfigBytes>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<WatchRequest> call) {
              watchCall = call;
            }

            @Override
            public void onNext(ConfigBytes b) {
              watchBackoffNanos = 0;
              try {
                onConfig.accept(trust.fromManager(b));
              } catch (RuntimeException e) {
                LOG.warn("kv node {}: ignored a config from the manager: {}", me.id(), e.getMessage());
              }
            }

            @Override
            public void onError(Throwable t) {
              managers.failed(at, t);
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
    try {
      long wait = WATCH_BACKOFF.nextNanos(watchBackoffNanos);
      watchBackoffNanos = wait;
      timer.schedule(this::watch, wait, TimeUnit.NANOSECONDS);
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
      unregisterCall(true);
    } catch (StatusRuntimeException e) {
      throw new IllegalStateException("the shard manager at " + managers.current()
          + " did not start draining this node: " + Wire.describe(e), e);
    }
  }

  /**
   * Leaves the cluster; false if the manager did not answer (the lease then runs out). The lease is
   * revoked first: once the manager has the request it may give this node's remaining slots to
   * another node at once, and a write this node acknowledged after that would be lost.
   */
  boolean unregister() {
    unregistering = true;
    lease.revoke();
    try {
      unregisterCall(false);
      return true;
    } catch (StatusRuntimeException e) {
      LOG.warn("kv node {}: could not unregister from the shard manager at {} ({}); its slots move when its lease"
          + " runs out", me.id(), managers.current(), Wire.describe(e));
      return false;
    }
  }

  /** Unregister (or drain) with this incarnation's credential, at the leader: each manager tried once. */
  private void unregisterCall(boolean drain) {
    UnregisterRequest request = UnregisterRequest.newBuilder().setPod(Wire.ref(me.id())).setDrain(drain)
        .setCredential(credential).build();
    for (int attempt = 0; ; attempt++) {
      PodAddress at = managers.current();
      try {
        blocking(5000).unregister(request);
        return;
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        if (code == Status.Code.PERMISSION_DENIED || code == Status.Code.INVALID_ARGUMENT
            || attempt >= managers.all().size() || !managers.failed(at, e)) {
          throw e;
        }
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    outage.close();
    ClientCallStreamObserver<WatchRequest> w = watchCall;
    if (w != null) {
      w.cancel("kv node closing", null);
    }
    timer.shutdownNow();
    managers.close();
  }
}

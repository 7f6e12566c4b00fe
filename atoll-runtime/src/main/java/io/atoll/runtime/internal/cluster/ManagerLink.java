package io.atoll.runtime.internal.cluster;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.runtime.internal.util.BackoffPolicy;
import io.atoll.runtime.internal.util.GuardedBy;
import io.atoll.runtime.internal.util.LogPacer;
import io.atoll.runtime.internal.util.PodContext;
import io.atoll.runtime.PodSettings;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodRequest;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodResponse;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RegisterResponse;
import io.atoll.transport.grpc.proto.ReleasedRequest;
import io.atoll.transport.grpc.proto.ReleasedResponse;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.atoll.transport.grpc.proto.UnassignResponse;
import io.atoll.transport.grpc.proto.RenewLeaseResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnregisterRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
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
 * The pod's side of the shard manager: registration, the lease keeper, reports of unreachable
 * peers, and unregistration; the watch on new configs is {@link ConfigWatch}.
 *
 * <p><b>Lease keeping.</b> Renewals go every third of the lease. A renewal that succeeds extends
 * the lease to its send time plus the lease length. One that fails extends nothing, unless (a) a
 * fresh TCP connect to the manager's address is refused, so no manager process listens there, and
 * (b) no peer that answers renewed since this pod's renewals began to fail, so the manager is not
 * merely unreachable from here ({@link OutageWatch} checks both). The ride-through can be turned
 * off ({@code Sharding.Builder.keepServingWhileManagerDown(false)}). A renewal that timed out is
 * followed at once ({@link #afterFailure}): while the manager is silent one renewal is always in
 * flight, and a paused manager that resumes answers it within a round trip.
 *
 * <p><b>Several managers.</b> The pod talks to one manager at a time ({@link ManagerAddresses}).
 * When a call fails it moves on — to the leader a standby named, else to the next address — and a
 * failed renewal is retried after a short back-off (50 ms doubling to 1 s) on the new one. Grants
 * from a manager term lower than the highest seen are ignored. While no manager answers, the pod
 * serves the shards it holds until its lease runs out (or rides the outage out, above).
 *
 * <p><b>Entity types.</b> Every Register declares the hosted types (role and hasher); a refusal
 * because a live pod declares one otherwise ends the start at once. Every renewal says the pod
 * declares its types; when the answer asks for them (a manager that started after this pod
 * registered knows none), the pod sends its Register again, once at a time.
 *
 * <p>"Not yet" for the types (ABORTED, {@link Wire#TYPES_PENDING}: the manager waits for the pods
 * it inherited to declare theirs) is retried with the back-off and does not move the pod to a
 * standby; a refusal ({@link Wire#TYPES_REFUSED}) is a {@link TypesRefused}.
 *
 * <p>The lease itself lives in {@link Lease}; this class only talks to the manager and tells the
 * lease what it heard. Every wait reads the injected clock.
 *
 * <p><b>Why this class is long (about 490 lines).</b> Register, renew and the re-declaration the
 * renewal's answer asks for share one state: the manager currently talked to, the highest term
 * seen, the credential of the incarnation, and whether a Register is under way (a re-declaration
 * must not race a rejoin's Register). Splitting register from renew would hand that state back and
 * forth through setters; the parts that need none of it already live apart ({@link ConfigWatch},
 * {@link OutageWatch}, {@link ManagerAddresses}, {@link Lease}).
 */
public final class ManagerLink {

  private static final Logger log = LoggerFactory.getLogger(ManagerLink.class);
  /** Fetching the config and registering: retry pacing while the manager does not answer. */
  static final BackoffPolicy CONNECT_BACKOFF =
      BackoffPolicy.exponential(Duration.ofMillis(50), Duration.ofSeconds(1));
  private static final long UNHEALTHY_REPORT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** What the link reports upward. */
  public interface Callback {
    /** The manager does not know this pod (declared dead?): it must join again as a new incarnation. */
    void unknownToManager(String why);

    /**
     * An Unassign that came in a renewal's answer (the manager cannot reach this pod's port): handle
     * it as one that came by the pod's service, answering {@code out}.
     */
    default void relayedUnassign(UnassignRequest request, StreamObserver<UnassignResponse> out) {
      out.onError(Status.UNIMPLEMENTED.asRuntimeException());
    }
  }

  private final Ticker ticker;
  private final PodSettings settings;
  private final View view;
  private final Lease lease;
  private final PeerChannels peers;
  private final Callback callback;
  private final ManagerAddresses managers;
  private final ScheduledExecutorService renewTimer;
  private final AtomicBoolean renewing = new AtomicBoolean();
  private final Map<PodId, Long> lastUnhealthy = new ConcurrentHashMap<>();
  private volatile long term;
  private volatile boolean registering;
  private volatile boolean closed;
  private final OutageWatch outage;
  @GuardedBy("this")
  private ScheduledFuture<?> renewals;
  private final ConfigWatch watch;
  private volatile long renewBackoffNanos;
  private final SignedConfigs configs;
  /** The current incarnation's credential, from its Register; null before. */
  private volatile Credential credential;
  /** The hosted entity types, name to role and hasher, declared in every Register. */
  private final java.util.SortedMap<String, io.atoll.core.TypeDeclaration> entityTypes;
  /** A Register that declares the types again (asked by a renewal's answer) is under way. */
  private final AtomicBoolean redeclaring = new AtomicBoolean();

  private record Credential(PodId pod, ByteString token) {}

  /**
   * A link to the managers of the settings over {@code managers} (the one {@link StartConfig#fetch}
   * used, so a pod keeps one connection to a manager); {@link #close} closes it.
   */
  public ManagerLink(PodContext ctx, ManagerAddresses managers, View view, Lease lease, PeerChannels peers,
      Callback callback, SignedConfigs configs) {
    this(ctx, managers, view, lease, peers, callback, configs, java.util.Map.of());
  }

  /**
   * A link that declares {@code entityTypes} (the hosted types' names to their roles and hashers)
   * when it registers: the manager refuses the pod if it declares a type otherwise than the live
   * pods hosting it, and names the types of a space no live pod hosts.
   *
   * @throws IllegalArgumentException if there are more than {@link Wire#MAX_ENTITY_TYPES}: a type
   *     left out of the declaration would escape the manager's check
   */
  public ManagerLink(PodContext ctx, ManagerAddresses managers, View view, Lease lease, PeerChannels peers,
      Callback callback, SignedConfigs configs, java.util.Map<String, io.atoll.core.TypeDeclaration> entityTypes) {
    if (entityTypes.size() > Wire.MAX_ENTITY_TYPES) {
      throw new IllegalArgumentException("pod hosts " + entityTypes.size() + " entity types (expected: at most "
          + Wire.MAX_ENTITY_TYPES + ", the most a registration declares to the shard manager)");
    }
    this.entityTypes = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(entityTypes));
    this.configs = configs;
    this.ticker = ctx.ticker();
    this.settings = ctx.settings();
    this.view = view;
    this.lease = lease;
    this.peers = peers;
    this.callback = callback;
    this.managers = managers;
    this.outage = new OutageWatch(ticker, managers.all(), settings.keepServingWhileManagerDown(), view, lease, peers);
    this.renewTimer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "atoll-lease-keeper");
      t.setDaemon(true);
      return t;
    });
    this.watch = new ConfigWatch(managers, view, configs, renewTimer);
  }

  private ShardManagerServiceGrpc.ShardManagerServiceBlockingStub blocking(ManagedChannel channel, long millis) {
    return managers.readyStub(ShardManagerServiceGrpc.newBlockingStub(Wire.reconnecting(channel)))
        .withDeadlineAfter(millis, TimeUnit.MILLISECONDS);
  }

  private ShardManagerServiceGrpc.ShardManagerServiceStub async() {
    return managers.readyStub(ShardManagerServiceGrpc.newStub(Wire.reconnecting(managers.channel())));
  }

  /** The newest manager term seen. */
  public long term() {
    return term;
  }

  /**
   * A manager (or a call from one) showed term {@code t}: the highest seen is kept. Grants from a
   * lower term are ignored from then on: that manager was deposed, though it may not know yet.
   */
  public synchronized void seeTerm(long t) {
    if (t > term) {
      term = t;
    }
  }

  /** How long registrations fail before the pod says so, and how often it says so again. */
  private static final Duration REGISTER_QUIET = Duration.ofSeconds(2);
  private static final Duration REGISTER_WARN_EVERY = Duration.ofSeconds(10);

  /**
   * Registers this pod (its current incarnation), retrying until {@code timeout}; then renews the
   * lease every third of it.
   *
   * @throws IllegalStateException if the manager never accepted the registration
   */
  public void register(Duration timeout) {
    registering = true;
    try {
      long started = ticker.nanoTime();
      long deadline = started + timeout.toNanos();
      long backoff = 0;
      // A pod that cannot register says so, at a pace: it may retry for the whole start timeout.
      LogPacer unregistered = new LogPacer(REGISTER_QUIET, REGISTER_WARN_EVERY);
      for (;;) {
        if (closed) {
          return;
        }
        long sent = ticker.nanoTime();
        PodId me = view.self();
        PodAddress address = managers.current();
        try {
          RegisterResponse r = blocking(managers.channel(), 5000).register(RegisterRequest.newBuilder()
              .setPod(Wire.info(settings.pod(me), entityTypes))
              .setClusterId(view.clusterId().toString()).setCredential(credentialOf(me)).build());
          if (r.getNumberOfShards() < view.numberOfShards()) {
            // More is fine: spaces appended at run time (the config's layout is checked on merge).
            throw new IllegalStateException("the shard manager at " + address + " has " + r.getNumberOfShards()
                + " shards (expected: at least " + view.numberOfShards() + ")");
          }
          // The term first: a deposed manager gives no key and no credential.
          if (r.getManagerTerm() < term) {
            throw io.grpc.Status.FAILED_PRECONDITION.withDescription("the shard manager at " + address
                + " answered under term " + r.getManagerTerm() + ", older than term " + term
                + " this pod has seen (a deposed manager)").asRuntimeException();
          }
          ClusterConfig config = configs.fromManager(r.getConfig(), true);
          view.checkCluster(config, true); // never a lease from a manager of another cluster
          managers.answered(address);
          credential = new Credential(me, r.getCredential());
          seeTerm(r.getManagerTerm());
          lease.renewed(sent, TimeUnit.MILLISECONDS.toNanos(r.getLeaseTtlMillis()));
          view.onManagerConfig(config);
          log.info("pod {} registered with the shard manager at {} (term {}, lease {} ms)", me, address,
              r.getManagerTerm(), r.getLeaseTtlMillis());
          startRenewals();
          return;
        } catch (StatusRuntimeException e) {
          if (e.getStatus().getCode() == Status.Code.FAILED_PRECONDITION && String.valueOf(
              e.getStatus().getDescription()).startsWith(Wire.TYPES_REFUSED)) {
            // Retrying cannot help while the pods that declared the type otherwise live.
            throw new TypesRefused("pod " + me + " refused by the shard manager at " + address + ": "
                + e.getStatus().getDescription(), e);
          }
          if (ticker.nanoTime() - deadline > 0) {
            throw new IllegalStateException("pod " + me + " could not register with the shard manager at "
                + managers.describe() + " within " + timeout.toMillis() + " ms: " + Wire.describe(e), e);
          }
          if (isTypesPending(e)) {
            // The manager is up and leads; it waits for the pods it inherited to declare their types
            // (within a lease renewal): not a reason to try a standby.
            log.debug("pod {}: the shard manager at {} holds the registration: {}", me, address,
                e.getStatus().getDescription());
          } else {
            managers.failedOrReopened(address, e, silenceNanos());
          }
          long now = ticker.nanoTime();
          if (unregistered.due(now)) {
            log.warn("pod {} is not registered with the shard manager yet, after {} ms of trying: the last"
                + " attempt, at {}, got {}; retrying for {} ms more", me,
                TimeUnit.NANOSECONDS.toMillis(now - started), address, Wire.describe(e),
                Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - now)));
          }
        }
        backoff = CONNECT_BACKOFF.nextNanos(backoff);
        LockSupport.parkNanos(backoff); // retry pacing, not synchronization
      }
    } finally {
      registering = false;
    }
  }

  /**
   * The manager refused the pod's entity type declarations ({@link Wire#TYPES_REFUSED}): final
   * while the pods that declared those types otherwise live, so retrying at once cannot help.
   */
  public static final class TypesRefused extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public TypesRefused(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Whether {@code e} is the manager's "not yet" for a declaring pod ({@link Wire#TYPES_PENDING}). */
  static boolean isTypesPending(StatusRuntimeException e) {
    return e.getStatus().getCode() == Status.Code.ABORTED
        && String.valueOf(e.getStatus().getDescription()).startsWith(Wire.TYPES_PENDING);
  }

  /**
   * Stops renewing the lease, for a pod the manager refused for good on a rejoin: its incarnation is
   * unknown to the manager, and each renewal would only be answered "unknown pod" again.
   */
  public synchronized void stopRenewing() {
    if (renewals != null) {
      renewals.cancel(false);
    }
  }

  private synchronized void startRenewals() {
    if (renewals != null || closed) {
      return;
    }
    long every = Math.max(1, TimeUnit.NANOSECONDS.toMillis(lease.ttlNanos()) / 3);
    renewals = renewTimer.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
  }

  private void renew() {
    if (closed || registering || !renewing.compareAndSet(false, true)) {
      return;
    }
    long sent = ticker.nanoTime();
    PodId me = view.self();
    long deadline = Math.max(100, TimeUnit.NANOSECONDS.toMillis(lease.ttlNanos()) / 3);
    PodAddress at = managers.current();
    try {
      // No waitForReady: a refused connection must fail the renewal at once, not at its deadline.
      ShardManagerServiceGrpc.newStub(Wire.reconnecting(managers.channel()))
          .withDeadlineAfter(deadline, TimeUnit.MILLISECONDS)
          .renewLease(
          RenewLeaseRequest.newBuilder().setPod(Wire.ref(me)).setClusterId(view.clusterId().toString())
              .setCredential(credentialOf(me)).setDeclaresTypes(true).setTakesRelayedUnassign(true).build(),
          new StreamObserver<>() {
            @Override
            public void onNext(RenewLeaseResponse r) {
              if (r.getManagerTerm() < term) {
                // A deposed manager that has not noticed yet: its grant is worth nothing.
                log.debug("pod {}: ignored a renewal from manager term {} (seen term {})", me, r.getManagerTerm(),
                    term);
                lease.renewalFailed(sent);
                return;
              }
              seeTerm(r.getManagerTerm());
              if (r.getStatus() == RenewLeaseResponse.Status.RENEWED) {
                renewBackoffNanos = 0;
                managers.answered(at);
                outage.renewed(me);
                lease.renewed(sent, TimeUnit.MILLISECONDS.toNanos(r.getLeaseTtlMillis()));
                if (r.getDeclareTypes()) {
                  declareAgain(me, at);
                }
                if (r.hasUnassign()) {
                  relayed(me, r.getUnassignId(), r.getUnassign());
                }
              } else if (me.equals(view.self())) {
                callback.unknownToManager("the shard manager does not know it (declared dead?)");
              }
            }

            @Override
            public void onError(Throwable t) {
              lease.renewalFailed(sent);
              renewing.set(false);
              outage.renewalFailed();
              if (Status.fromThrowable(t).getCode() == Status.Code.PERMISSION_DENIED && me.equals(view.self())) {
                // a manager with another key took over: this incarnation's credential means nothing to it
                callback.unknownToManager("the shard manager refused its credential: " + Status.fromThrowable(t)
                    .getDescription());
              } else {
                switch (afterFailure(Status.fromThrowable(t).getCode(), managers.failedOrReopened(at, t, silenceNanos()))) {
                  case SOON -> retryRenewalSoon(); // another manager or a fresh connection: try it before the lease runs out
                  case NOW -> renewNow();
                  case NEXT_PERIOD -> { }
                }
              }
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
   * Sends this incarnation's Register once more, to the manager at {@code at}, which started
   * after the pod registered and does not know its entity types (they are not saved); until every
   * pod it inherited has, it admits no pod that declares types. One at a time; a failure is left
   * to the next renewal, whose answer asks again.
   */
  private void declareAgain(PodId me, PodAddress at) {
    if (closed || !redeclaring.compareAndSet(false, true)) {
      return;
    }
    try {
      ShardManagerServiceGrpc.newStub(Wire.reconnecting(managers.channel())).withDeadlineAfter(5, TimeUnit.SECONDS)
          .register(RegisterRequest.newBuilder().setPod(Wire.info(settings.pod(me), entityTypes))
              .setClusterId(view.clusterId().toString()).setCredential(credentialOf(me)).build(),
          new StreamObserver<>() {
            @Override
            public void onNext(RegisterResponse r) {
              seeTerm(r.getManagerTerm());
              log.info("pod {} declared its {} entity types again to the shard manager at {} (term {})", me,
                  entityTypes.size(), at, r.getManagerTerm());
            }

            @Override
            public void onError(Throwable t) {
              redeclaring.set(false);
              log.warn("pod {}: could not declare its entity types again to the shard manager at {} ({}); the next"
                  + " renewal asks again", me, at, Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
              redeclaring.set(false);
            }
          });
    } catch (RuntimeException e) {
      redeclaring.set(false);
    }
  }

  /** The relayed Unassign handled last: its id, and its answer once there is one. */
  private record RelayedAnswer(long id, CompletableFuture<ReleasedRequest.Builder> answer) {}

  private final java.util.concurrent.atomic.AtomicReference<RelayedAnswer> lastRelayed =
      new java.util.concurrent.atomic.AtomicReference<>();

  /**
   * Handles an Unassign that came in a renewal's answer, as if it came by the pod's service, and
   * answers it with Released. The manager sends it with every renewal until it has the answer, so
   * a request already handled is answered again from its result (a lost Released costs a renewal
   * period), and one still being handled is not started twice.
   */
  private void relayed(PodId me, long id, UnassignRequest request) {
    RelayedAnswer last = lastRelayed.get();
    if (last != null && last.id() == id) {
      if (last.answer().isDone()) {
        report(me, last.answer().join()); // its Released was lost, or is on its way
      }
      return; // still being handled: its end reports
    }
    RelayedAnswer mine = new RelayedAnswer(id, new CompletableFuture<>());
    if (!lastRelayed.compareAndSet(last, mine)) {
      return; // another renewal's answer got here first: it handles this
    }
    log.warn("pod {}: the shard manager cannot reach this pod's port; it moves {} shards off it (the Unassign came"
        + " with a lease renewal)", me, request.getShardsCount());
    ReleasedRequest.Builder b = ReleasedRequest.newBuilder().setPod(Wire.ref(me)).setNewEpoch(request.getNewEpoch())
        .setUnassignId(id);
    callback.relayedUnassign(request, new StreamObserver<>() {
      private UnassignResponse answer;

      @Override
      public void onNext(UnassignResponse r) {
        answer = r;
      }

      @Override
      public void onError(Throwable t) {
        String failure = String.valueOf(Status.fromThrowable(t));
        mine.answer().complete(b.setFailure(failure.length() > 1000 ? failure.substring(0, 1000) : failure));
        report(me, b);
      }

      @Override
      public void onCompleted() {
        if (answer != null) {
          b.addAllReleased(answer.getReleasedList());
        }
        mine.answer().complete(b);
        report(me, b);
      }
    });
  }

  private void report(PodId me, ReleasedRequest.Builder answer) {
    ReleasedRequest request;
    synchronized (answer) {
      request = answer.setCredential(credentialOf(me)).build();
    }
    try {
      ShardManagerServiceGrpc.newStub(Wire.reconnecting(managers.channel())).withDeadlineAfter(5, TimeUnit.SECONDS)
          .released(request, new StreamObserver<>() {
            @Override
            public void onNext(ReleasedResponse v) {}

            @Override
            public void onError(Throwable t) {
              log.warn("pod {}: could not tell the shard manager what it released ({}); it asks again with the next"
                  + " renewal", me, Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {}
          });
    } catch (RuntimeException e) {
      // closed
    }
  }

  /**
   * How long the channel to the manager may answer nothing before a call that got no answer has
   * it replaced by a fresh one ({@link ManagerAddresses#reopenIfSilent}): a renewal period (a third
   * of a lease, not under 300 ms). Renewals answered every period keep a working channel under
   * it, so in practice the first renewal that times out on a silent channel replaces it, with a
   * renewal period of the lease left.
   */
  private long silenceNanos() {
    return Math.max(TimeUnit.MILLISECONDS.toNanos(300), lease.ttlNanos() / 3);
  }

  /** When the next renewal goes after one failed. */
  enum Retry {
    /** At once. */
    NOW,
    /** After a back-off (50 ms doubling to 1 s while failures go on). */
    SOON,
    /** At the next renewal period. */
    NEXT_PERIOD
  }

  /**
   * When to renew again after a renewal failed with {@code code}; {@code movedOrReopened} is what
   * {@link ManagerAddresses#failedOrReopened} said (the link moved, or its channel is fresh). A
   * renewal the manager let time out is followed at once on the same channel: its deadline paced
   * it, and so one renewal is always in flight while the manager is silent, answered the moment
   * the manager runs again (a paused manager: pods that fenced themselves serve again within a
   * round trip of its resuming, instead of up to a renewal period and a deadline later).
   */
  static Retry afterFailure(Status.Code code, boolean movedOrReopened) {
    if (movedOrReopened) {
      return Retry.SOON;
    }
    return code == Status.Code.DEADLINE_EXCEEDED ? Retry.NOW : Retry.NEXT_PERIOD;
  }

  private void renewNow() {
    try {
      renewTimer.execute(this::renew);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closed
    }
  }

  private void retryRenewalSoon() {
    long wait = CONNECT_BACKOFF.nextNanos(renewBackoffNanos);
    renewBackoffNanos = Math.min(wait, TimeUnit.SECONDS.toNanos(1));
    try {
      renewTimer.schedule(this::renew, wait, TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closed
    }
  }

  /** Follows the manager's configs (see {@link ConfigWatch}). */
  public void watch() {
    watch.watch();
  }

  /** Tells the manager this pod leaves; waits up to five seconds. */
  public void unregister() {
    try {
      PodId me = view.self();
      blocking(managers.channel(), 5000).unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(me))
          .setCredential(credentialOf(me))
          .build());
      log.info("pod {} unregistered", view.self());
    } catch (StatusRuntimeException e) {
      log.warn("pod {}: could not unregister from the shard manager at {} ({}); its shards move when its lease"
          + " runs out", view.self(), managers.current(), Wire.describe(e));
    }
  }

  /** Reports an unreachable peer, at most every five seconds per peer. */
  public void notifyUnhealthy(PodId peer) {
    long now = ticker.nanoTime();
    Long last = lastUnhealthy.get(peer);
    if (last != null && now - last < UNHEALTHY_REPORT_INTERVAL_NANOS) {
      return;
    }
    lastUnhealthy.put(peer, now);
    try {
      async().withDeadlineAfter(2, TimeUnit.SECONDS).notifyUnhealthyPod(NotifyUnhealthyPodRequest.newBuilder()
          .setPod(Wire.ref(peer)).setReporter(Wire.ref(view.self())).setCredential(credentialOf(view.self())).build(),
          new StreamObserver<>() {
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

  /** The credential of incarnation {@code me}, or empty if it has none (not registered yet). */
  private ByteString credentialOf(PodId me) {
    Credential c = credential;
    return c != null && c.pod().equals(me) ? c.token() : ByteString.EMPTY;
  }

  /** Forgets the reports of pods not in {@code live} (the active peers of the current view). */
  public void retainOnly(Set<PodId> live) {
    lastUnhealthy.keySet().retainAll(live);
  }

  /** How many pods' reports it remembers (for tests of the bound). */
  int reportsRemembered() {
    return lastUnhealthy.size();
  }

  /** Stops renewing and watching, and closes the channel. */
  public void close() {
    closed = true;
    outage.close();
    synchronized (this) {
      if (renewals != null) {
        renewals.cancel(false);
      }
    }
    watch.close();
    renewTimer.shutdownNow();
    managers.close();
  }
}

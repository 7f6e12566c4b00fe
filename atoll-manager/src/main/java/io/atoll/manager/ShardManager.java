package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.PodHealth;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import io.atoll.manager.pods.GrpcPods;
import io.atoll.manager.pods.Pods;
import io.atoll.manager.round.Rounds;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shard manager: the one process that decides where shards live. This class is the loop and
 * the orchestration; the parts are rooms of their own:
 *
 * <ul>
 *   <li>{@link Rounds} — the decisions, pure functions over records;
 *   <li>{@link Journal} — write-ahead transitions of the config, and the term;
 *   <li>{@link Membership} — registrations, departures, renewals, dead pods, over {@link Leases};
 *   <li>{@link Rebalancer} — the rebalance workflow over the pods;
 *   <li>{@link Watchers} — the open watch streams;
 *   <li>{@link Pods} — the calls to pods ({@link GrpcPods} in production);
 *   <li>{@link ManagerService} — the gRPC face, over {@link ManagerCalls}: only the calls it makes;
 *   <li>{@link ManagerStart} — the production assembly behind {@code start}, and {@link Releaser},
 *       which releases the server, threads and store once when the manager stops.
 * </ul>
 *
 * <p><b>State and threads.</b> All state belongs to one serial executor, the {@link Loop}, and is
 * touched nowhere else. Nothing blocks on the loop: store writes run on their own thread, calls to
 * pods are asynchronous, and their results come back to the loop as new tasks. All time comes
 * from the injected {@link Ticker}.
 *
 * <p><b>Membership.</b> A registration is saved before it is answered; a pod that leaves, or whose
 * lease ran out by more than the margin, or that the health source proves gone, is marked GONE
 * and its shards move. A start re-issues every owned shard to its owner at a new epoch
 * ({@link Rounds#reassert}) and counts every pod as renewed at that moment.
 *
 * <p><b>Why some 540 lines.</b> What is left here is one job seen from two sides: the public face
 * (the documented {@code start} overloads its callers use, the accessors, {@code rebalance},
 * {@code close}) and the loop's orchestration (the start of a term, the timers, the hops onto the
 * loop that the gRPC face calls, in the inner {@code Calls}, and the stop). Every decision and
 * every piece of state lives in one of the rooms above; moving the hops or the timers out would
 * put another class between the gRPC face and the loop without taking any state away from this
 * one.
 */
public final class ShardManager implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ShardManager.class);

  private final ManagerSettings settings;
  private final Loop loop;
  private final Executor blocking;
  private final Pods pods;
  private final Journal journal;
  private final Membership membership;
  private final Watchers watchers;
  private final Rebalancer rebalancer;
  /** Pods that renew but cannot be reached on their port. */
  private final Reachability reachability;
  private final CompletableFuture<Void> stopped = new CompletableFuture<>();
  private final Releaser releaser;
  private final ManagerSecurity security;
  private final ManagerCalls calls = new Calls();
  private ManagerObserver observer = ManagerObserver.NONE;
  private volatile PodAddress address;
  private final RandomGenerator random;
  private volatile ClusterId clusterId = ClusterId.NONE;
  private volatile String holder = "shard manager";
  /** The installed config's shard count: the settings' until a space is appended at run time. */
  private volatile int shards;
  @GuardedBy("loop")
  private boolean closed;

  /**
   * What one rebalance round did.
   *
   * @param moved shards moved
   * @param epoch the config epoch after it
   * @param remaining moves the strategy still plans after it, without the per-round limits (0: in place)
   */
  public record RoundResult(int moved, long epoch, int remaining) {}

  /** Whether {@code host} names every address of the machine (0.0.0.0, ::): one to listen on, not to reach. */
  public static boolean isWildcard(String host) {
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    return h.equals("0.0.0.0") || h.equals("::") || h.equals("0:0:0:0:0:0:0:0") || h.equals("*");
  }

  /**
   * A manager over its collaborators; nothing runs until {@link #recover()} and
   * {@link #startServing()} run on the loop.
   *
   * @param io where store writes run
   * @param blocking where health checks run
   * @param onClose releases what the caller created for it (threads), after the store is closed
   */
  ShardManager(ManagerSettings settings, AssignmentStore store, PodHealth health, Pods pods, Loop loop, Executor io,
      Executor blocking, Ticker ticker, RandomGenerator random, Runnable onClose) {
    // a key of its own: only start() reads the cluster's key from the store before the term
    this(settings, store, health, pods, loop, io, blocking, ticker, random, onClose,
        new ManagerSecurity(WireSecurity.PLAINTEXT, ConfigSigner.generate()));
  }

  /** As above, secured by {@code security}. */
  ShardManager(ManagerSettings settings, AssignmentStore store, PodHealth health, Pods pods, Loop loop, Executor io,
      Executor blocking, Ticker ticker, RandomGenerator random, Runnable onClose, ManagerSecurity security) {
    this.security = security;
    this.settings = settings;
    this.pods = pods;
    this.loop = loop;
    this.blocking = blocking;
    this.releaser = new Releaser(pods, onClose, store, stopped);
    this.random = random;
    this.watchers = new Watchers(loop, security.signer()::bytes);
    this.journal = new Journal(store, io, loop, ticker, settings.spaces(), c -> {
      shards = c.size();
      watchers.publish(c);
      observer.configInstalled(c);
    }, this::depose,
        settings.leaseTtl(), settings.leaseMargin(), Journal.MAX_TOMBSTONES, Journal.MAX_PRUNED);
    this.membership = new Membership(journal, new Leases(settings.leaseTtl(), settings.leaseMargin(),
        stallThreshold(settings)), health, loop, blocking, ticker, this::requestRebalance, settings.newSpaceShards());
    this.rebalancer = new Rebalancer(settings, journal, pods, loop, random, membership::suspect);
    this.rebalancer.draining = membership::draining;
    Duration probe = settings.leaseTtl().dividedBy(4);
    this.reachability = new Reachability(pods, loop, ticker, probe, 2, this::requestRebalance);
    // (a pod that stops renewing has its relayed unassign withdrawn by the probe)
    this.rebalancer.cutOff = reachability::cutOff;
    if (security.keyInStore()) {
      journal.keepSigningKey(security.signer().encodedKey());
    }
  }

  /**
   * Starts a manager on {@code host:port} ({@code port} 0 picks a free port) with state in
   * {@code store}. It loads the store, takes the next term, and starts serving.
   *
   * @throws StoreException if the store cannot be read, holds another number of shards, or
   *     another manager wrote to it during the start
   * @throws java.io.UncheckedIOException if the address cannot be bound
   */
  public static ShardManager start(ManagerSettings settings, AssignmentStore store, PodHealth health, String host,
      int port, Ticker ticker, RandomGenerator random) {
    return start(settings, store, health, host, port, ticker, random, ManagerObserver.NONE);
  }

  /**
   * As {@link #start(ManagerSettings, AssignmentStore, PodHealth, String, int, Ticker,
   * RandomGenerator)}, reporting to {@code observer} (on the loop) from the start on.
   */
  public static ShardManager start(ManagerSettings settings, AssignmentStore store, PodHealth health, String host,
      int port, Ticker ticker, RandomGenerator random, ManagerObserver observer) {
    return start(settings, store, health, host, port, ticker, random, observer, ManagerSecurity.plaintext());
  }

  /**
   * As {@link #start(ManagerSettings, AssignmentStore, PodHealth, String, int, Ticker,
   * RandomGenerator, ManagerObserver)}, secured by {@code security}: mutual TLS on its port and to
   * the pods, and its key for signatures and credentials.
   */
  public static ShardManager start(ManagerSettings settings, AssignmentStore store, PodHealth health, String host,
      int port, Ticker ticker, RandomGenerator random, ManagerObserver observer, ManagerSecurity given) {
    // Without an advertised address the lease names the bound one, as given (a wildcard is no hint).
    return ManagerStart.begin(settings, store, health, host, port, host, ticker, random, observer, given);
  }

  /**
   * As {@link #start(ManagerSettings, AssignmentStore, PodHealth, String, int, Ticker,
   * RandomGenerator, ManagerObserver, ManagerSecurity)}, listening on {@code host} but known to
   * pods and other managers as {@code advertiseHost}: the store's lease names the leader by
   * {@code advertiseHost:port}, which standbys hand to the pods that ask them (so it must be an
   * address they reach, never a wildcard such as 0.0.0.0).
   *
   * @throws IllegalArgumentException if {@code advertiseHost} is blank or a wildcard address
   */
  public static ShardManager start(ManagerSettings settings, AssignmentStore store, PodHealth health, String host,
      int port, String advertiseHost, Ticker ticker, RandomGenerator random, ManagerObserver observer,
      ManagerSecurity given) {
    try {
      ManagerStart.checkAdvertised(advertiseHost);
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
    return ManagerStart.begin(settings, store, health, host, port, advertiseHost, ticker, random, observer, given);
  }

  /**
   * Takes the term as {@code holder}, listens on {@code host:port} and starts serving, reporting to
   * {@code observer}; closes the manager if any step fails.
   */
  void open(String host, int port, String holder, ManagerObserver observer) {
    this.holder = holder;
    observe(observer);
    try {
      onLoop(this::recover);
      Server s = Wire.startServer(host, port, List.<BindableService>of(new ManagerService(calls, security)),
          security.wire());
      releaser.server(s);
      address = new PodAddress(host, Wire.port(s));
      onLoop(this::startServing);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Starts a manager with the system clock and a random seed. */
  public static ShardManager start(ManagerSettings settings, AssignmentStore store, String host, int port) {
    return start(settings, store, PodHealth.LEASE_ONLY, host, port, Ticker.SYSTEM, new java.util.Random());
  }

  /** Reports to {@code o} from now on; set before the loop runs anything. */
  void observe(ManagerObserver o) {
    observer = java.util.Objects.requireNonNull(o, "observer");
    membership.observer = o;
    rebalancer.observer = o;
  }

  /** Runs {@code task} on the loop and waits for it, rethrowing what it threw. */
  private void onLoop(Runnable task) {
    CompletableFuture<Void> f = CompletableFuture.runAsync(task, loop);
    try {
      f.get();
      if (Thread.currentThread().isInterrupted()) {
        // get() returns a result already there without looking at the interrupt: a start from an
        // interrupted thread fails the same whether or not the loop was done first.
        throw new InterruptedException("interrupted while the loop ran the task");
      }
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new StoreException("shard manager: cannot start: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      // The task runs on the loop all the same: wait for it (uninterruptibly), so that the close
      // after this failure releases what it took, such as the store's lease, rather than closing
      // the store before the task takes it.
      try {
        f.join();
      } catch (RuntimeException ignored) {
        // the start fails anyway
      }
      Thread.currentThread().interrupt();
      throw new StoreException("shard manager: interrupted while starting", e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Start

  /** Loads the store and takes the next term. Loop only. */
  void recover() {
    // A cluster gets its id at its manager's first start (or the first start of a version that
    // knows ids), kept in the state from then on.
    ClusterConfig c = journal.recover(holder, settings.storeLease(), s -> Rounds.reassert(s.clusterId().isNone()
        ? s.withClusterId(ClusterId.random(random)) : s));
    clusterId = c.clusterId();
    shards = c.size();
    pods.clusterId(clusterId);
    // Before the server starts: a Register handled before startServing must wait for these pods.
    membership.inheritDeclarations();
    log.info("shard manager of cluster {}, term {}, resumes at epoch {}: {} pods, {} of {} shards assigned",
        clusterId, journal.term(), c.epoch(), c.activePods().size(), c.size() - c.unownedCount(), c.size());
    if (!c.activePods().isEmpty()) {
      membership.reportUnhosted(c);
    }
    for (String role : settings.settingsWithoutSpace(c.spaces())) {
      // Roles appear when their pods register, so this may be early rather than wrong: say so, once.
      log.warn("{}; they apply once a pod of role {} registers and its space is appended (is the role spelt as"
          + " the pods name it?)", noSpaceYet(role), role.isEmpty() ? "default" : role);
    }
  }

  /** "space-settings for role X: no such space yet", for the log and for atoll status. */
  public static String noSpaceYet(String role) {
    return "space-settings for role " + (role.isEmpty() ? "default" : role) + ": no such space yet";
  }

  /** The roles with space settings and no space in the installed config. Loop only. */
  java.util.List<String> settingsWithoutSpace() {
    return settings.settingsWithoutSpace(journal.config().spaces());
  }

  /** The cluster this manager serves; {@link ClusterId#NONE} before it has read its store. */
  public ClusterId clusterId() {
    return clusterId;
  }

  /** How often the manager looks for dead pods: an eighth of the lease, within 50..500 ms. */
  static Duration deadPodTick(ManagerSettings settings) {
    return Duration.ofMillis(Math.max(50, Math.min(500, settings.leaseTtl().toMillis() / 8)));
  }

  /**
   * A gap between two looks for dead pods beyond this is a pause of the manager itself: one tick,
   * plus a quarter of the lease (always more than a tick: a lease is at least 300 ms, a tick at
   * most an eighth of it or 50 ms). A pause shorter than that cannot make a pod that renews every
   * third of a lease look dead.
   */
  static Duration stallThreshold(ManagerSettings settings) {
    return deadPodTick(settings).plus(settings.leaseTtl().dividedBy(4));
  }

  /**
   * Counts every known pod as renewed now, for the longest lease any term promised, and starts
   * the timers. Loop only.
   */
  void startServing() {
    loop.checkOnLoop();
    ClusterConfig c = journal.config();
    long inherited = journal.promisedLimitNanos();
    long own = settings.leaseTtl().plus(settings.leaseMargin()).toNanos();
    membership.grantAll(Math.max(inherited, own));
    if (inherited > own) {
      // By then every lease an earlier term granted has ended (a pod that renewed since holds ours).
      loop.schedule(journal::keepOwnPromise, Duration.ofNanos(inherited));
    } else {
      journal.keepOwnPromise();
    }
    every(deadPodTick(settings), membership::findDeadPods);
    // Pods that renewed within two renewal periods: alive, whatever their port answers.
    every(settings.leaseTtl().dividedBy(4), () -> reachability.probe(
        membership.renewingRelayable(settings.leaseTtl().multipliedBy(2).dividedBy(3).toNanos())));
    every(settings.storeLease().dividedBy(3), journal::renewLease);
    every(settings.rebalanceInterval(), () -> rebalancer.request("periodic"));
    if (!c.activePods().isEmpty()) {
      // Give the pods of the previous term a renewal period to show they are alive, then finish
      // whatever that term left undone.
      loop.schedule(() -> rebalancer.request("resume"), settings.leaseTtl().dividedBy(2));
    }
    log.info("shard manager listening on {} ({} shards{}, lease {} ms)", address, c.size(),
        c.spaces().isSingle() ? "" : " in spaces " + c.spaces(),
        settings.leaseTtl().toMillis());
  }

  /** Runs {@code task} on the loop every {@code period} (fixed delay) until the manager closes. */
  private void every(Duration period, Runnable task) {
    loop.schedule(() -> {
      if (!closed) {
        task.run();
        every(period, task);
      }
    }, period);
  }

  /** Where this manager listens. */
  public PodAddress address() {
    return address;
  }

  /** The settings it runs with. */
  public ManagerSettings settings() {
    return settings;
  }

  /** Completes when the manager stops, exceptionally if it stopped because it was deposed. */
  public CompletableFuture<Void> stopped() {
    return stopped;
  }

  /** The installed config. */
  public ClusterConfig config() {
    return call(journal::config);
  }

  /** The current term. */
  public long term() {
    return journal.term();
  }

  private <T> T call(Supplier<T> onLoop) {
    try {
      return CompletableFuture.supplyAsync(onLoop, loop).get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("shard manager: " + e, e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Rebalance

  @GuardedBy("loop")
  private void requestRebalance(String reason) {
    rebalancer.request(reason);
  }

  /** Runs a round now (or right after the one running); completes when that round ends. */
  public CompletableFuture<RoundResult> rebalance() {
    return supply(rebalancer::nextRound);
  }

  /** Shards per active pod, by address, for logs and status. */
  public static Map<String, Integer> shardCounts(ClusterConfig c) {
    Map<String, Integer> out = new TreeMap<>();
    Map<PodId, Integer> owned = c.ownedCounts();
    for (Pod p : c.activePods()) {
      out.put(p.id().toString(), owned.getOrDefault(p.id(), 0));
    }
    return out;
  }

  // ------------------------------------------------------------------------------------------
  // The gRPC face's calls: each membership call is handed to the loop

  /** The calls the gRPC face makes (and the simulation, in its place); each hops onto the loop. */
  ManagerCalls calls() {
    return calls;
  }

  private final class Calls implements ManagerCalls {
    @Override
    public ClusterId clusterId() {
      return clusterId;
    }

    @Override
    public long term() {
      return journal.term();
    }

    @Override
    public long leaseTtlMillis() {
      return settings.leaseTtl().toMillis();
    }

    @Override
    public int numberOfShards() {
      return shards == 0 ? settings.numberOfShards() : shards;
    }

    @Override
    public CompletableFuture<ClusterConfig> register(Pod pod, String holder, boolean vouched) {
      return supply(() -> membership.register(pod, holder, vouched));
    }

    @Override
    public CompletableFuture<ClusterConfig> register(Pod pod,
        java.util.SortedMap<String, io.atoll.core.TypeDeclaration> entityTypes, String holder, boolean vouched) {
      return supply(() -> membership.register(pod, entityTypes, holder, vouched));
    }

    @Override
    public CompletableFuture<java.util.SortedMap<String, io.atoll.core.TypeDeclaration>> entityTypes() {
      return supply(() -> CompletableFuture.completedFuture(membership.entityTypes()));
    }

    @Override
    public CompletableFuture<java.util.List<String>> settingsWithoutSpace() {
      return supply(() -> CompletableFuture.completedFuture(ShardManager.this.settingsWithoutSpace()));
    }

    @Override
    public CompletableFuture<Renewal> renew(PodId pod, boolean declaresTypes) {
      return supply(() -> CompletableFuture.completedFuture(membership.renew(pod, declaresTypes)));
    }

    @Override
    public CompletableFuture<Renewal> renew(PodId pod, boolean declaresTypes, boolean takesRelayed) {
      return supply(() -> {
        Renewal r = membership.renew(pod, declaresTypes, takesRelayed);
        return CompletableFuture.completedFuture(r.granted() && takesRelayed
            ? new Renewal(true, r.declareTypes(), pods.relayedFor(pod)) : r);
      });
    }

    @Override
    public void released(PodId pod, long id, java.util.List<Integer> released, String failure) {
      pods.relayedReleased(pod, id, released, failure);
    }

    @Override
    public CompletableFuture<Void> unregister(PodId pod) {
      return supply(() -> membership.markGone(pod, "left")).thenApply(c -> null);
    }

    @Override
    public CompletableFuture<Void> drain(PodId pod) {
      return supply(() -> membership.drain(pod)).thenApply(c -> null);
    }

    @Override
    public CompletableFuture<Boolean> renew(PodId pod) {
      return supply(() -> CompletableFuture.completedFuture(membership.renew(pod)));
    }

    @Override
    public void reportUnhealthy(PodId pod, PodId reporter) {
      membership.reportUnhealthy(pod, reporter);
    }

    @Override
    public CompletableFuture<ClusterConfig> assignments() {
      return supply(() -> CompletableFuture.completedFuture(journal.config()));
    }

    @Override
    public void watch(ServerCallStreamObserver<ConfigBytes> observer) {
      watchers.add(observer, journal::config);
    }

    @Override
    public CompletableFuture<RoundResult> rebalance() {
      return ShardManager.this.rebalance();
    }
  }

  // ------------------------------------------------------------------------------------------
  // Plumbing

  /** Runs {@code onLoop} on the loop; fails at once if the manager is stopping or stopped. */
  <T> CompletableFuture<T> supply(Supplier<CompletableFuture<T>> onLoop) {
    CompletableFuture<T> f = new CompletableFuture<>();
    try {
      loop.execute(() -> {
        if (closed) {
          f.completeExceptionally(new IllegalStateException("shard manager is stopping"));
          return;
        }
        try {
          onLoop.get().whenComplete((v, e) -> {
            if (e != null) {
              f.completeExceptionally(e);
            } else {
              f.complete(v);
            }
          });
        } catch (RuntimeException e) {
          f.completeExceptionally(e);
        }
      });
    } catch (RejectedExecutionException e) {
      f.completeExceptionally(new IllegalStateException("shard manager is stopped"));
    }
    return f;
  }

  Membership membershipForTest() {
    return membership;
  }

  Rebalancer rebalancerForTest() {
    return rebalancer;
  }

  @GuardedBy("loop")
  private void depose(StoreConflictException why) {
    stopOnLoop();
    stopped.completeExceptionally(why);
    blocking.execute(releaser::release);
  }

  /** Stops serving: closes the server, the calls to pods and the store. Idempotent. */
  @Override
  public void close() {
    try {
      CompletableFuture.runAsync(this::stopOnLoop, loop).get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      // The stop is queued on the loop all the same; the caller keeps its interrupt.
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // the loop is gone already
    }
    releaser.release();
  }

  @GuardedBy("loop")
  private void stopOnLoop() {
    closed = true;
    membership.close();
    journal.close();
    rebalancer.close();
    watchers.close();
  }
}

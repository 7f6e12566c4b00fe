package io.atoll.manager;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.Ticker;
import io.atoll.core.allocation.Move;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.PodHealth;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.UnassignResponse;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shard manager: the one process that decides where shards live.
 *
 * <p><b>State and threads.</b> All state — the installed config, the term, the leases granted,
 * the watchers — belongs to one serial executor (the loop) and is touched nowhere else. Nothing
 * blocks on the loop: store writes run on their own thread, calls to pods are asynchronous, and
 * their results come back to the loop as new tasks.
 *
 * <p><b>Write-ahead.</b> Every change of the config is a transition: computed from the installed
 * config, saved to the store, and only then installed and published. Transitions run one after
 * another, so none is computed from a config another one is replacing. A manager that dies at any
 * point resumes from the store and can never have given one shard to two pods: a pod starts
 * serving a shard only when it sees a saved claim naming it.
 *
 * <p><b>Leases.</b> A pod's lease runs {@code leaseTtl} from when the pod sent its last renewal
 * that succeeded; the manager moves a silent pod's shards only after {@code leaseTtl +
 * leaseMargin} since the last renewal it granted, by then the pod has fenced itself. A starting
 * manager counts every pod as renewed at its start.
 *
 * <p><b>Terms.</b> Each start saves the state with term + 1 (compare-and-set on the store's
 * version), so a deposed manager's next write is refused and it stops. A start also re-issues
 * every owned shard to its owner at a new epoch, which ends any hand-off the previous term left
 * half done (a pod that released a shard waits for a claim at least as new as the release).
 */
public final class ShardManager implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ShardManager.class);

  private final ManagerSettings settings;
  private final AssignmentStore store;
  private final PodHealth health;
  private final Ticker ticker;
  private final RandomGenerator random;
  private final ScheduledExecutorService loop;
  private final ExecutorService io;
  private final ExecutorService blocking;
  private final PodCalls pods = new PodCalls();
  private final CompletableFuture<Void> stopped = new CompletableFuture<>();
  private Server server;
  private PodAddress address;

  // ---- state confined to the loop
  private ClusterConfig config;
  private long term;
  private long storeVersion;
  private long startedNanos;
  private final Map<PodId, Long> lastGrant = new HashMap<>();
  /** Pods being marked gone: no renewal or registration for them, even before the change is saved. */
  private final Set<PodId> dying = new HashSet<>();
  private CompletableFuture<?> transitions = CompletableFuture.completedFuture(null);
  private boolean rebalancing;
  private String chainReason = "";
  private int chainMoved;
  private int chainRounds;
  private boolean rebalanceAgain;
  private ScheduledFuture<?> retry;
  private List<CompletableFuture<RoundResult>> nextRoundWaiters = new ArrayList<>();
  private List<CompletableFuture<RoundResult>> roundWaiters = new ArrayList<>();
  private final List<Watcher> watchers = new ArrayList<>();
  private boolean closed;

  /** What one rebalance round did. @param moved shards moved @param epoch the config epoch after it */
  public record RoundResult(int moved, long epoch) {}

  private ShardManager(ManagerSettings settings, AssignmentStore store, PodHealth health, Ticker ticker,
      RandomGenerator random) {
    this.settings = settings;
    this.store = store;
    this.health = health;
    this.ticker = ticker;
    this.random = random;
    this.loop = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "atoll-manager"));
    this.io = Executors.newSingleThreadExecutor(r -> daemon(r, "atoll-manager-store"));
    this.blocking = Executors.newVirtualThreadPerTaskExecutor();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
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
    ShardManager m = new ShardManager(settings, store, health, ticker, random);
    try {
      m.loop.submit(m::recover).get();
      m.server = Wire.startServer(host, port, List.<BindableService>of(new ManagerService(m)));
      m.address = new PodAddress(host, Wire.port(m.server));
      m.loop.submit(m::startServing).get();
      return m;
    } catch (Exception e) {
      m.close();
      Throwable cause = e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new StoreException("shard manager: cannot start: " + cause, cause);
    }
  }

  /** Starts a manager with the system clock and a random seed. */
  public static ShardManager start(ManagerSettings settings, AssignmentStore store, String host, int port) {
    return start(settings, store, PodHealth.LEASE_ONLY, host, port, Ticker.SYSTEM, new java.util.Random());
  }

  // ------------------------------------------------------------------------------------------
  // Start

  private void recover() {
    Optional<AssignmentStore.Stored> stored = store.load();
    ManagerState state = stored.map(s -> ManagerState.decode(s.data()))
        .orElseGet(() -> new ManagerState(0, ClusterConfig.empty(settings.numberOfShards())));
    if (state.config().size() != settings.numberOfShards()) {
      throw new StoreException(store + " holds " + state.config().size() + " shards but the manager is set to "
          + settings.numberOfShards() + " (expected: the same; the number of shards cannot change for a store)");
    }
    storeVersion = stored.map(AssignmentStore.Stored::version).orElse(0L);
    term = state.term() + 1;
    config = reassert(state.config());
    storeVersion = store.save(new ManagerState(term, config).encode(), storeVersion);
    log.info("shard manager term {} resumes at epoch {}: {} pods, {} of {} shards assigned", term, config.epoch(),
        config.activePods().size(), config.ownedCounts().values().stream().mapToInt(Integer::intValue).sum(),
        config.size());
  }

  /** Re-issues every shard owned by an active pod to that pod at one new epoch. */
  private static ClusterConfig reassert(ClusterConfig c) {
    long e = c.epoch() + 1;
    ClusterConfig.Builder b = c.toBuilder();
    boolean any = false;
    for (int pos = 0; pos < c.size(); pos++) {
      PodEntry owner = c.ownerEntry(pos);
      if (owner != null && owner.status() == PodStatus.ACTIVE) {
        b.claim(pos, Claim.stable(owner.id(), e));
        any = true;
      }
    }
    return any ? b.build() : c;
  }

  private void startServing() {
    startedNanos = ticker.nanoTime();
    for (Pod p : config.activePods()) {
      lastGrant.put(p.id(), startedNanos);
    }
    long tick = Math.max(50, Math.min(500, settings.leaseTtl().toMillis() / 8));
    loop.scheduleWithFixedDelay(this::findDeadPods, tick, tick, TimeUnit.MILLISECONDS);
    long periodic = settings.rebalanceInterval().toMillis();
    loop.scheduleWithFixedDelay(() -> rebalanceNow("periodic"), periodic, periodic, TimeUnit.MILLISECONDS);
    if (!config.activePods().isEmpty()) {
      // Give the pods of the previous term a renewal period to show they are alive, then finish
      // whatever that term left undone.
      loop.schedule(() -> rebalanceNow("resume"), settings.leaseTtl().toMillis() / 2, TimeUnit.MILLISECONDS);
    }
    log.info("shard manager listening on {} ({} shards, lease {} ms)", address, settings.numberOfShards(),
        settings.leaseTtl().toMillis());
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
    return call(() -> config);
  }

  /** The current term. */
  public long term() {
    return call(() -> term);
  }

  private <T> T call(java.util.concurrent.Callable<T> c) {
    try {
      return loop.submit(c).get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("shard manager: " + e, e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Transitions: compute, persist, install, publish — one at a time.

  private CompletableFuture<ClusterConfig> transition(UnaryOperator<ClusterConfig> change) {
    CompletableFuture<ClusterConfig> result = new CompletableFuture<>();
    transitions = transitions.handle((x, e) -> null).thenComposeAsync(ignored -> {
      if (closed) {
        result.completeExceptionally(new IllegalStateException("shard manager closed"));
        return CompletableFuture.completedFuture(null);
      }
      ClusterConfig before = config;
      ClusterConfig next;
      try {
        next = change.apply(before);
      } catch (RuntimeException e) {
        log.error("shard manager: a config change failed: {}", e.toString());
        result.completeExceptionally(e);
        return CompletableFuture.completedFuture(null);
      }
      if (next.equals(before)) {
        result.complete(before);
        return CompletableFuture.completedFuture(null);
      }
      byte[] data = new ManagerState(term, next).encode();
      long expected = storeVersion;
      return CompletableFuture.supplyAsync(() -> store.save(data, expected), io)
          .handleAsync((version, err) -> {
            if (err == null) {
              storeVersion = version;
              config = next;
              publish(next);
              result.complete(next);
            } else {
              onSaveFailed(err instanceof java.util.concurrent.CompletionException ? err.getCause() : err, data);
              result.completeExceptionally(err);
            }
            return null;
          }, loop);
    }, loop);
    return result;
  }

  private void onSaveFailed(Throwable err, byte[] attempted) {
    if (err instanceof StoreConflictException c) {
      log.error("shard manager term {} is deposed: {}", term, c.getMessage());
      depose(c);
      return;
    }
    log.warn("shard manager: saving the config failed: {}", err.toString());
    // The outcome may be ambiguous; learn the stored version so the next save can succeed.
    try {
      Optional<AssignmentStore.Stored> s = store.load();
      if (s.isPresent() && ManagerState.decode(s.get().data()).term() > term) {
        log.error("shard manager term {} is deposed: the store holds term {}", term,
            ManagerState.decode(s.get().data()).term());
        depose(new StoreConflictException(store.toString(), storeVersion, s.get().version()));
        return;
      }
      if (s.isPresent() && java.util.Arrays.equals(s.get().data(), attempted)) {
        storeVersion = s.get().version();
        ManagerState st = ManagerState.decode(attempted);
        config = st.config();
        publish(config);
      } else {
        storeVersion = s.map(AssignmentStore.Stored::version).orElse(0L);
      }
    } catch (RuntimeException e) {
      log.warn("shard manager: the store cannot be read either: {}", e.toString());
    }
  }

  private void depose(Throwable why) {
    closed = true;
    stopped.completeExceptionally(why);
    blocking.execute(this::close);
  }

  // ------------------------------------------------------------------------------------------
  // Pod membership

  /** A pod registers; completes once its entry is saved. */
  CompletableFuture<ClusterConfig> register(Pod pod) {
    return supply(() -> {
      Optional<PodEntry> existing = config.pod(pod.id());
      if (existing.isPresent() && existing.get().status() == PodStatus.GONE) {
        return CompletableFuture.<ClusterConfig>failedFuture(new IllegalStateException("pod " + pod.id()
            + " was declared gone; a pod that left restarts as a new incarnation"));
      }
      if (dying.contains(pod.id())) {
        return CompletableFuture.<ClusterConfig>failedFuture(new IllegalStateException("pod " + pod.id()
            + " is being declared gone; a pod that left restarts as a new incarnation"));
      }
      if (existing.isPresent()) {
        lastGrant.put(pod.id(), ticker.nanoTime());
        return CompletableFuture.completedFuture(config);
      }
      lastGrant.put(pod.id(), ticker.nanoTime()); // its lease starts now, before the save
      return transition(c -> c.toBuilder().pod(new PodEntry(pod, PodStatus.ACTIVE, c.epoch() + 1)).build())
          .thenApplyAsync(c -> {
            lastGrant.put(pod.id(), ticker.nanoTime());
            log.info("pod {} joined (version {}); {} pods", pod.id(), pod.version(), c.activePods().size());
            rebalanceNow("pod " + pod.id() + " joined");
            return c;
          }, loop);
    });
  }

  /** A pod leaves for good, having stopped its entities. */
  CompletableFuture<Void> unregister(PodId pod) {
    return supply(() -> markGone(pod, "left")).thenApply(c -> null);
  }

  private CompletableFuture<ClusterConfig> markGone(PodId pod, String why) {
    Optional<PodEntry> e = config.pod(pod);
    if (e.isEmpty() || e.get().status() == PodStatus.GONE) {
      return CompletableFuture.completedFuture(config);
    }
    // From now on the pod's lease is over, whatever the store is doing: a renewal granted while
    // the change is being saved would let it serve shards about to be given away.
    dying.add(pod);
    return transition(c -> {
      Optional<PodEntry> cur = c.pod(pod);
      if (cur.isEmpty() || cur.get().status() == PodStatus.GONE) {
        return c;
      }
      return c.toBuilder().pod(new PodEntry(cur.get().pod(), PodStatus.GONE, c.epoch() + 1)).build();
    }).thenApplyAsync(c -> {
      lastGrant.remove(pod);
      dying.remove(pod); // the saved config says GONE now
      int owned = c.ownedCounts().getOrDefault(pod, 0);
      log.info("pod {} {}; its {} shards will move; {} pods", pod, why, owned, c.activePods().size());
      rebalanceNow("pod " + pod + " " + (why.startsWith("left") ? "left" : "died"));
      return c;
    }, loop);
  }

  /** Renews a pod's lease: true if renewed, false if the pod is unknown or gone. */
  CompletableFuture<Boolean> renew(PodId pod) {
    return supply(() -> {
      Optional<PodEntry> e = config.pod(pod);
      if (e.isPresent() && e.get().status() == PodStatus.ACTIVE && !dying.contains(pod)) {
        lastGrant.put(pod, ticker.nanoTime());
        return CompletableFuture.completedFuture(true);
      }
      return CompletableFuture.completedFuture(false);
    });
  }

  /** Another pod found {@code pod} unresponsive: ask the health source. */
  void reportUnhealthy(PodId pod, PodId reporter) {
    loop.execute(() -> {
      Optional<PodEntry> e = config.pod(pod);
      if (e.isEmpty() || e.get().status() != PodStatus.ACTIVE) {
        return;
      }
      Pod p = e.get().pod();
      blocking.execute(() -> {
        PodHealth.Verdict v = safeCheck(p);
        if (v == PodHealth.Verdict.GONE) {
          loop.execute(() -> markGone(pod, "is dead (the health source says it is gone"
              + (reporter == null ? "" : ", reported by " + reporter) + ")"));
        }
      });
    });
  }

  private PodHealth.Verdict safeCheck(Pod p) {
    try {
      return health.check(p);
    } catch (RuntimeException e) {
      return PodHealth.Verdict.UNKNOWN;
    }
  }

  private void findDeadPods() {
    if (closed) {
      return;
    }
    long now = ticker.nanoTime();
    long limit = settings.leaseTtl().plus(settings.leaseMargin()).toNanos();
    for (Pod p : config.activePods()) {
      Long granted = lastGrant.get(p.id());
      if (granted == null) {
        lastGrant.put(p.id(), now); // every pod in the config has a lease from the start or its registration
        continue;
      }
      long grant = granted;
      if (now - grant > limit) {
        lastGrant.put(p.id(), now); // do not declare it twice while the transition runs
        markGone(p.id(), "is dead: no lease renewal for " + TimeUnit.NANOSECONDS.toMillis(now - grant) + " ms");
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Rebalance

  /** Runs a round now (or right after the one running); completes when that round ends. */
  public CompletableFuture<RoundResult> rebalance() {
    CompletableFuture<RoundResult> f = new CompletableFuture<>();
    loop.execute(() -> {
      nextRoundWaiters.add(f);
      rebalanceNow("requested");
    });
    return f;
  }

  private void rebalanceNow(String reason) {
    if (closed) {
      return;
    }
    if (rebalancing) {
      rebalanceAgain = true;
      return;
    }
    rebalancing = true;
    roundWaiters = nextRoundWaiters;
    nextRoundWaiters = new ArrayList<>();
    if (retry != null) {
      retry.cancel(false);
      retry = null;
    }
    ClusterConfig c = config;
    List<Pod> active = c.activePods();
    List<Move> moves = settings.strategy().decide(c, active, settings.limits(), random);
    if (moves.isEmpty()) {
      finishRound(0, false, false);
      return;
    }
    Set<PodId> involved = new HashSet<>();
    for (Move m : moves) {
      involved.add(m.to());
      if (m.from() != null) {
        involved.add(m.from());
      }
    }
    Map<PodId, CompletableFuture<Boolean>> pings = new LinkedHashMap<>();
    for (PodId p : involved) {
      pings.put(p, pods.ping(p, settings.pingTimeout()).handle((r, e) -> e == null && answersAs(r, p)));
    }
    CompletableFuture.allOf(pings.values().toArray(new CompletableFuture<?>[0]))
        .thenRunAsync(() -> afterPings(reason, moves, pings), loop);
  }

  private static boolean answersAs(PingResponse r, PodId expected) {
    try {
      return r.hasPod() && Wire.pod(r.getPod()).id().equals(expected);
    } catch (RuntimeException e) {
      return false;
    }
  }

  private void afterPings(String reason, List<Move> moves, Map<PodId, CompletableFuture<Boolean>> pings) {
    Set<PodId> failed = new HashSet<>();
    pings.forEach((p, f) -> {
      if (!f.join()) {
        failed.add(p);
      }
    });
    List<Move> kept = moves.stream()
        .filter(m -> !failed.contains(m.to()) && (m.from() == null || !failed.contains(m.from())))
        .toList();
    checkHealth(failed);
    if (kept.isEmpty() || closed) {
      if (!failed.isEmpty()) {
        log.warn("rebalance ({}): pods did not answer the ping: {}; retrying in {} ms", reason, failed,
            settings.rebalanceRetryInterval().toMillis());
      }
      finishRound(0, !failed.isEmpty(), false);
      return;
    }
    long epoch = config.epoch() + 1;
    Map<PodId, List<Integer>> byOwner = new TreeMap<>();
    for (Move m : kept) {
      if (m.from() != null) {
        byOwner.computeIfAbsent(m.from(), k -> new ArrayList<>()).add(m.shard());
      }
    }
    Duration deadline = settings.terminationTimeout().plus(settings.pingTimeout());
    Map<PodId, CompletableFuture<Set<Integer>>> unassigns = new LinkedHashMap<>();
    byOwner.forEach((pod, shards) -> unassigns.put(pod,
        pods.unassign(pod, shards, epoch, settings.terminationTimeout(), term, deadline)
            .handle((UnassignResponse r, Throwable e) -> e == null ? Set.copyOf(r.getReleasedList()) : null)));
    CompletableFuture.allOf(unassigns.values().toArray(new CompletableFuture<?>[0]))
        .thenRunAsync(() -> afterUnassigns(reason, kept, epoch, byOwner, unassigns, !failed.isEmpty()), loop);
  }

  private void afterUnassigns(String reason, List<Move> kept, long epoch, Map<PodId, List<Integer>> byOwner,
      Map<PodId, CompletableFuture<Set<Integer>>> unassigns, boolean pingFailed) {
    List<Move> moves = new ArrayList<>();
    Map<Integer, PodId> regrant = new HashMap<>();
    Set<PodId> failed = new HashSet<>();
    for (Move m : kept) {
      if (m.from() == null) {
        moves.add(m);
        continue;
      }
      Set<Integer> released = unassigns.get(m.from()).join();
      if (released == null) {
        failed.add(m.from());
        regrant.put(m.shard(), m.from()); // it may have released it: hand it back at the new epoch
      } else if (released.contains(m.shard())) {
        moves.add(m);
      }
    }
    checkHealth(failed);
    int[] applied = new int[1];
    transition(c -> applyRound(c, moves, regrant, epoch, applied))
        .whenCompleteAsync((next, err) -> {
          if (err != null) {
            log.warn("rebalance ({}): could not save the new assignments: {}", reason, err.toString());
            finishRound(0, true, false);
            return;
          }
          if (applied[0] > 0) {
            if (!reason.equals("continue")) {
              chainReason = reason;
            }
            chainMoved += applied[0];
            chainRounds++;
          }
          if (!failed.isEmpty()) {
            log.warn("rebalance ({}): unassign failed on {}; retrying in {} ms", reason, failed,
                settings.rebalanceRetryInterval().toMillis());
          }
          ConfigBytes bytes = Wire.bytes(next);
          Set<PodId> targets = new HashSet<>();
          moves.forEach(m -> targets.add(m.to()));
          regrant.values().forEach(targets::add);
          for (PodId t : targets) {
            pods.push(t, bytes, settings.pingTimeout());
          }
          finishRound(applied[0], pingFailed || !failed.isEmpty(), applied[0] > 0);
        }, loop);
  }

  /** Applies a round's moves to the current config, re-checking each against it. */
  private static ClusterConfig applyRound(ClusterConfig c, List<Move> moves, Map<Integer, PodId> regrant,
      long epoch, int[] applied) {
    long e = Math.max(epoch, c.epoch() + 1);
    ClusterConfig.Builder b = c.toBuilder();
    boolean any = false;
    for (Move m : moves) {
      int pos = m.shard() - 1;
      PodEntry owner = c.ownerEntry(pos);
      boolean fromHolds = m.from() == null
          ? owner == null || owner.status() == PodStatus.GONE
          : owner != null && owner.id().equals(m.from());
      boolean toActive = c.pod(m.to()).map(p -> p.status() == PodStatus.ACTIVE).orElse(false);
      if (fromHolds && toActive) {
        b.claim(pos, Claim.stable(m.to(), e));
        applied[0]++;
        any = true;
      } else if (m.from() != null && fromHolds) {
        // The old owner released it but the target is gone: hand it back at the new epoch, or
        // the old owner would wait for a claim that never comes.
        b.claim(pos, Claim.stable(m.from(), e));
        any = true;
      }
    }
    for (Map.Entry<Integer, PodId> r : regrant.entrySet()) {
      int pos = r.getKey() - 1;
      if (r.getValue().equals(c.owner(pos))) {
        b.claim(pos, Claim.stable(r.getValue(), e));
        any = true;
      }
    }
    return any ? b.build() : c;
  }

  private void finishRound(int moved, boolean failed, boolean continueNow) {
    rebalancing = false;
    if (!continueNow && chainMoved > 0) {
      // One line per rebalance, however many rounds its limits split it into.
      log.info("rebalance ({}): moved {} shards in {} round(s), now at epoch {}; shards per pod: {}", chainReason,
          chainMoved, chainRounds, config.epoch(), shardCounts(config));
      chainMoved = 0;
      chainRounds = 0;
    }
    RoundResult result = new RoundResult(moved, config.epoch());
    roundWaiters.forEach(w -> w.complete(result));
    roundWaiters = new ArrayList<>();
    if (closed) {
      return;
    }
    if (rebalanceAgain || continueNow) {
      rebalanceAgain = false;
      loop.execute(() -> rebalanceNow("continue"));
    } else if (failed) {
      retry = loop.schedule(() -> rebalanceNow("retry"), settings.rebalanceRetryInterval().toMillis(),
          TimeUnit.MILLISECONDS);
    }
  }

  private void checkHealth(Set<PodId> suspects) {
    for (PodId id : suspects) {
      reportUnhealthy(id, null);
    }
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
  // Watchers

  void watch(ServerCallStreamObserver<ConfigBytes> observer) {
    Watcher w = new Watcher(observer);
    observer.setOnCancelHandler(() -> loop.execute(() -> watchers.remove(w)));
    observer.setOnReadyHandler(() -> loop.execute(w::flush));
    loop.execute(() -> {
      if (closed) {
        observer.onCompleted();
        return;
      }
      watchers.add(w);
      w.pending = Wire.bytes(config);
      w.flush();
    });
  }

  private void publish(ClusterConfig c) {
    if (watchers.isEmpty()) {
      return;
    }
    ConfigBytes bytes = Wire.bytes(c);
    for (Watcher w : watchers) {
      w.pending = bytes;
      w.flush();
    }
  }

  /** One watch stream; the newest config not yet sent replaces older ones. Loop-confined. */
  private static final class Watcher {
    final ServerCallStreamObserver<ConfigBytes> observer;
    ConfigBytes pending;

    Watcher(ServerCallStreamObserver<ConfigBytes> observer) {
      this.observer = observer;
    }

    void flush() {
      if (pending != null && !observer.isCancelled() && observer.isReady()) {
        try {
          observer.onNext(pending);
        } catch (RuntimeException e) {
          // the stream is gone; its cancel handler removes it
        }
        pending = null;
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Plumbing

  <T> CompletableFuture<T> supply(java.util.function.Supplier<CompletableFuture<T>> onLoop) {
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
    } catch (java.util.concurrent.RejectedExecutionException e) {
      f.completeExceptionally(new IllegalStateException("shard manager is stopped"));
    }
    return f;
  }

  /** The installed config; loop only. */
  ClusterConfig config0() {
    return config;
  }

  long leaseTtlMillis() {
    return settings.leaseTtl().toMillis();
  }

  int numberOfShards() {
    return settings.numberOfShards();
  }

  long currentTerm() {
    return term; // read off-loop for responses only; terms change only at start
  }

  /** Stops serving: closes the server, the calls to pods and the store. Idempotent. */
  @Override
  public void close() {
    try {
      loop.submit(() -> {
        closed = true;
        watchers.forEach(w -> {
          try {
            w.observer.onCompleted();
          } catch (RuntimeException e) {
            // already gone
          }
        });
        watchers.clear();
      }).get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      closed = true;
    }
    if (server != null) {
      server.shutdownNow();
      try {
        server.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    pods.close();
    loop.shutdownNow();
    io.shutdown();
    try {
      io.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    blocking.shutdown();
    store.close();
    stopped.complete(null);
  }
}

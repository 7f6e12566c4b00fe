package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.core.Space;
import io.atoll.core.Spaces;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.spi.PodHealth;
import io.atoll.core.spi.StoreException;
import io.atoll.manager.pods.Pods;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

/**
 * One random history of a cluster around a real {@link ShardManager} (its loop, journal, leases
 * and rebalancer), with everything else simulated on a {@link VirtualTime}: an in-memory store
 * that fails on demand, pods that join, leave, crash and lose their network, and the manager
 * itself crashing and restarting. {@link #step()} makes one random event and lets time pass;
 * the invariants are checked after every task the world runs.
 *
 * <p>With shard spaces ({@link #randomSpaced}) pods carry roles: each joins hosting one role of
 * the layout, or sometimes two, and the invariants hold per space: no pod ever serves a shard of a
 * space it does not host, and after quiet each space is owned by its own hosts, balanced over
 * them.
 *
 * <p>Design note: one file on purpose, over 400 lines — the fake pods, the manager's
 * lifecycle and the invariants share the world's state, and reading them together is the point.
 */
final class Simulation {

  static final Duration TTL = Duration.ofMillis(1000);
  static final Duration MARGIN = Duration.ofMillis(200);
  /** The leases a restarted manager may be set to, when a history changes leases. */
  static final List<Duration> LEASES = List.of(Duration.ofMillis(400), TTL, Duration.ofMillis(2500));
  static final Duration LONGEST = Duration.ofMillis(2500);

  final long seed;
  final Random rnd;
  final VirtualTime vt = new VirtualTime();
  final MemoryStore store = new MemoryStore();
  final ManagerSettings settings;
  /** The roles of the layout's spaces, in order ("" is the default space's). */
  final List<String> roles;
  /** Whether each manager start draws its lease from {@link #LEASES} (else always {@link #TTL}). */
  boolean leaseChanges;
  /** Whether the manager is sometimes paused (its process stopped) for up to three leases. */
  boolean pauses;
  /** Whether pods of roles without a space join now and then ({@link #joinNewRole}). */
  boolean newRoles;
  private int nextNewRole = 1;
  ManagerSettings running;
  final boolean truthfulHealth;
  final Map<PodId, SimPod> pods = new HashMap<>();
  final List<String> log = new ArrayList<>();
  ShardManager manager;
  VirtualTime.SimLoop loop;
  /** The running manager's handle on the store. */
  CutStore managerStore;
  /** A manager cut off from the store that still runs after a standby took over, or null. */
  ShardManager oldManager;
  VirtualTime.SimLoop oldLoop;
  /** Pods that reach only {@link #oldManager} (and it only them); the new manager cannot reach them. */
  final Set<PodId> withOld = new HashSet<>();
  boolean faults = true;
  /**
   * Whether pods take unassigns in their renewals' answers (as the runtime's do), so that the
   * manager watches whether it reaches them; off for scripted tests whose timing predates it.
   */
  boolean relayedUnassigns = true;
  /** The relayed unassigns of the manager started last. */
  io.atoll.manager.pods.RelayedUnassigns relay;
  /** Unassigns pods handled from a renewal's answer (cut off on their port), for the test to see they happen. */
  int relayedReleases;
  /** Pods whose pings fail with an exception (as a broken channel's would), for scripted tests. */
  java.util.function.Predicate<PodId> pingsThrow = p -> false;
  /** Pods that never get an unassign (lost on the way), for scripted tests. */
  java.util.function.Predicate<PodId> unassignsLost = p -> false;
  double callFailure;
  String joinVersion = "1.0";
  int nextPort = 7000;
  long lastAnyRenewal = Long.MIN_VALUE / 2;
  int steps;
  int managerStarts;

  /** A random cluster: shards, limits, strategy, health source and failure rate drawn from {@code seed}. */
  static Simulation random(long seed) {
    Random r = new Random(~seed);
    int shards = 1 + r.nextInt(r.nextBoolean() ? 12 : 60);
    RebalanceLimits limits = r.nextBoolean() ? RebalanceLimits.DEFAULT : new RebalanceLimits(1 + r.nextInt(4), 0.5);
    AllocationStrategy strategy = r.nextBoolean() ? AllocationStrategy.versionAware() : AllocationStrategy.leastShard();
    Simulation sim = new Simulation(seed, settings(shards, limits, strategy), r.nextBoolean(), r.nextDouble() * 0.3);
    sim.leaseChanges = r.nextBoolean();
    sim.pauses = r.nextBoolean();
    return sim;
  }

  /**
   * A random cluster of 2..6 shard spaces (1..24 shards each; the first the default space), with
   * shards, limits, strategy, health source and failure rate drawn from {@code seed}.
   */
  static Simulation randomSpaced(long seed) {
    Random r = new Random(~seed);
    RebalanceLimits limits = r.nextBoolean() ? RebalanceLimits.DEFAULT : new RebalanceLimits(1 + r.nextInt(4), 0.5);
    AllocationStrategy strategy = r.nextBoolean() ? AllocationStrategy.versionAware() : AllocationStrategy.leastShard();
    Spaces layout = randomLayout(r, 2 + r.nextInt(5), 24);
    Simulation sim = new Simulation(seed, settings(layout, limits, strategy)
        .withNewSpaceShards(1 + r.nextInt(24)).withSpaceSettings(spaceSettings(seed, layout)), r.nextBoolean(),
        r.nextDouble() * 0.3);
    sim.leaseChanges = r.nextBoolean();
    sim.pauses = r.nextBoolean();
    sim.newRoles = r.nextInt(4) > 0;
    return sim;
  }

  /**
   * In half the histories, some spaces (of the layout, and of the first roles appended at run
   * time) get limits or a strategy of their own. Drawn from a random of their own, so each seed's
   * history is otherwise the one it was before spaces had settings.
   */
  static Map<String, SpaceSettings> spaceSettings(long seed, Spaces layout) {
    Random r = new Random(seed * 31 + 7);
    Map<String, SpaceSettings> m = new LinkedHashMap<>();
    if (r.nextBoolean()) {
      List<String> roles = new ArrayList<>();
      layout.list().forEach(sp -> roles.add(sp.role()));
      roles.addAll(List.of("n1", "n2"));
      for (String role : roles) {
        if (r.nextBoolean()) {
          m.put(role, new SpaceSettings(r.nextBoolean() ? 1 + r.nextInt(3) : null, r.nextBoolean() ? 1.0 : null,
              r.nextBoolean() ? AllocationStrategy.leastShard() : AllocationStrategy.versionAware()));
        }
      }
    }
    return m;
  }

  /** {@code spaces} spaces of 1..{@code most} shards: the default one, then roles r1, r2, ... */
  static Spaces randomLayout(Random r, int spaces, int most) {
    Map<String, Integer> m = new LinkedHashMap<>();
    for (int i = 0; i < spaces; i++) {
      m.put(i == 0 ? Space.DEFAULT_ROLE : "r" + i, 1 + r.nextInt(most));
    }
    return Spaces.of(m);
  }

  /** The simulation's timings with shards laid out in {@code spaces}. */
  static ManagerSettings settings(Spaces spaces, RebalanceLimits limits, AllocationStrategy strategy) {
    return settings(spaces.size(), limits, strategy).withSpaces(spaces);
  }

  /** The simulation's timings (a 1 s lease) with these shards and allocation. */
  static ManagerSettings settings(int shards, RebalanceLimits limits, AllocationStrategy strategy) {
    return ManagerSettings.defaults().withNumberOfShards(shards).withLease(TTL, MARGIN)
        .withTimeouts(Duration.ofMillis(100), Duration.ofMillis(100))
        .withRebalanceIntervals(Duration.ofMillis(2000), Duration.ofMillis(300))
        .withAllocation(limits, strategy);
  }

  /**
   * A simulation with a running manager and no pods yet.
   *
   * @param truthfulHealth whether a health source reports crashed pods as gone (else the lease alone decides)
   * @param callFailure how often a call between the manager and a pod is lost while faults are on
   */
  Simulation(long seed, ManagerSettings settings, boolean truthfulHealth, double callFailure) {
    this.seed = seed;
    this.rnd = new Random(seed);
    this.settings = settings;
    this.roles = new java.util.ArrayList<>(settings.spaces().list().stream().map(Space::role).toList());
    this.truthfulHealth = truthfulHealth;
    this.callFailure = callFailure;
    vt.afterEachTask(this::checkSafety);
    startManager();
  }

  long now() {
    return vt.nanoTime();
  }

  private long latency() {
    return 1_000_000L + rnd.nextInt(20_000_000);
  }

  private boolean fails() {
    return faults && rnd.nextDouble() < callFailure;
  }

  void note(String what) {
    log.add(String.format("%8.3f s  %s", now() / 1e9, what));
    if (log.size() > 60) {
      log.remove(0);
    }
  }

  // ------------------------------------------------------------------------------------------
  // The manager

  boolean managerUp() {
    return manager != null && loop.alive();
  }

  void startManager() {
    startManager(leaseChanges ? LEASES.get(rnd.nextInt(LEASES.size())) : TTL);
  }

  void startManager(Duration ttl) {
    ManagerSettings settings = this.settings.withLease(ttl, MARGIN);
    VirtualTime.SimLoop l = vt.newLoop();
    PodHealth health = truthfulHealth
        ? p -> pods.containsKey(p.id()) && !pods.get(p.id()).alive ? PodHealth.Verdict.GONE : PodHealth.Verdict.UNKNOWN
        : PodHealth.LEASE_ONLY;
    CutStore handle = new CutStore(store);
    ShardManager m = new ShardManager(settings, handle, health, new FakePods(l), l,
        vt.executor(2_000_000L + rnd.nextInt(5_000_000), () -> true), vt.executor(1_000_000L, l::alive), vt,
        new Random(rnd.nextLong()), l::shutdown);
    try {
      l.runAsLoop(() -> {
        m.recover();
        m.startServing();
      });
      manager = m;
      loop = l;
      managerStore = handle;
      running = settings;
      managerStarts++;
      note("manager started, term " + m.term() + ", lease " + ttl.toMillis() + " ms");
    } catch (StoreException e) {
      l.shutdown();
      note("manager start failed: " + e.getMessage());
    }
  }

  /** The manager's process stops for {@code d}: its loop runs nothing meanwhile, its clock goes on. */
  void pauseManager(Duration d) {
    if (managerUp()) {
      loop.pause(d);
      note("manager paused for " + d.toMillis() + " ms");
    }
  }

  /**
   * The running manager loses its store (a partition): every call of its store fails, while it
   * still runs and reaches its pods.
   */
  void cutManagerFromStore() {
    if (managerUp()) {
      managerStore.cut(true);
      note("manager cut off from its store");
    }
  }

  /**
   * A standby takes over while the manager cut off from the store goes on running: from now on
   * {@code pods} reach only the old manager, and the other pods only the new one.
   */
  void standbyTakesOver(List<SimPod> pods) {
    oldManager = manager;
    oldLoop = loop;
    pods.forEach(p -> withOld.add(p.id()));
    note("a standby takes over; " + withOld + " still reach only the old manager");
    startManager(running.leaseTtl());
  }

  void crashManager() {
    if (managerUp()) {
      loop.shutdown();
      note("manager crashed");
    }
  }

  /** The manager's installed config, read through its loop. */
  ClusterConfig installed() {
    CompletableFuture<ClusterConfig> f = manager.calls().assignments();
    vt.advance(Duration.ZERO);
    return f.getNow(null);
  }

  // ------------------------------------------------------------------------------------------
  // Pods: their side of the protocol

  SimPod join(String version) {
    return join(version, Pod.DEFAULT_ROLES);
  }

  /** A pod of {@code version} hosting {@code roles} starts and registers. */
  SimPod join(String version, List<String> hosted) {
    SimPod p = new SimPod(new Pod(new PodId(new PodAddress("127.0.0.1", nextPort++), 1), PodVersion.of(version),
        hosted), settings.numberOfShards());
    pods.put(p.id(), p);
    note("pod " + p.id() + " starts (version " + version + (roles.size() > 1 ? ", roles " + hosted : "") + ")");
    tick(p);
    return p;
  }

  private void rejoin(SimPod old) {
    old.alive = false;
    SimPod p = new SimPod(new Pod(new PodId(old.id().address(), old.id().incarnation() + 1), old.pod.version(),
        old.pod.roles()), settings.numberOfShards());
    pods.put(p.id(), p);
    note("pod " + old.id() + " was declared gone; restarts as " + p.id());
    tick(p);
  }

  /** The pod's lease keeper: register, or renew (and read the installed config, as a watch would). */
  private void tick(SimPod p) {
    if (!p.alive) {
      return;
    }
    long sent = now();
    boolean old = withOld.contains(p.id()) && oldLoop != null;
    ShardManager m = old ? oldManager : manager;
    boolean up = old ? oldLoop.alive() : managerUp();
    if (up && p.reachable()) {
      VirtualTime.SimLoop l = old ? oldLoop : loop;
      if (!p.registered) {
        long ttl = Duration.ofMillis(m.calls().leaseTtlMillis()).toNanos();
        vt.at(latency(), l::alive, () -> m.calls().register(p.pod, "", false).whenComplete((c, e) -> reply(p, () -> {
          if (e == null) {
            p.registered = true;
            p.ttlNanos = ttl;
            p.leaseUntil = Math.max(p.leaseUntil, sent + ttl);
            p.termSeen = Math.max(p.termSeen, m.term());
            p.onView(c);
          } else if (String.valueOf(e.getMessage()).contains("gone")) {
            rejoin(p);
          }
        })));
      } else {
        long ttl = Duration.ofMillis(m.calls().leaseTtlMillis()).toNanos();
        vt.at(latency(), l::alive, () -> m.calls().renew(p.id(), false, relayedUnassigns).whenComplete((r, e) -> reply(p, () -> {
          if (e != null) {
            return;
          }
          if (r.granted()) {
            p.ttlNanos = ttl;
            p.leaseUntil = Math.max(p.leaseUntil, sent + ttl);
            p.termSeen = Math.max(p.termSeen, m.term());
            lastAnyRenewal = now();
            if (r.unassign() != null) {
              relayedUnassign(p, m, l, r.unassign());
            }
          } else {
            rejoin(p);
          }
        })));
        vt.at(latency(), l::alive, () -> m.calls().assignments().whenComplete((c, e) -> reply(p, () -> {
          if (e == null) {
            p.onView(c);
          }
        })));
      }
    } else if (!up && !p.partitioned && p.registered && sent < p.leaseUntil
        && sent - lastAnyRenewal > p.ttlNanos / 3) {
      // The manager is down (a connect is refused) and no peer renewed lately: ride it out, with
      // the lease length last granted (as the runtime does).
      p.leaseUntil = Math.max(p.leaseUntil, sent + p.ttlNanos);
    }
    vt.at(p.ttlNanos / 3 - rnd.nextInt(20_000_000), () -> p.alive, () -> tick(p));
  }

  /**
   * An Unassign that came in a renewal's answer: the pod handles it as one that came by its port
   * (the same term rule and release) and answers with Released, over its own connection.
   */
  private void relayedUnassign(SimPod p, ShardManager m, VirtualTime.SimLoop l,
      io.atoll.manager.pods.RelayedUnassigns.Relayed relayed) {
    io.atoll.transport.grpc.proto.UnassignRequest u = relayed.request();
    long newEpoch = u.getNewEpoch();
    long id = relayed.id();
    if (u.getManagerTerm() < p.termSeen) {
      vt.at(latency(), l::alive, () -> m.calls().released(p.id(), id, List.of(), "old term"));
      return;
    }
    List<Integer> released = p.release(u.getShardsList(), newEpoch);
    relayedReleases++;
    note("pod " + p.id() + " released " + released + " of " + u.getShardsList() + " below epoch " + newEpoch
        + " (relayed)");
    boolean lost = fails();
    vt.at(latency(), () -> l.alive() && p.reachable() && !lost,
        () -> m.calls().released(p.id(), id, released, ""));
  }

  /** A reply reaches the pod after the network's latency, if it still can. */
  private void reply(SimPod p, Runnable r) {
    boolean lost = fails();
    vt.at(latency(), () -> p.reachable() && !lost, r);
  }

  void leave(SimPod p) {
    p.releaseAll();
    note("pod " + p.id() + " leaves");
    ShardManager m = manager;
    if (managerUp() && p.reachable()) {
      VirtualTime.SimLoop l = loop;
      vt.at(latency(), l::alive, () -> m.calls().unregister(p.id()).whenComplete((v, e) -> vt.at(latency(), () -> true,
          () -> p.alive = false)));
    }
    vt.at(Duration.ofMillis(500).toNanos(), () -> true, () -> p.alive = false);
  }

  void crash(SimPod p) {
    p.alive = false;
    note("pod " + p.id() + " crashed");
  }

  void partition(SimPod p, Duration d) {
    p.partitioned = true;
    note("pod " + p.id() + " loses the network for " + d.toMillis() + " ms");
    vt.after(d, () -> p.partitioned = false);
  }

  void cutOff(SimPod p, Duration d) {
    p.cutOff = true;
    note("pod " + p.id() + " cannot be reached for " + d.toMillis() + " ms (its own calls go through)");
    vt.after(d, () -> p.cutOff = false);
  }

  void gossip(SimPod a, SimPod b) {
    if (a.reachable() && b.reachableByOthers() && a.view != null && b.view != null) {
      ClusterConfig va = a.view;
      a.onView(b.view);
      b.onView(va);
    }
  }

  List<SimPod> alive() {
    return pods.values().stream().filter(p -> p.alive && !p.stopping).sorted(
        (x, y) -> x.id().compareTo(y.id())).toList();
  }

  // ------------------------------------------------------------------------------------------
  // The manager's calls to pods

  /** {@link Pods} over the simulated network; calls die with the manager that made them. */
  final class FakePods implements Pods {
    private final VirtualTime.SimLoop owner;

    FakePods(VirtualTime.SimLoop owner) {
      this.owner = owner;
    }

    private SimPod target(PodId id) {
      SimPod p = pods.get(id);
      boolean sameSide = withOld.contains(id) == (owner == oldLoop);
      return p != null && p.reachableByOthers() && sameSide ? p : null;
    }

    @Override
    public CompletableFuture<Boolean> ping(PodId pod, Duration timeout) {
      CompletableFuture<Boolean> f = new CompletableFuture<>();
      if (pingsThrow.test(pod)) {
        vt.at(latency(), () -> true, () -> f.completeExceptionally(new IllegalStateException("ping failed (injected)")));
        return f;
      }
      boolean ok = target(pod) != null && !fails();
      vt.at(ok ? latency() : timeout.toNanos(), () -> true, () -> f.complete(ok && target(pod) != null));
      return f;
    }

    @Override
    public CompletableFuture<Set<Integer>> unassign(PodId pod, List<Integer> shards, long newEpoch,
        Duration termination, long term, Duration deadline) {
      CompletableFuture<Set<Integer>> f = new CompletableFuture<>();
      boolean requestLost = fails() || unassignsLost.test(pod);
      boolean replyLost = fails();
      vt.at(deadline.toNanos(), () -> true, () -> f.completeExceptionally(new TimeoutException("deadline")));
      vt.at(latency(), owner::alive, () -> {
        SimPod p = target(pod);
        if (p == null || requestLost) {
          return;
        }
        if (term < p.termSeen) {
          vt.at(latency(), () -> true, () -> f.completeExceptionally(new IllegalStateException("old term")));
          return;
        }
        Set<Integer> released = new HashSet<>(p.release(shards, newEpoch));
        note("pod " + pod + " released " + released + " of " + shards + " below epoch " + newEpoch);
        vt.at(latency() + rnd.nextInt((int) termination.toNanos()), () -> p.reachable() && !replyLost,
            () -> f.complete(released));
      });
      return f;
    }

    private final io.atoll.manager.pods.RelayedUnassigns relayed = new io.atoll.manager.pods.RelayedUnassigns();

    {
      relay = relayed; // the latest manager's, for scripted tests
    }

    @Override
    public CompletableFuture<Set<Integer>> unassignByRenewal(PodId pod, List<Integer> shards, List<PodId> targets,
        long newEpoch, Duration termination, long term, Duration deadline) {
      CompletableFuture<Set<Integer>> f = relayed.offer(pod, io.atoll.transport.grpc.proto.UnassignRequest.newBuilder()
          .addAllShards(shards).setNewEpoch(newEpoch).setManagerTerm(term).build());
      vt.at(deadline.toNanos(), () -> true, () -> f.completeExceptionally(new TimeoutException("deadline")));
      return f;
    }

    @Override
    public io.atoll.manager.pods.RelayedUnassigns.Relayed relayedFor(PodId pod) {
      return relayed.take(pod);
    }

    @Override
    public void relayedReleased(PodId pod, long id, List<Integer> released, String failure) {
      relayed.answered(pod, id, released, failure);
    }

    @Override
    public void withdrawRelayed(PodId pod) {
      relayed.withdraw(pod);
    }

    @Override
    public void push(PodId pod, ClusterConfig config, Duration deadline) {
      if (!fails()) {
        vt.at(latency(), () -> true, () -> {
          SimPod p = target(pod);
          if (p != null) {
            p.onView(config);
          }
        });
      }
    }

    @Override
    public void close() {}
  }

  // ------------------------------------------------------------------------------------------
  // Events and invariants

  /** One random event, then up to 300 ms of virtual time. */
  void step() {
    steps++;
    List<SimPod> alive = alive();
    int e = rnd.nextInt(100);
    if (e < 16 || alive.isEmpty()) {
      if (newRoles && rnd.nextInt(8) == 0 && roles.size() < 12) {
        joinNewRole();
      } else {
        join(joinVersion, randomRoles());
      }
    } else if (e < 26) {
      leave(alive.get(rnd.nextInt(alive.size())));
    } else if (e < 33) {
      crash(alive.get(rnd.nextInt(alive.size())));
    } else if (e < 38) {
      partition(alive.get(rnd.nextInt(alive.size())), Duration.ofMillis(100 + rnd.nextInt(2500)));
    } else if (e < 41) {
      cutOff(alive.get(rnd.nextInt(alive.size())), Duration.ofMillis(100 + rnd.nextInt(4000)));
    } else if (e < 47) {
      if (managerUp()) {
        crashManager();
      } else {
        startManager();
      }
    } else if (e < 52) {
      store.failSaves(1 + rnd.nextInt(3), rnd.nextBoolean() ? MemoryStore.Failure.BEFORE_WRITE
          : MemoryStore.Failure.AFTER_WRITE);
      note("the store fails its next saves");
    } else if (e < 55) {
      joinVersion = joinVersion.equals("1.0") ? "1.1" : joinVersion.equals("1.1") ? "2.0" : joinVersion;
      note("new pods run version " + joinVersion);
    } else if (e < 58 && managerUp()) {
      manager.rebalance();
    } else if (e < 61 && pauses && managerUp()) {
      pauseManager(Duration.ofMillis(100 + rnd.nextInt((int) running.leaseTtl().toMillis() * 3)));
    } else if (e < 75 && alive.size() > 1) {
      gossip(alive.get(rnd.nextInt(alive.size())), alive.get(rnd.nextInt(alive.size())));
    }
    if (!managerUp() && rnd.nextInt(4) == 0) {
      startManager();
    }
    vt.advance(Duration.ofMillis(rnd.nextInt(300)));
  }

  /** The roles a joining pod hosts: the default ones without spaces; else one role, or sometimes two. */
  List<String> randomRoles() {
    if (roles.size() == 1) {
      return Pod.DEFAULT_ROLES;
    }
    String a = roles.get(rnd.nextInt(roles.size()));
    String b = roles.get(rnd.nextInt(roles.size()));
    return rnd.nextInt(5) > 0 || a.equals(b) ? List.of(a) : List.of(a, b);
  }

  /** At most one pod could serve each shard, at every moment, and only a pod that hosts its space. */
  void checkSafety() {
    long now = now();
    Spaces layout = widestLayout();
    for (int pos = 0; pos < layout.size(); pos++) {
      SimPod first = null;
      String role = layout.at(pos).role();
      for (SimPod p : pods.values()) {
        if (p.serving(pos, now)) {
          if (!p.pod.hosts(role)) {
            throw new AssertionError("shard " + (pos + 1) + " of space '" + role + "' is served by "
                + p.describe(now) + ", which hosts only " + p.pod.roles() + "\n" + report());
          }
          if (first != null) {
            throw new AssertionError("shard " + (pos + 1) + " could be served by two pods: " + first.describe(now)
                + " and " + p.describe(now) + "\n" + report());
          }
          first = p;
        }
      }
    }
  }

  /**
   * The longest layout any pod has seen, or the settings' (layouts only grow by appended spaces,
   * so the longest covers every position any pod may serve).
   */
  Spaces widestLayout() {
    Spaces widest = settings.spaces();
    for (SimPod p : pods.values()) {
      if (p.view != null && p.view.spaces().extendsLayout(widest)) {
        widest = p.view.spaces();
      }
    }
    return widest;
  }

  /**
   * A pod of a role no space has yet registers: the manager appends a space for it (if new
   * roles are on), which from then on is one of the roles pods join with.
   */
  SimPod joinNewRole() {
    String role = "n" + (nextNewRole++);
    roles.add(role);
    note("a pod of the new role '" + role + "' starts");
    return join(joinVersion, List.of(role));
  }

  /**
   * Heals every fault, lets the cluster settle, and checks liveness: every shard is owned by an
   * active pod that serves it (none stranded), the active pods are exactly the running ones,
   * and the spread is within the strategy's bound.
   */
  void quietAndCheck() {
    faults = false;
    store.heal();
    pods.values().forEach(p -> {
      p.partitioned = false;
      p.cutOff = false;
    });
    if (!managerUp()) {
      startManager();
    }
    for (String role : roles) {
      if (alive().stream().noneMatch(p -> p.pod.hosts(role))) {
        join(joinVersion, roles.size() == 1 ? Pod.DEFAULT_ROLES : List.of(role));
      }
    }
    vt.advance(LONGEST.plus(MARGIN).multipliedBy(3).plus(settings.rebalanceInterval().multipliedBy(2)));
    ClusterConfig c = installed();
    long now = now();
    Set<PodId> running = new HashSet<>();
    alive().forEach(p -> running.add(p.id()));
    Set<PodId> active = new HashSet<>();
    c.activePods().forEach(p -> active.add(p.id()));
    check(active.equals(running), "the active pods " + active + " are not the running ones " + running);
    for (int pos = 0; pos < c.size(); pos++) {
      PodId owner = c.activeOwner(pos);
      check(owner != null, "shard " + (pos + 1) + " has no active owner after quiet");
      String role = c.spaces().at(pos).role();
      check(pods.get(owner).pod.hosts(role), "shard " + (pos + 1) + " of space '" + role + "' is owned by " + owner
          + ", which hosts only " + pods.get(owner).pod.roles());
      check(pods.get(owner).serving(pos, now), "shard " + (pos + 1) + " is stranded: " + owner
          + " owns it at epoch " + c.epoch(pos) + " but does not serve it: " + pods.get(owner).describe(now));
    }
    for (Space space : c.spaces().list()) {
      List<Pod> hosts = c.activePods().stream().filter(p -> p.hosts(space.role())).toList();
      if (hosts.stream().map(Pod::version).distinct().count() != 1) {
        continue; // an upgrade in progress: the strategy drains the older pods instead
      }
      Map<PodId, Integer> counts = new HashMap<>();
      hosts.forEach(p -> counts.put(p.id(), 0));
      for (int pos = space.first(); pos < space.first() + space.count(); pos++) {
        counts.merge(c.activeOwner(pos), 1, Integer::sum);
      }
      int min = counts.values().stream().min(Integer::compare).orElseThrow();
      int max = counts.values().stream().max(Integer::compare).orElseThrow();
      check(max - min <= 1, "spread " + min + ".." + max + " in space '" + space.role() + "' after quiet: " + counts);
    }
    faults = true;
  }

  private void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what + "\n" + report());
    }
  }

  String report() {
    StringBuilder b = new StringBuilder("simulation seed " + seed + " (rerun with -Datoll.sim.seed=" + seed
        + "), step " + steps + ", " + settings.numberOfShards() + " shards in spaces " + settings.spaces() + ", " + settings.strategy().getClass()
        .getSimpleName() + ", limits " + settings.limits() + ", health " + (truthfulHealth ? "truthful" : "lease only")
        + "\npods:\n");
    pods.values().stream().sorted((x, y) -> x.id().compareTo(y.id()))
        .forEach(p -> b.append("  ").append(p.describe(now())).append('\n'));
    b.append("last events:\n");
    log.forEach(l -> b.append("  ").append(l).append('\n'));
    return b.toString();
  }
}

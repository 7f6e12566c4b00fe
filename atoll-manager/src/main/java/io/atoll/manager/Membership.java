package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.Ticker;
import io.atoll.core.TypeDeclaration;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.round.Rounds;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who is a member: registrations, departures, renewals, pods found dead by their lease or by the
 * health source. Each change of membership is a {@link Journal} transition, saved before it is
 * answered; a pod being declared gone is refused renewals at once ({@link Leases}). Every change
 * asks for a rebalance through {@code rebalance}.
 *
 * <p>Loop-confined, except {@link #reportUnhealthy}, which posts to the loop; health checks run
 * on {@code blocking}.
 *
 * <p><b>Why this class is long (about 430 lines).</b> Register is one decision over the journal,
 * the leases, the holders of incarnations and the declared types ({@link PodTypes}): whether the
 * pod may join, and the transition that joins it, must be taken in one loop task, and its log
 * lines name what all of them said. The rule on types is already apart (PodTypes, pure); what
 * remains here is the order of the checks and the transitions, which read best together.
 */
@GuardedBy("loop")
final class Membership {

  private static final Logger log = LoggerFactory.getLogger(Membership.class);

  private final Journal journal;
  private final Leases leases;
  private final PodHealth health;
  private final Loop loop;
  private final Executor blocking;
  private final Ticker ticker;
  private final Consumer<String> rebalance;
  private final int newSpaceShards;
  private boolean closed;
  /**
   * Pods that take unassigns in their renewals' answers, with when each last renewed (not saved:
   * learned again from the next renewal).
   */
  private final java.util.Map<PodId, Long> relayable = new java.util.HashMap<>();
  /** Pods that asked to drain: they get no shards and give theirs away, yet stay members. */
  private final Set<PodId> draining = new java.util.HashSet<>();
  /** The entity types each pod declared when it registered, and the rule on them (not saved). */
  private final PodTypes types = new PodTypes();
  /** The TLS identity that registered each incarnation, as this manager saw it (not saved). */
  private final java.util.Map<PodId, String> holders = new java.util.HashMap<>();
  /** Set once by the manager before the loop runs. */
  ManagerObserver observer = ManagerObserver.NONE;

  /** @param rebalance asks for a rebalance round, with its reason */
  Membership(Journal journal, Leases leases, PodHealth health, Loop loop, Executor blocking, Ticker ticker,
      Consumer<String> rebalance) {
    this(journal, leases, health, loop, blocking, ticker, rebalance, ManagerSettings.DEFAULT_NEW_SPACE_SHARDS);
  }

  /**
   * @param newSpaceShards the shards of a space appended for a registering pod's role that has
   *     none (0: none is appended; see {@link ManagerSettings#newSpaceShards})
   */
  Membership(Journal journal, Leases leases, PodHealth health, Loop loop, Executor blocking, Ticker ticker,
      Consumer<String> rebalance, int newSpaceShards) {
    this.newSpaceShards = newSpaceShards;
    this.journal = journal;
    this.leases = leases;
    this.health = health;
    this.loop = loop;
    this.blocking = blocking;
    this.ticker = ticker;
    this.rebalance = rebalance;
  }

  /**
   * Counts every pod of the installed config as renewed now, waiting {@code limitNanos} for each
   * (a start: the longest lease and margin any earlier term may have granted, if longer than ours).
   */
  void grantAll(long limitNanos) {
    long now = ticker.nanoTime();
    for (Pod p : journal.config().activePods()) {
      leases.grant(p.id(), now, limitNanos);
    }
  }

  /**
   * Counts every pod of the installed config as not having declared its entity types to this
   * manager: their declarations were not saved, they declare again when they renew. Run at the
   * start, right after the store is read and before any call can be answered, so that no pod
   * registers against a type's inherited pods as if there were none.
   */
  void inheritDeclarations() {
    loop.checkOnLoop();
    types.inherit(journal.config().activePods().stream().map(Pod::id).toList());
  }

  /** A Register refused for good: the incarnation was declared gone, or is being declared so. */
  static final class Gone extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    Gone(String message) {
      super(message);
    }
  }

  /** A pod registers without TLS; completes once its entry is saved. */
  CompletableFuture<ClusterConfig> register(Pod pod) {
    return register(pod, "", false);
  }

  /**
   * A pod registers as the TLS identity {@code holder} ("" without TLS); completes once its entry
   * is saved. An incarnation already known is answered again (Register is idempotent) only to the
   * identity that registered it: the one recorded here, or one that presents that incarnation's
   * credential ({@code vouched}, as after a takeover); any other fails with a
   * {@link SecurityException} and changes nothing.
   */
  CompletableFuture<ClusterConfig> register(Pod pod, String holder, boolean vouched) {
    return register(pod, java.util.Collections.emptySortedMap(), holder, vouched);
  }

  /**
   * As {@link #register(Pod, String, boolean)}, the pod declaring the entity types it hosts
   * ({@code entityTypes}, name to role and hasher; empty from pods that predate them), kept with
   * the pod to name the types of a space no live pod hosts. A pod that is not a member yet is
   * refused if it declares a type otherwise than the live pods do, or while pods this manager
   * inherited have not declared theirs yet ({@link PodTypes}); a member's declaration (a repeated
   * Register, or one sent again after this manager started) is recorded.
   */
  CompletableFuture<ClusterConfig> register(Pod pod, java.util.SortedMap<String, TypeDeclaration> entityTypes,
      String holder, boolean vouched) {
    loop.checkOnLoop();
    Optional<PodEntry> existing = journal.config().pod(pod.id());
    if (existing.isPresent() && !holder.isEmpty() && !vouched && !holder.equals(holders.get(pod.id()))) {
      return CompletableFuture.failedFuture(new SecurityException("register for pod " + pod.id() + " refused: "
          + holder + " did not register that incarnation (expected: the identity that did, or its credential)"));
    }
    if ((existing.isPresent() && existing.get().status() == PodStatus.GONE)
        || (existing.isEmpty() && journal.wasPruned(pod.id()))) {
      return CompletableFuture.failedFuture(new Gone("pod " + pod.id()
          + " was declared gone; a pod that left restarts as a new incarnation"));
    }
    if (leases.isDying(pod.id())) {
      return CompletableFuture.failedFuture(new Gone("pod " + pod.id()
          + " is being declared gone; a pod that left restarts as a new incarnation"));
    }
    if (existing.isEmpty() && journal.config().activePods().size() >= journal.maxActivePods()) {
      return CompletableFuture.failedFuture(new IllegalStateException("pod " + pod.id() + ": the cluster has "
          + journal.config().activePods().size() + " pods (expected: at most "
          + journal.maxActivePods() + ")"));
    }
    if (!journal.leads(ticker.nanoTime())) {
      return CompletableFuture.failedFuture(notLeading());
    }
    ClusterConfig now = journal.config();
    if (existing.isEmpty()) {
      try {
        grow(now, pod); // refused here, before any lease, if the layout has no room
        types.admit(pod.id(), entityTypes, now::isActive);
        java.util.List<String> unchecked = types.uncheckedHashers(pod.id(), entityTypes, now::isActive);
        if (!unchecked.isEmpty()) {
          log.warn("pod {} declares a hasher for entity types {} that only pods of an older version host (they"
              + " declare none): nothing checks that the hashers agree (expected: the hasher those pods use; never"
              + " change a hasher in the rollout that brings hasher declarations)", pod.id(), names(unchecked));
        }
      } catch (IllegalArgumentException e) {
        return CompletableFuture.failedFuture(new IllegalStateException("pod " + pod.id() + " refused: "
            + e.getMessage()));
      } catch (PodTypes.Refused e) {
        log.warn("refused pod {}: {}", pod.id(), e.getMessage());
        return CompletableFuture.failedFuture(e);
      } catch (PodTypes.Pending e) {
        return CompletableFuture.failedFuture(e);
      }
      types.joining(pod.id(), entityTypes, p -> now.pod(p).isPresent());
    } else {
      for (String conflict : types.redeclare(pod.id(), entityTypes, now::isActive, p -> now.pod(p).isPresent())) {
        log.error("pod {}, a member, declares its entity types again, and they disagree with other live pods'"
            + " (a manager that did not check admitted them): {}", pod.id(), conflict);
      }
    }
    leases.grant(pod.id(), ticker.nanoTime()); // its lease starts now, before the save
    if (!holder.isEmpty()) {
      if (holders.size() >= journal.maxActivePods()) {
        holders.keySet().removeIf(p -> !journal.config().isActive(p));
      }
      holders.put(pod.id(), holder);
    }
    if (existing.isPresent()) {
      return CompletableFuture.completedFuture(journal.config());
    }
    io.atoll.core.Spaces before = journal.config().spaces();
    // The new role's space and the pod's entry are one transition: saved together, so a manager
    // restarted from the store never sees a pod of a role whose space it lost.
    return journal.transition(c -> c.pod(pod.id()).isPresent() ? c : Rounds.join(grow(c, pod), pod)).whenComplete(
        (c, e) -> {
          if (e == null) {
            types.joined(pod.id());
          } else {
            types.notJoined(pod.id(), journal.config()::isActive);
          }
        }).thenApply(c -> {
      leases.grant(pod.id(), ticker.nanoTime());
      log.info("pod {} joined (version {}{}{}); {} pods", pod.id(), pod.version(),
          pod.hasDefaultRoles() ? "" : ", roles " + pod.roles(),
          entityTypes.isEmpty() ? "" : ", types " + names(entityTypes.keySet()), c.activePods().size());
      for (io.atoll.core.Space s : c.spaces().list()) {
        if (before.of(s.role()) == null) {
          log.info("space {} appended for pod {}'s role: shards {}..{} (spaces now {})", s.displayName(), pod.id(),
              s.first() + 1, s.first() + s.count(), c.spaces());
        }
      }
      for (String role : pod.roles()) {
        if (c.spaces().of(role) == null) {
          log.warn("pod {} hosts role '{}', which has no shard space in this cluster (spaces: {}); it gets no"
              + " shards of it (the manager appends no space: its new-space-shards is 0)", pod.id(),
              role.isEmpty() ? "default" : role, c.spaces());
        }
      }
      rebalance.accept("pod " + pod.id() + " joined");
      return c;
    });
  }

  /** {@code c} with a space for each of {@code pod}'s roles that has none (see {@link Rounds#grow}). */
  private ClusterConfig grow(ClusterConfig c, Pod pod) {
    return Rounds.grow(c, pod.roles(), newSpaceShards, ManagerSettings.MAX_SHARDS);
  }

  /**
   * A pod asks to drain: from now on rounds give it nothing and hand its shards to the others
   * (Unassign, as any move); it stays a member, renewing its lease, until it leaves. Nothing is
   * saved: a manager restarted meanwhile forgets it, and the pod asks again.
   */
  CompletableFuture<ClusterConfig> drain(PodId pod) {
    loop.checkOnLoop();
    ClusterConfig config = journal.config();
    if (!config.isActive(pod)) {
      return CompletableFuture.failedFuture(new IllegalStateException("pod " + pod
          + " is not an active member; only a member can drain"));
    }
    if (draining.add(pod)) {
      log.info("pod {} drains: its {} shards will move to the other pods", pod,
          config.ownedCounts().getOrDefault(pod, 0));
    }
    rebalance.accept("pod " + pod + " drains");
    return CompletableFuture.completedFuture(config);
  }

  /** The pods draining now (a copy). Loop only. */
  /**
   * The active pods that take relayed unassigns and renewed within {@code withinNanos}, with when
   * each last renewed: the ones whose reachability {@link Reachability} watches.
   */
  java.util.Map<PodId, Long> renewingRelayable(long withinNanos) {
    loop.checkOnLoop();
    long now = ticker.nanoTime();
    ClusterConfig c = journal.config();
    relayable.keySet().removeIf(p -> !c.isActive(p));
    java.util.Map<PodId, Long> out = new java.util.HashMap<>();
    relayable.forEach((p, at) -> {
      if (now - at <= withinNanos && !leases.isDying(p)) {
        out.put(p, at);
      }
    });
    return out;
  }

  Set<PodId> draining() {
    loop.checkOnLoop();
    draining.removeIf(p -> !journal.config().isActive(p));
    return Set.copyOf(draining);
  }

  /** A pod is gone: it left, or it died. Completes once its GONE entry is saved. */
  CompletableFuture<ClusterConfig> markGone(PodId pod, String why) {
    loop.checkOnLoop();
    draining.remove(pod);
    ClusterConfig config = journal.config();
    if (!config.isActive(pod)) {
      return CompletableFuture.completedFuture(config);
    }
    leases.dying(pod);
    return journal.transition(c -> Rounds.leave(c, pod)).thenApply(c -> {
      leases.gone(pod); // the saved config says GONE now
      observer.podGone(pod, !why.startsWith("left"));
      log.info("pod {} {}; its {} shards will move; {} pods", pod, why, c.ownedCounts().getOrDefault(pod, 0),
          c.activePods().size());
      reportUnhosted(c);
      rebalance.accept("pod " + pod + " " + (why.startsWith("left") ? "left" : "died"));
      return c;
    });
  }

  /**
   * Renews a pod's lease: true if renewed, false if the pod is unknown, gone or dying. Whether the
   * pod declares types is left as it was (a renewal without the flag is {@link #renew(PodId, boolean)}
   * with false).
   *
   * @throws NotLeadingException if this manager may have lost its store lease (nothing granted)
   */
  boolean renew(PodId pod) {
    return grant(pod); // says nothing about the pod's types: an inherited pod stays undeclared
  }

  /**
   * Renews a pod's lease, as {@link #renew(PodId)}; the answer also says whether the pod must
   * declare its entity types again (it was inherited at this manager's start and has not). A pod
   * that says it never declares them ({@code declaresTypes} false) is counted as declaring none.
   *
   * @throws NotLeadingException if this manager may have lost its store lease (nothing granted)
   */
  ManagerCalls.Renewal renew(PodId pod, boolean declaresTypes) {
    return renew(pod, declaresTypes, false);
  }

  /**
   * As {@link #renew(PodId, boolean)}; {@code takesRelayed}: the pod handles an Unassign that comes
   * in the renewal's answer (see {@link Reachability}).
   */
  ManagerCalls.Renewal renew(PodId pod, boolean declaresTypes, boolean takesRelayed) {
    boolean granted = grant(pod);
    if (granted && takesRelayed) {
      relayable.put(pod, ticker.nanoTime());
    } else {
      relayable.remove(pod);
    }
    boolean declare = false;
    if (granted && types.undeclared(pod)) {
      if (declaresTypes) {
        declare = true;
      } else {
        types.declaresNone(pod);
      }
    }
    return new ManagerCalls.Renewal(granted, declare);
  }

  private boolean grant(PodId pod) {
    loop.checkOnLoop();
    long now = ticker.nanoTime();
    if (leases.pausedAt(now)) {
      findDeadPods(); // the pause is noticed before anything is granted
    }
    if (!journal.leads(now)) {
      throw notLeading();
    }
    boolean granted = leases.renew(pod, journal.config(), now);
    observer.leaseRenewal(pod, granted);
    return granted;
  }

  /** {@code pod} was found unresponsive: ask the health source, off the loop. Any thread. */
  void reportUnhealthy(PodId pod, PodId reporter) {
    loop.execute(() -> {
      Optional<PodEntry> e = journal.config().pod(pod);
      if (closed || e.isEmpty() || e.get().status() != PodStatus.ACTIVE) {
        return;
      }
      Pod p = e.get().pod();
      blocking.execute(() -> {
        if (safeCheck(p) == PodHealth.Verdict.GONE) {
          loop.execute(() -> {
            if (!closed) {
              markGone(pod, "is dead (the health source says it is gone"
                  + (reporter == null ? "" : ", reported by " + reporter) + ")");
            }
          });
        }
      });
    });
  }

  /** Pods that failed a step of a round: each is checked with the health source. */
  void suspect(Set<PodId> pods) {
    pods.forEach(id -> reportUnhealthy(id, null));
  }

  private PodHealth.Verdict safeCheck(Pod p) {
    try {
      return health.check(p);
    } catch (RuntimeException e) {
      return PodHealth.Verdict.UNKNOWN;
    }
  }

  /**
   * Declares dead every active pod whose lease ran out more than the margin ago; after a pause of
   * the manager, first moves every deadline by the pause (see {@link Leases}) and renews the
   * store lease before granting anything. While the manager is not sure it leads its store, no
   * time is charged to the pods: they cannot renew.
   */
  void findDeadPods() {
    loop.checkOnLoop();
    long now = ticker.nanoTime();
    if (!leases.pausedAt(now) && !journal.leads(now)) {
      // Pods cannot renew while this manager grants nothing: that time is not theirs to answer for.
      leases.hold(now);
      return;
    }
    Leases.Check check = leases.check(journal.config().activePods(), now);
    if (check.stalledNanos() > 0) {
      journal.stalled();
      log.warn("shard manager: {} ms passed between two lease checks (the process was paused, its loop starved,"
          + " or its clock jumped); every pod gets a fresh lease before any is declared dead",
          TimeUnit.NANOSECONDS.toMillis(check.stalledNanos()));
    }
    for (Leases.Expired e : check.dead()) {
      markGone(e.pod(), "is dead: no lease renewal for " + TimeUnit.NANOSECONDS.toMillis(e.silentNanos()) + " ms");
    }
  }

  /**
   * Logs each space whose role no live pod hosts any more: its shards are kept (unowned, or on
   * their dead owner until it is replaced) and wait for a pod of the role, never dropped.
   */
  void reportUnhosted(ClusterConfig c) {
    for (String line : unhostedReports(c)) {
      log.warn("{}; they wait for a pod of that role (messages to its types wait, then fail naming the type and"
          + " the role)", line);
    }
  }

  /** What {@link #reportUnhosted} logs: one line per space no live pod hosts, with its types. */
  java.util.List<String> unhostedReports(ClusterConfig c) {
    java.util.List<String> lines = new java.util.ArrayList<>();
    for (io.atoll.core.Space s : Rounds.unhosted(c)) {
      lines.add(unhosted(s, types.onRole(p -> c.pod(p).isPresent(), s.role())));
    }
    return lines;
  }

  /**
   * The report of a space no live pod hosts: "space batch: 4 shards, no live pod with role batch
   * (types: Job, Report)", the types as its pods declared them (none known: no parenthesis).
   */
  static String unhosted(io.atoll.core.Space s, java.util.Collection<String> typeNames) {
    return "space " + s.displayName() + ": " + s.count() + " shards, no live pod with role " + s.displayName()
        + (typeNames.isEmpty() ? "" : " (types: " + names(typeNames) + ")");
  }

  /** How many type names a log line or report lists; the rest are counted. */
  static final int LISTED_NAMES = 20;

  /** "a, b, c" for up to {@link #LISTED_NAMES} names, then "and N more". */
  static String names(java.util.Collection<String> names) {
    // escaped: a pod of an older version may declare a name out of today's form
    java.util.List<String> first = names.stream().limit(LISTED_NAMES)
        .map(io.atoll.core.EntityAddress::printableTypeName).toList();
    return String.join(", ", first) + (names.size() > LISTED_NAMES ? " and " + (names.size() - LISTED_NAMES)
        + " more" : "");
  }

  /** The entity types pods of the installed config declared, name to declaration. Loop only. */
  java.util.SortedMap<String, TypeDeclaration> entityTypes() {
    loop.checkOnLoop();
    ClusterConfig c = journal.config();
    return types.all(p -> c.pod(p).isPresent(), c::isActive);
  }

  private NotLeadingException notLeading() {
    return new NotLeadingException("shard manager term " + journal.term() + " is not sure it still leads its store"
        + " (its store lease was not renewed in time); no lease is granted until it is (expected during a store"
        + " outage or a leader change; retry, or ask another manager)");
  }

  /** No more changes from health reports. */
  void close() {
    closed = true;
  }
}

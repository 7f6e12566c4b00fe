package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Spaces;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.LeadershipTakenException;
import io.atoll.core.spi.StaleTermException;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import io.atoll.manager.round.Rounds;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manager's write-ahead journal: the installed config, the term, and the store behind them.
 *
 * <p><b>Write-ahead.</b> Every change of the config is a transition: computed from the installed
 * config, saved to the store, and only then installed and reported to {@code onInstalled}.
 * Transitions run one after another, so none is computed from a config another one is replacing.
 * A manager that dies at any point resumes from the store and can never have given one shard to
 * two pods: a pod starts serving a shard only when it sees a saved claim naming it.
 *
 * <p><b>Terms.</b> {@link #recover} takes the store's leadership lease, whose grant carries a term
 * greater than every earlier one, and saves the stored state under it (compare-and-set on the
 * store's version and term). A manager whose lease another one took is refused at its next save
 * ({@link StaleTermException}), and one whose renewal ({@link #renewLease}) finds the lease lost
 * stops at once: either way {@code onDeposed} is told once, and every later transition fails.
 *
 * <p><b>Leading only while the store lease is surely live:</b> {@link StoreLease} renews the
 * store lease this journal took and tells whether it is surely still live ({@link #leads}); one
 * that finds another term deposes the journal like a refused save.
 *
 * <p><b>The lease it promised.</b> Every save also records the longest lease (and margin) a pod
 * may hold from a renewal granted under this state. A start takes the longer of the stored and
 * its own ({@link #promisedLimitNanos()}), waits that long for pods that do not renew, and keeps
 * writing it until {@link #keepOwnPromise()} says every lease of an earlier term has ended.
 *
 * <p><b>Tombstones.</b> Every transition keeps at most {@link #MAX_TOMBSTONES} GONE entries
 * ({@link Rounds#pruneTombstones}); the pruned pods are remembered in the same save
 * ({@link PrunedPods}, the newest {@link #MAX_PRUNED}) so that none of them registers again.
 *
 * <p><b>A save that failed</b> is read back before the next transition runs: the state of one of
 * this term's failed saves is installed (it landed after all), anything else but the last saved
 * version deposes ({@link FailedSaves} keeps the digests and gives the verdict).
 *
 * <p>Loop-confined, except {@link #term()}, which is fixed after {@link #recover}. Saves and the
 * read-back after a failed one run on the {@code io} executor, never on the loop (a store that
 * stopped answering must not stop the grants of pod leases); their results come back to the
 * loop. Only {@link #recover} blocks on the store.
 */
@GuardedBy("loop")
final class Journal {

  private static final Logger log = LoggerFactory.getLogger(Journal.class);

  private final AssignmentStore store;
  private final Executor io;
  private final Loop loop;
  private final Ticker ticker;
  private final Spaces spaces;
  private final Consumer<ClusterConfig> onInstalled;
  private final Consumer<StoreConflictException> onDeposed;
  private final Duration ownTtl;
  private final Duration ownMargin;
  private final int maxTombstones;
  private final int maxPruned;

  /** The most GONE entries a config keeps. */
  static final int MAX_TOMBSTONES = 1024;
  /** The most pruned pods remembered (8 bytes each in the state). */
  static final int MAX_PRUNED = 16_384;

  private ClusterConfig config;
  private Duration promisedTtl = Duration.ZERO;
  private Duration promisedMargin = Duration.ZERO;
  private PrunedPods pruned = PrunedPods.NONE;
  /** The cluster's signing key kept in the state ("" when the managers bring a key file). */
  private String signingKey = "";
  private final StoreLease storeLease;
  private volatile long term;
  private long storeVersion;
  private final FailedSaves failedSaves = new FailedSaves();
  private CompletableFuture<?> transitions = CompletableFuture.completedFuture(null);
  private boolean closed;

  /**
   * @param io where saves run (they may block)
   * @param onInstalled told, on the loop, of every config installed after a save
   * @param onDeposed told, on the loop, once, when another manager took over the store
   */
  Journal(AssignmentStore store, Executor io, Loop loop, Ticker ticker, int numberOfShards,
      Consumer<ClusterConfig> onInstalled, Consumer<StoreConflictException> onDeposed) {
    this(store, io, loop, ticker, numberOfShards, onInstalled, onDeposed, Duration.ZERO, Duration.ZERO,
        MAX_TOMBSTONES, MAX_PRUNED);
  }

  /**
   * @param ownTtl the lease this manager grants
   * @param ownMargin the margin it waits beyond a lease
   * @param maxTombstones the most GONE entries a config keeps
   * @param maxPruned the most pruned pods remembered
   */
  Journal(AssignmentStore store, Executor io, Loop loop, Ticker ticker, int numberOfShards,
      Consumer<ClusterConfig> onInstalled, Consumer<StoreConflictException> onDeposed, Duration ownTtl,
      Duration ownMargin, int maxTombstones, int maxPruned) {
    this(store, io, loop, ticker, Spaces.single(numberOfShards), onInstalled, onDeposed, ownTtl, ownMargin,
        maxTombstones, maxPruned);
  }

  /** As above, with the shards laid out in {@code spaces}. */
  Journal(AssignmentStore store, Executor io, Loop loop, Ticker ticker, Spaces spaces,
      Consumer<ClusterConfig> onInstalled, Consumer<StoreConflictException> onDeposed, Duration ownTtl,
      Duration ownMargin, int maxTombstones, int maxPruned) {
    this.ticker = ticker;
    this.ownTtl = ownTtl;
    this.ownMargin = ownMargin;
    this.maxTombstones = maxTombstones;
    this.maxPruned = maxPruned;
    this.store = store;
    this.io = io;
    this.loop = loop;
    this.spaces = spaces;
    this.onInstalled = onInstalled;
    this.onDeposed = onDeposed;
    this.storeLease = new StoreLease(store, io, loop, ticker, this::depose);
  }

  /**
   * Keeps {@code encodedKey} in every state saved from {@link #recover} on: the cluster's signing
   * key, which the next manager loads at its start. Before {@link #recover}.
   */
  void keepSigningKey(String encodedKey) {
    signingKey = java.util.Objects.requireNonNull(encodedKey, "encodedKey");
  }

  /**
   * Loads the store, takes the next term, and saves {@code startOfTerm} of the stored config
   * under it before anything else happens. Blocks on the store (a start has nothing else to do).
   *
   * @return the installed config
   * @throws StoreException if the store cannot be read or written, holds another number of
   *     shards, or another manager wrote to it meanwhile
   */
  ClusterConfig recover(UnaryOperator<ClusterConfig> startOfTerm) {
    return recover("shard manager", Duration.ofSeconds(10), startOfTerm);
  }

  /**
   * {@link #recover(UnaryOperator)} leading as {@code holder} with a lease of {@code leaseTtl},
   * which {@link #renewLease} must renew.
   *
   * @throws LeadershipTakenException if another manager holds a live lease
   */
  ClusterConfig recover(String holder, Duration leaseTtl, UnaryOperator<ClusterConfig> startOfTerm) {
    loop.checkOnLoop();
    checkShards(store.load()); // a store of another size takes no term
    long sent = ticker.nanoTime();
    AssignmentStore.Lease l = store.tryAcquire(holder, leaseTtl)
        .orElseThrow(() -> new LeadershipTakenException(store.toString(), store.leader()));
    try {
      Optional<AssignmentStore.Stored> stored = store.load(); // under the lease: nobody else writes now
      ManagerState state = checkShards(stored);
      if (!signingKey.isEmpty() && !state.signingKey().isEmpty() && !state.signingKey().equals(signingKey)) {
        // Read before the lease; another manager saved its key in between (both started on an empty store).
        throw new StoreException(store + ": another manager stored the cluster's signing key during this start"
            + " (expected: the key read at start); start again");
      }
      long version = stored.map(AssignmentStore.Stored::version).orElse(0L);
      Duration ttl = max(state.leaseTtl(), ownTtl);
      Duration margin = max(state.leaseMargin(), ownMargin);
      if (ttl.compareTo(ownTtl) > 0 || margin.compareTo(ownMargin) > 0) {
        log.warn("shard manager: the previous term granted leases of {} ms (+ {} ms margin), longer than this"
            + " manager's {} ms (+ {} ms); it waits that long for pods that do not renew", ttl.toMillis(),
            margin.toMillis(), ownTtl.toMillis(), ownMargin.toMillis());
      }
      Rounds.Pruned p = Rounds.pruneTombstones(startOfTerm.apply(state.config()), maxTombstones);
      PrunedPods nextPruned = state.pruned().plus(p.pruned(), maxPruned);
      storeVersion = store.save(new ManagerState(l.term(), p.config(), ttl, margin, nextPruned, signingKey).encode(),
          l.term(), version);
      storeLease.acquired(l, sent, leaseTtl);
      term = l.term();
      config = p.config();
      promisedTtl = ttl;
      promisedMargin = margin;
      pruned = nextPruned;
      return config;
    } catch (RuntimeException e) {
      try {
        store.release(l); // a standby need not wait for the lease to lapse
      } catch (RuntimeException r) {
        e.addSuppressed(r);
      }
      throw e;
    }
  }

  /** The stored state, checked against the configured layout (see {@link StoredLayout#check}). */
  private ManagerState checkShards(Optional<AssignmentStore.Stored> stored) {
    return StoredLayout.check(stored, spaces, store);
  }

  /** Renews the store lease (see {@link StoreLease#renew}). Loop only. */
  void renewLease() {
    storeLease.renew();
  }

  /** Whether the store lease is surely live at {@code now} (see {@link StoreLease#leads}). Loop only. */
  boolean leads(long now) {
    return storeLease.leads(now);
  }

  /** The manager was paused (see {@link StoreLease#stalled}). Loop only. */
  void stalled() {
    storeLease.stalled();
  }

  /** How long the store lease lives from a renewal's send time, in nanoseconds (0 before the start). */
  long storeLeaseNanos() {
    return storeLease.ttlNanos();
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /**
   * The longest lease plus margin a pod may hold from any term so far, as taken by
   * {@link #recover}: how long a starting manager waits for a pod that does not renew.
   */
  long promisedLimitNanos() {
    return promisedTtl.plus(promisedMargin).toNanos();
  }

  /** Every lease of earlier terms has ended: later saves record this manager's own lease. Loop only. */
  void keepOwnPromise() {
    loop.checkOnLoop();
    promisedTtl = ownTtl;
    promisedMargin = ownMargin;
  }

  /** Whether {@code pod}'s tombstone was pruned: it may not register again. Loop only. */
  boolean wasPruned(PodId pod) {
    loop.checkOnLoop();
    return pruned.contains(pod);
  }

  /** The most active pods a config may list beside its tombstones. */
  int maxActivePods() {
    return ClusterConfig.MAX_PODS - maxTombstones;
  }

  /** The installed config. Loop only. */
  ClusterConfig config() {
    loop.checkOnLoop();
    return config;
  }

  /** The term taken by {@link #recover}; any thread. */
  long term() {
    return term;
  }

  /**
   * Queues a transition: once those before it are done, {@code change} is applied to the
   * installed config; if that changes it, the result is saved and then installed.
   *
   * @return completes on the loop with the installed config, or exceptionally if the change
   *     threw, the save failed, or the journal is closed
   */
  CompletableFuture<ClusterConfig> transition(UnaryOperator<ClusterConfig> change) {
    loop.checkOnLoop();
    CompletableFuture<ClusterConfig> result = new CompletableFuture<>();
    transitions = transitions.handle((x, e) -> null).thenComposeAsync(ignored -> {
      if (closed) {
        result.completeExceptionally(new IllegalStateException("shard manager closed"));
        return CompletableFuture.completedFuture(null);
      }
      ClusterConfig before = config;
      ClusterConfig next;
      PrunedPods nextPruned;
      try {
        Rounds.Pruned p = Rounds.pruneTombstones(change.apply(before), maxTombstones);
        next = p.config();
        nextPruned = pruned.plus(p.pruned(), maxPruned);
      } catch (RuntimeException e) {
        log.error("shard manager: a config change failed: {}", e.toString());
        result.completeExceptionally(e);
        return CompletableFuture.completedFuture(null);
      }
      if (next.equals(before)) {
        result.complete(before);
        return CompletableFuture.completedFuture(null);
      }
      byte[] data = new ManagerState(term, next, promisedTtl, promisedMargin, nextPruned, signingKey).encode();
      long expected = storeVersion;
      long writer = term;
      return CompletableFuture.supplyAsync(() -> store.save(data, writer, expected), io)
          .handleAsync((version, err) -> {
            if (err == null) {
              storeVersion = version;
              failedSaves.settled(); // a save that failed earlier expected an older version: it cannot land now
              pruned = nextPruned;
              install(next);
              result.complete(next);
              return CompletableFuture.<Void>completedFuture(null);
            }
            Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            failedSaves.failed(data);
            return onSaveFailed(cause).whenComplete((x, e) -> result.completeExceptionally(cause));
          }, loop).thenCompose(f -> f);
    }, loop);
    return result;
  }

  private void install(ClusterConfig next) {
    config = next;
    onInstalled.accept(next);
  }

  /**
   * After a failed save: a newer term deposes at once; anything else is read back off the loop
   * (a store that stopped answering must not stop the loop, which grants the pods' leases) before
   * the next transition runs. Completes on the loop.
   */
  private CompletableFuture<Void> onSaveFailed(Throwable err) {
    if (err instanceof StaleTermException c) {
      log.error("shard manager term {} is deposed: {}", term, c.getMessage());
      depose(c);
      return CompletableFuture.completedFuture(null);
    }
    if (err instanceof StoreConflictException c) {
      // The store's term is still this one (else the store says stale): most likely a save of this
      // term that seemed to fail (a timeout) was applied later; the read-back checks that it was.
      log.warn("shard manager term {}: {}; reading the store back (a save of this term that seemed to fail may have"
          + " been applied since)", term, c.getMessage());
    } else {
      log.warn("shard manager: saving the config failed: {}", err.toString());
    }
    return CompletableFuture.supplyAsync(store::load, io).handleAsync((s, e) -> {
      if (e != null) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        log.warn("shard manager: the store cannot be read either: {}", cause.toString());
      } else if (!closed) {
        try {
          readBack(s);
        } catch (RuntimeException bad) {
          log.warn("shard manager: the stored state cannot be read back: {}", bad.toString());
        }
      }
      return null;
    }, loop);
  }

  /** Acts on what a failed save left (see {@link FailedSaves#judge}). */
  private void readBack(Optional<AssignmentStore.Stored> stored) {
    switch (failedSaves.judge(stored, storeVersion, term)) {
      case FailedSaves.Unchanged u -> { }
      case FailedSaves.Foreign f -> {
        log.error("shard manager term {} {}", term, f.why());
        depose(new StoreConflictException(store.toString(), storeVersion, f.version()));
      }
      case FailedSaves.Own own -> {
        storeVersion = own.version();
        failedSaves.settled();
        pruned = own.state().pruned();
        if (!own.state().config().equals(config)) {
          install(own.state().config());
        }
      }
    }
  }

  private void depose(StoreConflictException why) {
    if (!closed) {
      closed = true;
      storeLease.close();
      onDeposed.accept(why);
    }
  }

  /** Refuses every later transition. Loop only. */
  void close() {
    closed = true;
    storeLease.close();
  }

  /** Whether the journal refuses transitions (closed, or deposed). */
  boolean closed() {
    return closed;
  }
}

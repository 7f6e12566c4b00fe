package io.atoll.manager;

import io.atoll.core.Space;
import io.atoll.core.Spaces;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.allocation.SpaceAllocation;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The shard manager's settings. Immutable; change one with the {@code with...} methods.
 *
 * @param numberOfShards how many shards the cluster has; fixed for the life of a store
 * @param leaseTtl how long a renewal keeps a pod's lease; pods renew every third of it
 * @param leaseMargin extra time the manager waits after a lease has run out before it moves a
 *     silent pod's shards, covering clock-rate differences and scheduling delays; at least a
 *     twentieth of the lease and at least {@link #MIN_MARGIN_MILLIS} ms
 * @param pingTimeout how long a pod may take to answer the pings of a rebalance
 * @param terminationTimeout how long a pod may take to stop the entities of an unassigned shard
 * @param rebalanceInterval how often a periodic rebalance runs
 * @param rebalanceRetryInterval how soon a rebalance that failed in part is retried
 * @param limits how many owned shards one round may move; rounds follow each other at once
 *     until nothing is left to move
 * @param strategy the allocation strategy
 * @param storeLease the leadership lease this manager takes in its store, renewed every third of
 *     it: how long after a leader's crash a standby can take over, and how long a leader cut off
 *     from its store keeps granting pod leases ({@link #MAX_CLOCK_DRIFT} bounds it against the
 *     pod lease and margin; see docs/architecture.md, "Safety assumptions")
 * @param spaces how the shards are laid out in spaces, one per role ({@link Spaces#single} of
 *     {@code numberOfShards} without roles); its size is {@code numberOfShards}; fixed for the
 *     life of a store, except that it grows at run time (see {@code newSpaceShards})
 * @param newSpaceShards the shard count of a space the manager appends when a pod registers with
 *     a role that has no space ({@value #DEFAULT_NEW_SPACE_SHARDS} by default); 0: none is
 *     appended, such a pod is accepted and gets no shards of that role
 * @param spaceSettings per role ({@code ""} for the default space), a space's own limits and
 *     strategy, each part falling back to {@code limits} and {@code strategy}; a role may have
 *     no space yet (its settings apply once one is appended); empty: every space is allocated
 *     with the global ones
 * @param kvReplicas how many replicas of each Atoll KV node's slots the manager keeps, on other KV
 *     nodes it makes replicas (0, the default: none; see {@code round.KvReplicas}); at most
 *     {@link #MAX_KV_REPLICAS}
 */
public record ManagerSettings(
    int numberOfShards,
    Duration leaseTtl,
    Duration leaseMargin,
    Duration pingTimeout,
    Duration terminationTimeout,
    Duration rebalanceInterval,
    Duration rebalanceRetryInterval,
    RebalanceLimits limits,
    AllocationStrategy strategy,
    Duration storeLease,
    Spaces spaces,
    int newSpaceShards,
    Map<String, SpaceSettings> spaceSettings,
    int kvReplicas) {

  /** The most replicas of a KV node's slots the manager keeps. */
  public static final int MAX_KV_REPLICAS = 5;

  /** The shard count of a space appended at run time unless set otherwise. */
  public static final int DEFAULT_NEW_SPACE_SHARDS = 100;

  /** The smallest lease margin, in milliseconds (it is also at least a twentieth of the lease). */
  public static final long MIN_MARGIN_MILLIS = 50;

  /**
   * The assumed bound on clock-rate differences: any two processes' monotonic clocks measure
   * one interval within 1 % of each other (real clocks drift by parts per million; this covers
   * scheduling delays too). What a leader change relies on:
   * {@code 2 * drift * (storeLease + leaseTtl) <= (1 - drift) * leaseMargin}, enforced here as
   * {@code storeLease + leaseTtl <= 49 * leaseMargin}.
   */
  public static final double MAX_CLOCK_DRIFT = 0.01;

  /** {@code storeLease + leaseTtl} may be at most this many margins (from {@link #MAX_CLOCK_DRIFT}). */
  public static final int MARGINS_PER_LEASES = 49;

  /** The most shards a cluster may have. */
  public static final int MAX_SHARDS = 1 << 16;

  /** Validates every value, naming it and its expected form. */
  public ManagerSettings {
    if (numberOfShards < 1 || numberOfShards > MAX_SHARDS) {
      throw new IllegalArgumentException("shards: " + numberOfShards + " (expected: 1.." + MAX_SHARDS + ")");
    }
    Objects.requireNonNull(spaces, "spaces");
    if (spaces.size() != numberOfShards) {
      throw new IllegalArgumentException("spaces: " + spaces + " hold " + spaces.size() + " shards (expected: "
          + numberOfShards + ", the number of shards)");
    }
    positive("lease-ttl", leaseTtl);
    Objects.requireNonNull(leaseMargin, "leaseMargin");
    if (leaseTtl.toMillis() < 300) {
      throw new IllegalArgumentException("lease-ttl: " + leaseTtl.toMillis() + " ms (expected: >= 300 ms)");
    }
    // The margin is what covers clocks that run at different rates and a pod's scheduling delays:
    // with none, a pod whose clock runs a little slow still serves after the manager moved its shards.
    long minMargin = Math.max(MIN_MARGIN_MILLIS, leaseTtl.toMillis() / 20);
    if (leaseMargin.toMillis() < minMargin) {
      throw new IllegalArgumentException("lease-margin: " + leaseMargin.toMillis() + " ms (expected: >= " + minMargin
          + " ms, a twentieth of the lease and at least " + MIN_MARGIN_MILLIS + " ms)");
    }
    positive("store-lease", storeLease);
    if (storeLease.toMillis() < 300) {
      throw new IllegalArgumentException("store-lease: " + storeLease.toMillis() + " ms (expected: >= 300 ms)");
    }
    // A standby counts a whole pod lease plus margin from its takeover, which comes a store lease
    // after the old leader's last renewal was sent; the old leader grants nothing after that send
    // plus a store lease. The margin must absorb the drift over both leases.
    if (storeLease.plus(leaseTtl).toMillis() > MARGINS_PER_LEASES * leaseMargin.toMillis()) {
      throw new IllegalArgumentException("store-lease + lease-ttl: " + storeLease.toMillis() + " + "
          + leaseTtl.toMillis() + " ms (expected: <= " + MARGINS_PER_LEASES + " x lease-margin = "
          + MARGINS_PER_LEASES * leaseMargin.toMillis() + " ms, so that the margin covers 1 % clock drift over"
          + " both leases; shorten the store lease or widen the margin)");
    }
    positive("ping-timeout", pingTimeout);
    positive("termination-timeout", terminationTimeout);
    positive("rebalance-interval", rebalanceInterval);
    positive("rebalance-retry-interval", rebalanceRetryInterval);
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(strategy, "strategy");
    if (newSpaceShards < 0 || newSpaceShards > MAX_SHARDS) {
      throw new IllegalArgumentException("new-space-shards: " + newSpaceShards + " (expected: 0.." + MAX_SHARDS
          + "; 0 appends no space for a new role)");
    }
    Objects.requireNonNull(spaceSettings, "spaceSettings");
    if (spaceSettings.size() > Spaces.MAX_SPACES) {
      throw new IllegalArgumentException("space settings: " + spaceSettings.size() + " roles (expected: <= "
          + Spaces.MAX_SPACES + ")");
    }
    Map<String, SpaceSettings> copy = new LinkedHashMap<>();
    spaceSettings.forEach((role, ss) -> {
      try {
        Space.checkRole(role);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("space settings: " + e.getMessage(), e);
      }
      copy.put(role, Objects.requireNonNull(ss, "space settings of role '" + role + "'"));
    });
    spaceSettings = Collections.unmodifiableMap(copy);
    if (kvReplicas < 0 || kvReplicas > MAX_KV_REPLICAS) {
      throw new IllegalArgumentException("replicas: " + kvReplicas + " (expected: 0.." + MAX_KV_REPLICAS
          + ", the replicas of each Atoll KV node's slots)");
    }
  }

  /** Settings without KV replicas. */
  public ManagerSettings(int numberOfShards, Duration leaseTtl, Duration leaseMargin, Duration pingTimeout,
      Duration terminationTimeout, Duration rebalanceInterval, Duration rebalanceRetryInterval,
      RebalanceLimits limits, AllocationStrategy strategy, Duration storeLease, Spaces spaces, int newSpaceShards,
      Map<String, SpaceSettings> spaceSettings) {
    this(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout, rebalanceInterval,
        rebalanceRetryInterval, limits, strategy, storeLease, spaces, newSpaceShards, spaceSettings, 0);
  }

  /** Settings without space settings of their own: every space allocated with the global ones. */
  public ManagerSettings(int numberOfShards, Duration leaseTtl, Duration leaseMargin, Duration pingTimeout,
      Duration terminationTimeout, Duration rebalanceInterval, Duration rebalanceRetryInterval,
      RebalanceLimits limits, AllocationStrategy strategy, Duration storeLease, Spaces spaces, int newSpaceShards) {
    this(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout, rebalanceInterval,
        rebalanceRetryInterval, limits, strategy, storeLease, spaces, newSpaceShards, Map.of());
  }

  /**
   * The strategy and limits the space of {@code role} is allocated with: its own
   * {@link SpaceSettings}, each part not set there from the global {@link #limits} and
   * {@link #strategy}.
   */
  public SpaceAllocation allocation(String role) {
    SpaceSettings own = spaceSettings.get(role);
    return own == null ? new SpaceAllocation(strategy, limits) : own.resolve(limits, strategy);
  }

  /**
   * The roles of {@link #spaceSettings} that {@code layout} has no space for, sorted: their
   * settings wait for a pod of the role to register (its space is appended then), and a role
   * misspelt in {@code --space-settings} shows here.
   */
  public java.util.List<String> settingsWithoutSpace(Spaces layout) {
    return spaceSettings.keySet().stream().filter(r -> layout.of(r) == null).sorted().toList();
  }

  /** Settings laid out in {@code spaces}, appending spaces of the default size for new roles. */
  public ManagerSettings(int numberOfShards, Duration leaseTtl, Duration leaseMargin, Duration pingTimeout,
      Duration terminationTimeout, Duration rebalanceInterval, Duration rebalanceRetryInterval,
      RebalanceLimits limits, AllocationStrategy strategy, Duration storeLease, Spaces spaces) {
    this(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout, rebalanceInterval,
        rebalanceRetryInterval, limits, strategy, storeLease, spaces, DEFAULT_NEW_SPACE_SHARDS);
  }

  /** Settings of one default space of {@code numberOfShards} (a cluster without roles). */
  public ManagerSettings(int numberOfShards, Duration leaseTtl, Duration leaseMargin, Duration pingTimeout,
      Duration terminationTimeout, Duration rebalanceInterval, Duration rebalanceRetryInterval,
      RebalanceLimits limits, AllocationStrategy strategy, Duration storeLease) {
    this(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout, rebalanceInterval,
        rebalanceRetryInterval, limits, strategy, storeLease, Spaces.single(Math.max(1, Math.min(numberOfShards, MAX_SHARDS))));
  }

  /** Settings whose store lease is as long as the pod lease. */
  public ManagerSettings(int numberOfShards, Duration leaseTtl, Duration leaseMargin, Duration pingTimeout,
      Duration terminationTimeout, Duration rebalanceInterval, Duration rebalanceRetryInterval,
      RebalanceLimits limits, AllocationStrategy strategy) {
    this(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout, rebalanceInterval,
        rebalanceRetryInterval, limits, strategy, leaseTtl);
  }

  private static void positive(String name, Duration d) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
    }
  }

  /**
   * The defaults: 300 shards, ping timeout 3 s, termination timeout 3 s, rebalance retry 10 s
   * (the seeds' values); a 10 s lease with a 2 s margin; a periodic rebalance every 20 s
   * (Shardcake's); Akka's per-round limit of 20 shards or 10%; the version-aware strategy.
   */
  public static ManagerSettings defaults() {
    return new ManagerSettings(300, Duration.ofSeconds(10), Duration.ofSeconds(2), Duration.ofSeconds(3),
        Duration.ofSeconds(3), Duration.ofSeconds(20), Duration.ofSeconds(10), RebalanceLimits.DEFAULT,
        AllocationStrategy.versionAware());
  }

  /** With another number of shards, in one default space. */
  public ManagerSettings withNumberOfShards(int n) {
    return new ManagerSettings(n, leaseTtl, leaseMargin, pingTimeout, terminationTimeout, rebalanceInterval,
        rebalanceRetryInterval, limits, strategy, storeLease, Spaces.single(Math.max(1, Math.min(n, MAX_SHARDS))),
        newSpaceShards, spaceSettings, kvReplicas);
  }

  /**
   * With {@code n} shards in each space appended at run time for a role that has none (0: no
   * space is appended).
   */
  public ManagerSettings withNewSpaceShards(int n) {
    return new ManagerSettings(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout,
        rebalanceInterval, rebalanceRetryInterval, limits, strategy, storeLease, spaces, n, spaceSettings, kvReplicas);
  }

  /** With the shards laid out in {@code s}: as many shards as the spaces hold together. */
  public ManagerSettings withSpaces(Spaces s) {
    return new ManagerSettings(s.size(), leaseTtl, leaseMargin, pingTimeout, terminationTimeout, rebalanceInterval,
        rebalanceRetryInterval, limits, strategy, storeLease, s, newSpaceShards, spaceSettings, kvReplicas);
  }

  /** With another lease and margin; the store lease becomes as long as the pod lease. */
  public ManagerSettings withLease(Duration ttl, Duration margin) {
    return new ManagerSettings(numberOfShards, ttl, margin, pingTimeout, terminationTimeout, rebalanceInterval,
        rebalanceRetryInterval, limits, strategy, ttl, spaces, newSpaceShards, spaceSettings, kvReplicas);
  }

  /** With another store lease (set after {@link #withLease}, which resets it). */
  public ManagerSettings withStoreLease(Duration ttl) {
    return new ManagerSettings(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout,
        rebalanceInterval, rebalanceRetryInterval, limits, strategy, ttl, spaces, newSpaceShards, spaceSettings, kvReplicas);
  }

  /** With another ping and termination timeout. */
  public ManagerSettings withTimeouts(Duration ping, Duration termination) {
    return new ManagerSettings(numberOfShards, leaseTtl, leaseMargin, ping, termination, rebalanceInterval,
        rebalanceRetryInterval, limits, strategy, storeLease, spaces, newSpaceShards, spaceSettings, kvReplicas);
  }

  /** With other rebalance intervals. */
  public ManagerSettings withRebalanceIntervals(Duration periodic, Duration retry) {
    return new ManagerSettings(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout, periodic,
        retry, limits, strategy, storeLease, spaces, newSpaceShards, spaceSettings, kvReplicas);
  }

  /**
   * With these spaces' own allocation settings, by role ({@code ""} for the default space); every
   * other space keeps the global ones.
   */
  public ManagerSettings withSpaceSettings(Map<String, SpaceSettings> byRole) {
    return new ManagerSettings(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout,
        rebalanceInterval, rebalanceRetryInterval, limits, strategy, storeLease, spaces, newSpaceShards, byRole, kvReplicas);
  }

  /** With other limits and strategy. */
  public ManagerSettings withAllocation(RebalanceLimits l, AllocationStrategy s) {
    return new ManagerSettings(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout,
        rebalanceInterval, rebalanceRetryInterval, l, s, storeLease, spaces, newSpaceShards, spaceSettings, kvReplicas);
  }

  /**
   * With {@code n} replicas of each Atoll KV node's slots (0: none): the manager makes KV nodes
   * that join replicas of the primaries that lack them, and promotes a replica when its primary's
   * lease ran out.
   */
  public ManagerSettings withKvReplicas(int n) {
    return new ManagerSettings(numberOfShards, leaseTtl, leaseMargin, pingTimeout, terminationTimeout,
        rebalanceInterval, rebalanceRetryInterval, limits, strategy, storeLease, spaces, newSpaceShards,
        spaceSettings, n);
  }
}

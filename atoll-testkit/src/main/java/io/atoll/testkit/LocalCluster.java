package io.atoll.testkit;

import io.atoll.core.PodAddress;
import io.atoll.core.Ticker;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.runtime.Sharding;
import io.atoll.store.file.FileAssignmentStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * A real Atoll cluster in one JVM: a shard manager with a file store and any number of pods and
 * clients, all talking gRPC on 127.0.0.1 on ephemeral ports. For tests of services built on Atoll
 * and for Atoll's own black-box tests.
 *
 * <pre>{@code
 * try (LocalCluster cluster = LocalCluster.builder().shards(30)
 *         .podTemplate(b -> b.register(COUNTER, ctx -> new Counter())).start()) {
 *   Sharding a = cluster.addPod();
 *   Sharding b = cluster.addPod();
 *   cluster.awaitSettled(Duration.ofSeconds(20));
 *   a.entity(COUNTER, "c-1").tell(new Add(1));
 * }
 * }</pre>
 *
 * <p>Pods start from {@link #podBuilder()}: the manager's address, the template, and the
 * customization given to {@link #addPod(UnaryOperator)}. {@link #close()} stops every pod
 * gracefully, then the manager, then deletes the directory if the cluster made it. Not
 * thread-safe: drive it from the test's thread.
 */
public final class LocalCluster implements AutoCloseable {

  private static final Duration SETTLE_POLL = Duration.ofMillis(100);

  private final Path dir;
  private final boolean ownsDir;
  private final ManagerSettings settings;
  private final Ticker ticker;
  private final UnaryOperator<Sharding.Builder> template;
  private final List<Sharding> pods = new ArrayList<>();
  private ShardManager manager;
  private boolean closed;

  private LocalCluster(Builder b, Path dir, boolean ownsDir) {
    this.dir = dir;
    this.ownsDir = ownsDir;
    this.settings = b.settings != null ? b.settings : fastSettings(b.shards);
    this.ticker = b.ticker;
    this.template = b.template;
  }

  /** A builder: 30 shards, {@link #fastSettings} timings, the system clock, a temporary directory. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Manager settings for tests: a 1.5 s lease with a 0.5 s margin, 1 s ping and 2 s termination
   * timeouts, a rebalance every 5 s and retries after 0.5 s, so that joins, leaves and crashes
   * settle in seconds.
   *
   * @throws IllegalArgumentException if {@code shards} is out of the manager's range
   */
  public static ManagerSettings fastSettings(int shards) {
    return ManagerSettings.defaults()
        .withNumberOfShards(shards)
        .withLease(Duration.ofMillis(1500), Duration.ofMillis(500))
        .withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(2))
        .withRebalanceIntervals(Duration.ofSeconds(5), Duration.ofMillis(500));
  }

  // ---- the manager

  /** The running shard manager. @throws IllegalStateException if it is stopped */
  public ShardManager manager() {
    if (manager == null) {
      throw new IllegalStateException("the shard manager is stopped (expected: running; see startManager)");
    }
    return manager;
  }

  /** Where the running manager listens. @throws IllegalStateException if it is stopped */
  public PodAddress managerAddress() {
    return manager().address();
  }

  /** Where the manager's store is. */
  public Path dir() {
    return dir;
  }

  /** The manager's settings. */
  public ManagerSettings settings() {
    return settings;
  }

  /**
   * Starts the manager on {@code port} (0: any free port) with the cluster's store, as a restart
   * would: it reads the store and takes the next term.
   *
   * @throws IllegalStateException if a manager is running
   */
  public ShardManager startManager(int port) {
    if (manager != null) {
      throw new IllegalStateException("a shard manager is running on " + manager.address()
          + " (expected: stopped; see stopManager)");
    }
    manager = ShardManager.start(settings, FileAssignmentStore.open(dir.resolve("manager")), PodHealth.LEASE_ONLY,
        "127.0.0.1", port, ticker, new Random());
    return manager;
  }

  /** Stops the manager (as a crash would: pods get no notice); idempotent. */
  public void stopManager() {
    if (manager != null) {
      manager.close();
      manager = null;
    }
  }

  // ---- pods

  /** A builder for a pod of this cluster: the manager's address, test timings and the template. */
  public Sharding.Builder podBuilder() {
    Sharding.Builder b = Sharding.builder().manager(managerAddress())
        .terminationTimeout(Duration.ofSeconds(2))
        .askTimeout(Duration.ofSeconds(5)).sendTimeout(Duration.ofSeconds(5));
    if (ticker != Ticker.SYSTEM) {
      b.ticker(ticker);
    }
    return template.apply(b);
  }

  /** Starts a pod from {@link #podBuilder()}; returns once it has joined. */
  public Sharding addPod() {
    return addPod(UnaryOperator.identity());
  }

  /** Starts a pod from {@link #podBuilder()} changed by {@code custom}; returns once it has joined. */
  public Sharding addPod(UnaryOperator<Sharding.Builder> custom) {
    Sharding s = custom.apply(podBuilder()).start();
    pods.add(s);
    return s;
  }

  /**
   * A builder for a client of this cluster (a member that sends but hosts no shards, so the
   * template is not applied): the manager's address and 10 s ask and send timeouts.
   */
  public Sharding.Builder clientBuilder() {
    Sharding.Builder b = Sharding.builder().manager(managerAddress()).clientOnly()
        .askTimeout(Duration.ofSeconds(10)).sendTimeout(Duration.ofSeconds(10));
    if (ticker != Ticker.SYSTEM) {
      b.ticker(ticker);
    }
    return b;
  }

  /** Starts a client from {@link #clientBuilder()}; returns once it knows the cluster. */
  public Sharding addClient() {
    return addClient(UnaryOperator.identity());
  }

  /** Starts a client from {@link #clientBuilder()} changed by {@code custom}. */
  public Sharding addClient(UnaryOperator<Sharding.Builder> custom) {
    return adopt(custom.apply(clientBuilder()).start());
  }

  /** Adds a member started elsewhere, so that the cluster closes it and counts it when settling. */
  public Sharding adopt(Sharding member) {
    pods.add(Objects.requireNonNull(member, "member"));
    return member;
  }

  /** Stops {@code pod} gracefully (it hands its shards over) and forgets it. */
  public void stopPod(Sharding pod) {
    if (!pods.remove(pod)) {
      throw new IllegalArgumentException("pod " + pod.podId() + " is not a member of this cluster");
    }
    pod.close();
  }

  /** The members started so far and not stopped, in start order. */
  public List<Sharding> pods() {
    return List.copyOf(pods);
  }

  // ---- conditions

  /**
   * Whether the cluster is at rest: the manager's config is {@link ClusterChecks#settled settled}
   * as the members see it (every shard owned by an active pod that serves exactly what it owns)
   * and {@link ClusterChecks#balanced balanced} (shard counts differ by at most one).
   */
  public boolean isSettled() {
    var config = manager().config();
    return ClusterChecks.settled(config, pods) && ClusterChecks.balanced(config, config.activePods().size());
  }

  /**
   * Waits until the cluster {@link #isSettled is at rest}, on two checks 100 ms apart. Balance is
   * part of it because a pod that has just joined owns nothing yet and the round that gives it
   * shards starts a moment later; a test that sends then would race that round. Pods of one
   * version reach balance; with mixed versions, wait on {@link ClusterChecks} conditions instead.
   *
   * @throws Await.ConditionTimeoutException if that does not happen within {@code timeout}
   */
  public void awaitSettled(Duration timeout) {
    boolean[] before = {false};
    Await.until("every shard owned by a live pod that serves it, evenly spread", timeout, SETTLE_POLL, () -> {
      boolean now = isSettled();
      boolean twice = now && before[0];
      before[0] = now;
      return twice;
    });
  }

  /** Stops every member gracefully, then the manager; idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (Sharding p : pods) {
      try {
        p.close();
      } catch (RuntimeException e) {
        // closing the others anyway
      }
    }
    pods.clear();
    stopManager();
    if (ownsDir) {
      deleteTree(dir);
    }
  }

  /** Whether {@link #close()} has run. */
  public boolean isClosed() {
    return closed;
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      // a temporary directory left behind is not a test failure
    }
  }

  /** Builds a {@link LocalCluster}. Not thread-safe. */
  public static final class Builder {
    private int shards = 30;
    private ManagerSettings settings;
    private Ticker ticker = Ticker.SYSTEM;
    private Path dir;
    private UnaryOperator<Sharding.Builder> template = UnaryOperator.identity();

    private Builder() {}

    /**
     * The number of shards, with {@link #fastSettings} timings. Default 30.
     *
     * @throws IllegalArgumentException unless 1..{@link ManagerSettings#MAX_SHARDS}
     */
    public Builder shards(int n) {
      if (n < 1 || n > ManagerSettings.MAX_SHARDS) {
        throw new IllegalArgumentException("shards: " + n + " (expected: 1.." + ManagerSettings.MAX_SHARDS + ")");
      }
      this.shards = n;
      this.settings = null;
      return this;
    }

    /** The manager's settings, replacing {@link #shards} and the test timings. */
    public Builder settings(ManagerSettings s) {
      this.settings = Objects.requireNonNull(s, "settings");
      return this;
    }

    /** The clock every member reads (e.g. a {@link VirtualTicker}). Default: the system clock. */
    public Builder ticker(Ticker t) {
      this.ticker = Objects.requireNonNull(t, "ticker");
      return this;
    }

    /** Where the manager's store goes; kept after close. Default: a temporary directory, deleted. */
    public Builder dir(Path d) {
      this.dir = Objects.requireNonNull(d, "dir");
      return this;
    }

    /** What every pod's builder gets first, typically its entity types. Default: nothing. */
    public Builder podTemplate(UnaryOperator<Sharding.Builder> t) {
      this.template = Objects.requireNonNull(t, "template");
      return this;
    }

    /**
     * Starts the manager on an ephemeral port.
     *
     * @throws UncheckedIOException if the temporary directory cannot be made
     */
    public LocalCluster start() {
      Path d = dir;
      boolean owns = d == null;
      try {
        if (owns) {
          d = Files.createTempDirectory("atoll-cluster");
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot create a directory for the cluster", e);
      }
      LocalCluster c = new LocalCluster(this, d, owns);
      try {
        c.startManager(0);
      } catch (RuntimeException e) {
        c.close();
        throw e;
      }
      return c;
    }
  }
}

package io.atoll.server;

import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.LeadershipTakenException;
import io.atoll.core.spi.StoreException;
import io.atoll.core.spi.PodHealth;
import io.atoll.core.Spaces;
import io.atoll.core.Ticker;
import io.atoll.manager.ManagerSecurity;
import io.atoll.manager.ManagerSettings;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.atoll.manager.ManagerObserver;
import io.atoll.manager.ShardManager;
import io.atoll.manager.StandbyServer;
import io.atoll.manager.metrics.ManagerMetrics;
import io.atoll.server.http.BothObservers;
import io.atoll.server.http.Dashboard;
import io.atoll.server.http.HttpEndpoint;
import io.atoll.server.http.Probes;
import io.atoll.server.http.StandbyStatus;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code atoll manager}: runs the shard manager until stopped. */
@Command(name = "manager", mixinStandardHelpOptions = true,
    description = "Runs the shard manager, with its state in a data directory, etcd or Redis.")
final class ManagerCommand implements Callable<Integer> {

  /** Allocation strategies by name. */
  enum Strategy { VERSION_AWARE, LEAST_SHARD }

  @Mixin
  Main.ConfigOption config;

  @Mixin
  TlsOptions tls;

  @Option(names = "--signing-key", description = "The manager's Ed25519 key (PEM, atoll certs writes signing.key): it"
      + " signs every config and hand-off and issues pod credentials. Managers that may take over from each other"
      + " share it; without it the first manager makes the cluster's key and keeps it in the store, where the others find"
      + " it (whoever can read the store can then sign for the cluster).")
  Path signingKey;

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--advertise", description = "The address pods and other managers reach this manager at: the store"
      + " names the leader by it, and standbys send pods there (default: --host, which must then not be a wildcard"
      + " such as 0.0.0.0).")
  String advertise;

  @Option(names = "--port", defaultValue = "7070", description = "Port to listen on, 0 for any (default: ${DEFAULT-VALUE}).")
  int port;

  // Absolute by default: a relative default would put the cluster's state wherever the manager
  // happened to be started, and a restart from another directory would start an empty cluster.
  @Option(names = "--data-dir", defaultValue = "${sys:user.home}/.atoll/manager",
      description = "Where the state lives; a relative path is taken from the current directory"
          + " (default: ${DEFAULT-VALUE}).")
  Path dataDir;

  @Option(names = "--store", defaultValue = "file", description = "Where the state lives: file (the data directory),"
      + " file:<dir>, etcd://host:port[,host:port][/prefix], redis://[user:password@]host:port[/db];"
      + " etcds:// and rediss:// for TLS (default: ${DEFAULT-VALUE}).")
  String store;

  // On by default: a leader grants pod leases only while its store lease is surely live, so a
  // standby that takes the lapsed lease can never give a shard to a second pod (docs/architecture.md,
  // "Safety: assumptions and guarantees").
  @Option(names = "--standby", defaultValue = "true", negatable = true, fallbackValue = "true",
      description = "While another manager leads the store, listen as a standby (pods asking it are told where"
      + " the leader is) and take over when its lease lapses; a deposed leader stands by again."
      + " --no-standby: the start fails instead, and a deposed leader exits (default: ${DEFAULT-VALUE}).")
  boolean standby;

  /** The number of shards without --shards or --spaces. */
  static final int DEFAULT_SHARDS = 300;

  @Option(names = "--shards", description = "Number of shards; fixed for a data directory (default: "
      + DEFAULT_SHARDS + ", or the sum of --spaces).")
  Integer shards;

  @Option(names = "--spaces", paramLabel = "ROLE=COUNT[,ROLE=COUNT...]", description = "Lay the shards out in spaces,"
      + " one per role, in this order, e.g. default=300,worker=100: a space's shards go only to pods hosting its role"
      + " (atoll pod --role). The shard count is the sum. Fixed for a data directory except that spaces only"
      + " grow: appended at run time (--new-space-shards) or here, after the stored ones; a restart with the"
      + " first --spaces keeps the grown layout (default: one default space of --shards).")
  String spaces;

  @Option(names = "--new-space-shards", paramLabel = "N", defaultValue = "100", description = "When a pod registers"
      + " with a role that has no space, append one of N shards for it, saved in the data directory; 0 appends"
      + " none (such a pod gets no shards of that role) (default: ${DEFAULT-VALUE}).")
  int newSpaceShards;

  @Option(names = "--replicas", paramLabel = "N", defaultValue = "0", description = "Atoll KV: keep N replicas of each"
      + " node's slots. KV nodes that join become replicas of the nodes that lack them; when a node's lease runs out,"
      + " its replica takes its slots with every write the node acknowledged (0..5, default: ${DEFAULT-VALUE}).")
  int replicas;

  @Option(names = "--lease", defaultValue = "10s", description = "Pod lease length (default: ${DEFAULT-VALUE}).")
  Duration lease;

  @Option(names = "--store-lease", description = "The leadership lease in the store: how soon a standby takes over"
      + " after a crash, and how long a leader cut off from its store still grants pod leases; store-lease +"
      + " lease must be at most 49 x lease-margin (default: as long as --lease).")
  Duration storeLease;

  @Option(names = "--lease-margin", defaultValue = "2s", description = "Wait after a lease runs out before moving its shards (default: ${DEFAULT-VALUE}).")
  Duration leaseMargin;

  @Option(names = "--ping-timeout", defaultValue = "3s", description = "Default: ${DEFAULT-VALUE}.")
  Duration pingTimeout;

  @Option(names = "--termination-timeout", defaultValue = "3s", description = "How long a pod may take to stop a shard's entities (default: ${DEFAULT-VALUE}).")
  Duration terminationTimeout;

  @Option(names = "--rebalance-interval", defaultValue = "20s", description = "Periodic rebalance (default: ${DEFAULT-VALUE}).")
  Duration rebalanceInterval;

  @Option(names = "--rebalance-retry", defaultValue = "10s", description = "Retry after a failed rebalance (default: ${DEFAULT-VALUE}).")
  Duration rebalanceRetry;

  @Option(names = "--strategy", defaultValue = "version-aware", converter = StrategyConverter.class,
      description = "version-aware or least-shard (default: ${DEFAULT-VALUE}).")
  Strategy strategy;

  @Option(names = "--max-moves", defaultValue = "20", description = "Most owned shards one round moves (default: ${DEFAULT-VALUE}).")
  int maxMoves;

  @Option(names = "--max-moves-fraction", defaultValue = "0.1", description = "Most owned shards one round moves, as a fraction (default: ${DEFAULT-VALUE}).")
  double maxMovesFraction;

  @Option(names = "--space-settings", paramLabel = "ROLE:KEY=VALUE[,KEY=VALUE...]", split = ";",
      description = "A shard space's own allocation settings, with the names of the global flags: max-moves,"
      + " max-moves-fraction and strategy, e.g. worker:max-moves=1,strategy=least-shard (default for the default"
      + " space). Repeatable, or ; between spaces. What a space does not set comes from --max-moves,"
      + " --max-moves-fraction and --strategy; a role without a space yet gets its settings when one is appended"
      + " (default: every space with the global ones).")
  java.util.List<String> spaceSettings;

  @Option(names = "--http-port", defaultValue = "-1", description = "Serve /metrics, /health/live, /health/ready and /cluster and the dashboard (at /) over HTTP on this port; 0 for any, -1 for none (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--http-host", defaultValue = "127.0.0.1", description = "Address the HTTP endpoint listens on (default: ${DEFAULT-VALUE}).")
  String httpHost;

  static final class StrategyConverter implements picocli.CommandLine.ITypeConverter<Strategy> {
    @Override
    public Strategy convert(String value) {
      return switch (value.toLowerCase(java.util.Locale.ROOT)) {
        case "version-aware" -> Strategy.VERSION_AWARE;
        case "least-shard" -> Strategy.LEAST_SHARD;
        default -> throw new picocli.CommandLine.TypeConversionException("'" + value
            + "' is not a strategy (expected: version-aware or least-shard)");
      };
    }
  }

  /**
   * The layout --shards and --spaces ask for: null for one default space of {@code shards()}.
   *
   * @throws IllegalArgumentException if --spaces is malformed or its sum is not --shards
   */
  Spaces layout() {
    if (spaces == null) {
      return null;
    }
    Spaces s;
    try {
      s = Spaces.parse(spaces);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--spaces " + e.getMessage(), e);
    }
    if (shards != null && shards != s.size()) {
      throw new IllegalArgumentException("--spaces " + s + " hold " + s.size() + " shards but --shards is " + shards
          + " (expected: --shards " + s.size() + ", or no --shards)");
    }
    return s;
  }

  /**
   * The manager's settings from the options.
   *
   * @throws IllegalArgumentException naming the option that is wrong and the expected form
   */
  ManagerSettings settings() {
    Spaces layout = layout();
    int count = layout != null ? layout.size() : shards != null ? shards : DEFAULT_SHARDS;
    ManagerSettings settings = new ManagerSettings(count, lease, leaseMargin, pingTimeout, terminationTimeout,
        rebalanceInterval, rebalanceRetry, new RebalanceLimits(maxMoves, maxMovesFraction),
        strategy == Strategy.LEAST_SHARD ? AllocationStrategy.leastShard() : AllocationStrategy.versionAware(),
        storeLease == null ? lease : storeLease);
    if (layout != null) {
      settings = settings.withSpaces(layout);
    }
    settings = settings.withNewSpaceShards(newSpaceShards).withKvReplicas(replicas);
    if (spaceSettings != null && !spaceSettings.isEmpty()) {
      settings = settings.withSpaceSettings(SpaceSettingsOption.parse(spaceSettings));
    }
    return settings;
  }

  @Override
  public Integer call() throws Exception {
    ManagerSettings settings;
    try {
      settings = settings();
    } catch (IllegalArgumentException e) {
      System.err.println("atoll manager: " + e.getMessage());
      return 2;
    }
    StoreSpec storeSpec;
    try {
      storeSpec = StoreSpec.parse(store, dataDir.toAbsolutePath());
    } catch (IllegalArgumentException e) {
      System.err.println("atoll manager: " + e.getMessage());
      return 2;
    }
    ManagerSecurity security;
    try {
      WireSecurity wire = tls.security(Role.MANAGER);
      tls.checkBind("--host", host, wire.isTls());
      if (httpPort >= 0) {
        tls.checkBind("--http-host", httpHost, false);
      }
      security = signingKey != null ? new ManagerSecurity(wire, ConfigSigner.load(signingKey))
          : ManagerSecurity.keyInStore(wire);
    } catch (IllegalArgumentException e) {
      System.err.println("atoll manager: " + e.getMessage());
      return 2;
    }
    // Security first: a plaintext bind to every address is the graver mistake.
    String advertised = advertise != null ? advertise : host;
    if (ShardManager.isWildcard(advertised)) {
      System.err.println("atoll manager: " + (advertise != null ? "--advertise " + advertise + " is every address"
          : "--host " + host + " listens on every address") + "; the store names the leader by the address pods and"
          + " other managers reach it at (expected: --advertise HOST, e.g. this machine's name or IP)");
      return 2;
    }
    PrometheusMeterRegistry registry = Probes.registry();
    Dashboard dashboard = httpPort >= 0 ? new Dashboard() : null;
    ManagerObserver observer = dashboard != null
        ? new BothObservers(new ManagerMetrics(registry), dashboard.observer()) : ManagerObserver.NONE;
    AtomicReference<ShardManager> running = new AtomicReference<>();
    AtomicReference<HttpEndpoint> httpRunning = new AtomicReference<>();
    AtomicBoolean stopping = new AtomicBoolean();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stopping.set(true);
      HttpEndpoint h = httpRunning.get();
      if (h != null) {
        h.close();
      }
      if (dashboard != null) {
        dashboard.close();
      }
      ShardManager m = running.get();
      if (m != null) {
        m.close();
      }
    }, "atoll-manager-stop"));
    StandbyStatus standbyStatus = new StandbyStatus();
    if (dashboard != null) {
      try {
        // Up from the start, a standby's too: it says who leads. The routes ask for the manager
        // leading now: none while standing by, after a deposition and a new term the new one.
        httpRunning.set(HttpEndpoint.start(httpHost, httpPort,
            dashboard.routes(Probes.manager(running::get, standbyStatus, registry), running::get, standbyStatus)));
      } catch (RuntimeException e) {
        System.err.println("atoll manager: cannot start: " + e.getMessage());
        dashboard.close();
        return 1;
      }
      System.out.println("atoll manager http on " + httpRunning.get().address() + " (dashboard http://"
          + httpRunning.get().address() + "/)");
      System.out.flush();
    }
    int listenPort = port;
    while (!stopping.get()) {
      ShardManager manager;
      if (standby) {
        StandbyWait waited;
        try {
          waited = standBy(storeSpec, settings, listenPort, stopping, security.wire(), standbyStatus);
        } catch (RuntimeException e) {
          System.err.println("atoll manager: cannot start: " + e.getMessage());
          closeHttp(httpRunning.get(), dashboard);
          return 1;
        }
        if (waited == null) {
          return 0;
        }
        listenPort = waited.port();
      }
      try {
        manager = ShardManager.start(settings, storeSpec.open(), PodHealth.LEASE_ONLY, host, listenPort, advertised,
            Ticker.SYSTEM, new java.security.SecureRandom(), observer, security);
      } catch (LeadershipTakenException e) {
        if (!standby) {
          System.err.println("atoll manager: cannot start: " + e.getMessage());
          closeHttp(httpRunning.get(), dashboard);
          return 1;
        }
        continue; // another standby was faster: stand by again
      } catch (RuntimeException e) {
        System.err.println("atoll manager: cannot start: " + e.getMessage());
        closeHttp(httpRunning.get(), dashboard);
        return 1;
      }
      running.set(manager);
      System.out.println("atoll manager listening on " + manager.address() + " (term " + manager.term() + ", "
          + settings.numberOfShards() + " shards" + (settings.spaces().isSingle() ? "" : " in spaces "
          + settings.spaces()) + ", " + storeSpec.describe() + ")");
      if (spaceSettings != null && !spaceSettings.isEmpty()) {
        System.out.println("atoll manager space settings: " + String.join("; ", spaceSettings));
      }
      System.out.println("atoll manager security: " + security.wire() + (signingKey != null ? ", signing key "
          + signingKey : ", the cluster's signing key kept in the store"));
      System.out.flush();
      try {
        manager.stopped().get();
        return 0;
      } catch (ExecutionException e) {
        System.err.println("atoll manager: stopped: " + e.getCause().getMessage());
        if (!standby || stopping.get()) {
          return 3;
        }
        // A deposed manager releases its server off the loop; wait for it before binding the port again.
        running.set(null);
        manager.close();
        System.out.println("atoll manager: deposed; standing by again");
        System.out.flush();
        listenPort = manager.address().port();
      }
    }
    return 0;
  }

  private static void closeHttp(HttpEndpoint http, Dashboard dashboard) {
    if (http != null) {
      http.close();
    }
    if (dashboard != null) {
      dashboard.close();
    }
  }

  /** Where a standby listened, once no other manager leads. */
  private record StandbyWait(int port) {}

  /**
   * Listens as a standby on {@code port} (answering pods with the leader's address) until the
   * store's leader watch tells that no manager leads, then frees the port for the manager. Null if
   * stopped meanwhile. What the watch tells goes to {@code status} too (the HTTP endpoint's).
   */
  private StandbyWait standBy(StoreSpec storeSpec, ManagerSettings settings, int port, AtomicBoolean stopping,
      WireSecurity wire, StandbyStatus status) throws InterruptedException {
    boolean told = false;
    status.reset();
    java.util.concurrent.Semaphore changed = new java.util.concurrent.Semaphore(0);
    AssignmentStore.LeaderListener listener = new AssignmentStore.LeaderListener() {
      @Override
      public void leader(Optional<AssignmentStore.Leader> leader) {
        status.leader(leader);
        changed.release();
      }

      @Override
      public void unreachable(StoreException e) {
        status.unreachable(e);
        changed.release();
      }
    };
    // The watch reads the leader every tenth of the store lease at most; stores that are told of a
    // lapse (etcd, Redis, the file store) tell it at once.
    Duration poll = Duration.ofMillis(Math.max(50, settings.storeLease().toMillis() / 10));
    try (AssignmentStore watching = storeSpec.open();
        StandbyServer server = StandbyServer.start(host, port, status::leader, wire);
        AssignmentStore.Watch watch = watching.watchLeader(poll, listener)) {
      while (!stopping.get()) {
        // Bounded so that a stop is seen; the watch's calls release the permit.
        if (!changed.tryAcquire(250, java.util.concurrent.TimeUnit.MILLISECONDS)) {
          continue;
        }
        changed.drainPermits();
        if (status.noLeader()) {
          return new StandbyWait(server.address().port());
        }
        if (!told) {
          Optional<AssignmentStore.Leader> leader = status.leader();
          System.out.println("atoll manager standing by on " + server.address() + ": " + (leader.isPresent()
              ? new LeadershipTakenException(watching.toString(), leader).getMessage()
              : watching + ": " + status.describe()));
          System.out.flush();
          told = true;
        }
      }
    }
    return null;
  }
}

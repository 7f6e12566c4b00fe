package io.atoll.runtime;

import io.atoll.core.ClusterConfig;
import io.atoll.core.EntityAddress;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.core.ShardHasher;
import io.atoll.core.Ticker;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A pod: this process's part of an Atoll cluster. It hosts the entity types registered on it,
 * serves the shards the shard manager gives it, and sends messages to any entity in the cluster.
 *
 * <pre>{@code
 * try (Sharding pod = Sharding.builder()
 *         .manager("127.0.0.1:7070")
 *         .register(COUNTER, ctx -> new Counter())
 *         .start()) {
 *   EntityRef<CounterMsg> c = pod.entity(COUNTER, "user-42");
 *   c.tell(new Add(5));
 *   long v = c.ask(Get::new).toCompletableFuture().join();
 * }
 * }</pre>
 *
 * <p>{@link Builder#start()} returns once the pod has joined: it knows the cluster's config, listens
 * for other pods, and holds a lease. {@link #close()} is a graceful stop: the pod stops its entities
 * (each gets its type's termination message), leaves the cluster so that its shards move, waits
 * for its own messages in flight, and closes. Thread-safe.
 *
 * <p><b>Why some 400 lines.</b> This is the API's one entry point: the facade's methods and the
 * {@link Builder} with every option of a pod, each documented and validated where the user sets it
 * (a bad value fails at the builder call, naming the option and the expected form). No logic of
 * the pod lives here: {@link Builder#start()} hands the validated {@link PodSettings} to the pod
 * behind this package ({@link PodProvider}), and every other method asks that pod.
 */
public final class Sharding implements AutoCloseable {

  private final PodProvider.Pod rt;

  private Sharding(PodProvider.Pod rt) {
    this.rt = rt;
  }

  /** A builder with the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A handle to the entity {@code type/entityId}. The type need not be hosted by this pod, but
   * every pod that sends to a type must use the same message class for it.
   *
   * @throws IllegalArgumentException if the id is empty or longer than 1024 characters
   */
  public <M> EntityRef<M> entity(EntityType<M> type, String entityId) {
    new EntityAddress(type.name(), entityId); // validates the id
    return rt.entity(type, entityId);
  }

  /** This pod's identity (address and incarnation). */
  public PodId podId() {
    return rt.self();
  }

  /** This pod's current view of the cluster: pods and shard owners, read-only. */
  public ClusterView view() {
    return new ClusterView(rt.view());
  }

  /**
   * This pod's current view as the manager's full model, for tools that need claims and slot
   * states. It is core's immutable {@link ClusterConfig}: building a changed copy changes nothing
   * in the cluster. Prefer {@link #view()}, which is this module's API and will stay stable;
   * this accessor may move to a tools API.
   */
  public ClusterConfig config() {
    return rt.view();
  }

  /** The shards this pod serves now. */
  public List<Integer> servedShards() {
    return rt.servedShards();
  }

  /** The number of live entity activations on this pod. */
  public int activeEntities() {
    return rt.activeEntities();
  }

  /** The number of this pod's messages in flight (sent and not yet answered or failed). */
  public int inFlight() {
    return rt.inFlight();
  }

  /** The number of this pod's messages waiting in its shards' buffers for an owner. */
  public int bufferedMessages() {
    return rt.bufferedMessages();
  }

  /** The number of shards of the cluster, as this pod sees it now: it grows when spaces are appended. */
  public int numberOfShards() {
    return rt.numberOfShards();
  }

  /** Whether this pod holds a live lease (a client always does). */
  public boolean holdsLease() {
    return rt.holdsLease();
  }

  /** Stops gracefully (see the class comment). Idempotent. */
  @Override
  public void close() {
    rt.close();
  }

  /** Builds and starts a pod. Not thread-safe; use from one thread. */
  public static final class Builder {
    private List<PodAddress> managers = List.of(new PodAddress("127.0.0.1", 7070));
    private String host = "127.0.0.1";
    private int port;
    private PodVersion version = PodVersion.of("0");
    private Duration askTimeout = Duration.ofSeconds(10);
    private Duration sendTimeout = Duration.ofSeconds(10);
    private int bufferSize = 10_000;
    private int maxInFlight = 200_000;
    private int maxMessageBytes = 1 << 20;
    private Duration terminationTimeout = Duration.ofSeconds(3);
    private Duration gossipInterval = Duration.ofSeconds(1);
    private Duration startTimeout = Duration.ofSeconds(30);
    private boolean clientOnly;
    private boolean keepServingWhileManagerDown = true;
    private ShardHasher hasher = ShardHasher.DEFAULT;
    private Ticker ticker = Ticker.SYSTEM;
    private ShardingObserver observer = ShardingObserver.NONE;
    private PodAddress advertise;
    private int maxQueued = 10_000;
    private Duration maxQueueTime = PodSettings.DEFAULT_MAX_QUEUE_TIME;
    private WireSecurity security = WireSecurity.PLAINTEXT;
    private final Map<EntityType<?>, EntityFactory<?>> types = new LinkedHashMap<>();
    private final java.util.TreeSet<String> roles = new java.util.TreeSet<>();

    private Builder() {}

    /**
     * Where the shard managers listen, as {@code host:port}, or several separated by commas
     * ({@code a:7070,b:7070}): the leader and its standbys. The pod talks to one at a time and
     * follows the leader (a standby names it). Give every manager's address: a pod rides out a
     * manager outage only while every address refuses connections. Default {@code 127.0.0.1:7070}.
     *
     * @throws IllegalArgumentException naming a malformed address
     */
    public Builder manager(String hostPorts) {
      Objects.requireNonNull(hostPorts, "hostPorts");
      List<PodAddress> list = new java.util.ArrayList<>();
      for (String part : hostPorts.split(",", -1)) {
        list.add(PodAddress.parse(part.strip()));
      }
      return managers(list);
    }

    /** Where the shard manager listens. */
    public Builder manager(PodAddress address) {
      return managers(List.of(Objects.requireNonNull(address, "address")));
    }

    /** Where the shard managers listen (see {@link #manager(String)}); at least one, at most 16. */
    public Builder managers(List<PodAddress> addresses) {
      Objects.requireNonNull(addresses, "addresses");
      if (addresses.isEmpty() || addresses.size() > 16) {
        throw new IllegalArgumentException("managers: " + addresses.size() + " addresses (expected: 1..16)");
      }
      addresses.forEach(a -> Objects.requireNonNull(a, "address"));
      this.managers = List.copyOf(addresses);
      return this;
    }

    /** The address this pod listens on and announces to others. Default {@code 127.0.0.1}. */
    public Builder host(String h) {
      if (h == null || h.isBlank()) {
        throw new IllegalArgumentException("host: blank (expected: a host name or IP address)");
      }
      this.host = h;
      return this;
    }

    /** The port this pod listens on; 0 (the default) picks a free one. */
    public Builder port(int p) {
      if (p < 0 || p > 65535) {
        throw new IllegalArgumentException("port: " + p + " (expected: 0..65535)");
      }
      this.port = p;
      return this;
    }

    /**
     * The address announced to the manager and the other pods when it is not where this pod listens:
     * behind a proxy or NAT, or a fault-injecting relay in tests. Default: {@link #host} and the
     * bound port.
     */
    public Builder advertise(PodAddress address) {
      this.advertise = Objects.requireNonNull(address, "address");
      return this;
    }

    /** The version of this pod's code, for version-aware rebalancing. Default "0". */
    public Builder version(String v) {
      this.version = PodVersion.of(v);
      return this;
    }

    /**
     * Hosts the shard space of {@code role}: the manager may give this pod shards of the entity
     * types {@link EntityType#onRole on that role}. A pod hosts the roles named here and those of
     * the types it registers; a pod that names none and registers only types of the default role
     * (or none) hosts the default role, as every pod of a cluster without roles. Give the empty
     * name for the default role beside others.
     *
     * @throws IllegalArgumentException if the role is not 1..64 of {@code [A-Za-z0-9._-]} or empty
     */
    public Builder role(String role) {
      roles.add(io.atoll.core.Space.checkRole(role));
      return this;
    }

    /** Hosts entities of {@code type}, created by {@code factory}. */
    public <M> Builder register(EntityType<M> type, EntityFactory<M> factory) {
      Objects.requireNonNull(type, "type");
      Objects.requireNonNull(factory, "factory");
      for (EntityType<?> t : types.keySet()) {
        if (t.name().equals(type.name())) {
          throw new IllegalArgumentException("entity type '" + type.name() + "' registered twice");
        }
      }
      types.put(type, factory);
      return this;
    }

    /** The default timeout of an ask. Default 10 s. */
    public Builder askTimeout(Duration d) {
      this.askTimeout = positive("ask timeout", d);
      return this;
    }

    /** The timeout of a tell, including time waiting for a shard's owner. Default 10 s. */
    public Builder sendTimeout(Duration d) {
      this.sendTimeout = positive("send timeout", d);
      return this;
    }

    /** Most messages waiting per shard while its owner is unknown or moving. Default 10,000. */
    public Builder bufferSize(int n) {
      this.bufferSize = atLeast("buffer size", n, 1);
      return this;
    }

    /**
     * Most messages waiting in this pod's mailboxes for their entities, from this pod and others.
     * Beyond it a message is refused at once with {@link DeliveryException.Reason#OVERLOADED}
     * instead of waiting until its sender times out: back-pressure. Set it to about what the pod's
     * entities handle in a few seconds. Default 10,000.
     */
    public Builder maxQueued(int n) {
      this.maxQueued = atLeast("max queued", n, 1);
      return this;
    }

    /**
     * Longest a message may be expected to wait in this pod for its entity: one that would wait
     * longer (the messages ahead of it in its entity's mailbox times the type's recent handler time,
     * plus the pod's standing queue delay) is refused at once with
     * {@link DeliveryException.Reason#OVERLOADED}, unhandled, with {@link DeliveryException#retryAfter()}
     * the expected wait. Whatever this says, a message expected to miss its sender's deadline is
     * refused too, on arrival or when its turn comes. {@link Duration#ZERO} bounds the wait by the
     * deadlines only. Default 1 s.
     */
    public Builder maxQueueTime(Duration d) {
      if (d == null || d.isNegative()) {
        throw new IllegalArgumentException("max queue time: " + d + " (expected: >= 0)");
      }
      this.maxQueueTime = d;
      return this;
    }

    /** Most messages of this pod in flight at once. Default 200,000. */
    public Builder maxInFlight(int n) {
      this.maxInFlight = atLeast("max in flight", n, 16);
      return this;
    }

    /** Largest encoded message accepted or sent. Default 1 MiB. */
    public Builder maxMessageBytes(int n) {
      this.maxMessageBytes = atLeast("max message bytes", n, 64);
      if (n > 16 << 20) {
        throw new IllegalArgumentException("max message bytes: " + n + " (expected: <= " + (16 << 20) + ")");
      }
      return this;
    }

    /** How long a graceful stop waits for entities to stop. Default 3 s. */
    public Builder terminationTimeout(Duration d) {
      this.terminationTimeout = positive("termination timeout", d);
      return this;
    }

    /** How often the pod exchanges its config with a random peer. Default 1 s. */
    public Builder gossipInterval(Duration d) {
      this.gossipInterval = positive("gossip interval", d);
      return this;
    }

    /** How long {@link #start()} waits for the manager. Default 30 s. */
    public Builder startTimeout(Duration d) {
      this.startTimeout = positive("start timeout", d);
      return this;
    }

    /** Makes this a client: it sends to entities but hosts none and does not join as a pod. */
    public Builder clientOnly() {
      this.clientOnly = true;
      return this;
    }

    /**
     * Whether this pod keeps serving the shards it holds while the shard manager is down (default
     * true). "Down" means a fresh connection to the manager's address is refused and no peer this
     * pod can reach has renewed its lease since this pod's renewals began to fail; a restarted
     * manager waits a full lease before moving anything, so this is safe as long as the manager
     * address refuses connections only when no manager runs there. If a firewall or proxy may
     * answer "refused" for a manager that is in fact running (for others), turn this off: the pod
     * then fences itself when its lease runs out, whatever the reason.
     */
    public Builder keepServingWhileManagerDown(boolean on) {
      this.keepServingWhileManagerDown = on;
      return this;
    }

    /** The entity id to shard mapping; every pod must use the same. Default {@link ShardHasher#DEFAULT}. */
    public Builder hasher(ShardHasher h) {
      this.hasher = Objects.requireNonNull(h, "hasher");
      return this;
    }

    /** The clock, for tests. */
    public Builder ticker(Ticker t) {
      this.ticker = Objects.requireNonNull(t, "ticker");
      return this;
    }

    /**
     * Mutual TLS on every connection of this pod, with the cluster's CA certificate and this pod's
     * certificate and key (PEM files, as {@code atoll certs} writes them; reloaded when they
     * change). The certificate must hold the pod role ({@code atoll:pod:NAME}). Default: plaintext.
     *
     * @throws IllegalArgumentException if a file cannot be read or they do not fit together
     */
    public Builder tls(Path ca, Path cert, Path key) {
      WireSecurity s = WireSecurity.tls(ca, cert, key);
      if (s.self().role() != Role.POD) {
        throw new IllegalArgumentException(cert + " holds " + s.self() + " (expected: a pod certificate, atoll:pod:NAME)");
      }
      this.security = s;
      return this;
    }

    /** The transport security this pod uses (see {@link #tls}); for tests that watch refusals. */
    public Builder security(WireSecurity s) {
      this.security = Objects.requireNonNull(s, "security");
      return this;
    }

    /** Hears shard and entity events. */
    public Builder observer(ShardingObserver o) {
      this.observer = Objects.requireNonNull(o, "observer");
      return this;
    }

    /** The roles this pod hosts: those named, and those of its types; the default role if none. */
    private List<String> hostedRoles() {
      java.util.TreeSet<String> all = new java.util.TreeSet<>(roles);
      types.keySet().forEach(t -> all.add(t.role()));
      return all.isEmpty() ? io.atoll.core.Pod.DEFAULT_ROLES : List.copyOf(all);
    }

    /**
     * Starts the pod and returns once it has joined.
     *
     * @throws IllegalStateException if the manager cannot be reached within the start timeout, or
     *     a client has types registered
     * @throws java.io.UncheckedIOException if the port cannot be bound
     */

    public Sharding start() {
      if (clientOnly && !types.isEmpty()) {
        throw new IllegalStateException("a client hosts no entity types (expected: no register() calls with clientOnly())");
      }
      PodSettings s = new PodSettings(managers.get(0), host, port, version, askTimeout, sendTimeout, bufferSize,
          maxInFlight, maxMessageBytes, terminationTimeout, gossipInterval, startTimeout, clientOnly,
          keepServingWhileManagerDown, hasher, ticker, observer, maxQueued, maxQueueTime, advertise, managers,
          security, hostedRoles());
      PodProvider.Pod rt = PodProviders.get().create(s, types);
      Sharding sharding = new Sharding(rt);
      try {
        rt.start(sharding);
      } catch (RuntimeException e) {
        rt.close();
        throw e;
      }
      return sharding;
    }

    private static Duration positive(String name, Duration d) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
      }
      return d;
    }

    private static int atLeast(String name, int n, int min) {
      if (n < min) {
        throw new IllegalArgumentException(name + ": " + n + " (expected: >= " + min + ")");
      }
      return n;
    }
  }
}

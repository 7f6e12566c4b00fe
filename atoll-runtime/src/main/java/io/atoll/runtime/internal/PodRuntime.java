package io.atoll.runtime.internal;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.PodProvider;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.internal.cluster.Gossip;
import io.atoll.runtime.internal.cluster.Lease;
import io.atoll.runtime.internal.cluster.ManagerAddresses;
import io.atoll.runtime.internal.cluster.ManagerLink;
import io.atoll.runtime.internal.cluster.SignedConfigs;
import io.atoll.runtime.internal.cluster.StartConfig;
import io.atoll.runtime.internal.cluster.View;
import io.atoll.runtime.internal.host.EntityHost;
import io.atoll.runtime.internal.host.TypeRuntime;
import io.atoll.runtime.internal.send.Router;
import io.atoll.runtime.internal.util.GuardedBy;
import io.atoll.runtime.internal.util.GuardedObserver;
import io.atoll.runtime.internal.util.PodContext;
import io.atoll.runtime.PodSettings;
import io.atoll.runtime.internal.util.PodTimer;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.security.Role;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pod, assembled from its rooms: the {@code cluster} room (view, lease, gossip, manager
 * link), the {@code host} room (the shards and entities this pod serves), and the {@code send}
 * room (the router, shard routes and clients of other pods). {@link Sharding} is its public face.
 *
 * <p>This class only builds the rooms, connects each room's callback to the room that must act on
 * it, and runs start, the timer's chores and close. No room holds a pointer to it. The one
 * decision taken here is a new incarnation ({@link #rejoin}), because it touches three rooms at
 * once under the view's guard. Made by {@link PodRuntimeProvider}.
 *
 * <p><b>Why some 420 lines.</b> It is the pod's wiring diagram: the order the rooms are built and
 * started in, the order they are closed in (which matters: new sends fail before entities stop,
 * the manager hears of the stop before in-flight messages drain, the server stops before the
 * clients), the timer's three chores, and the four small callback classes that are the only
 * connections between rooms. Moving the callbacks out would need each to get the rooms it
 * connects handed in after they are built (they are built from one another), and would spread the
 * one picture of who tells whom over five files; the facade's accessors at the end are one line
 * each.
 */
final class PodRuntime implements PodProvider.Pod {

  private static final Logger log = LoggerFactory.getLogger(PodRuntime.class);
  private static final long CHORE_MILLIS = 20;
  /** Chores run so far (the timer's thread only). */
  private long chores;
  private static final long PASSIVATION_MILLIS = 1000;

  private final PodSettings settings;
  private final PodTimer timer = new PodTimer("atoll-pod-timer");
  private final PodContext ctx;
  private final TypeRuntime[] hosted;
  private final SecureRandom random = new SecureRandom();
  private final SignedConfigs configs = new SignedConfigs();

  private View view;
  private Lease lease;
  private EntityHost host;
  private Router router;
  private Gossip gossip;
  private ManagerAddresses managerChannel;
  private ManagerLink manager;
  /** The pod's own gRPC service (null for a client): where an Unassign that came in a renewal goes. */
  private volatile PodService service;
  private Server server;
  private volatile boolean closing;
  private volatile boolean closed;
  private final Rejoin rejoins = new Rejoin();

  /**
   * Creates a pod that hosts {@code hostedTypes} (none for a client). The settings' observer is
   * guarded: whatever it throws goes no further than a log line.
   */
  PodRuntime(PodSettings settings, Map<EntityType<?>, EntityFactory<?>> hostedTypes) {
    settings = settings.withObserver(GuardedObserver.of(settings.observer()));
    this.settings = settings;
    this.ctx = new PodContext(settings, settings.ticker(), timer);
    List<TypeRuntime> list = new ArrayList<>();
    for (Map.Entry<EntityType<?>, EntityFactory<?>> e : hostedTypes.entrySet()) {
      @SuppressWarnings("unchecked")
      EntityFactory<Object> f = (EntityFactory<Object>) e.getValue();
      list.add(new TypeRuntime(e.getKey(), TypeCodecs.forType(e.getKey()), f, list.size()));
    }
    this.hosted = list.toArray(new TypeRuntime[0]);
  }

  // ------------------------------------------------------------------------------------------
  // Start and stop

  /** Starts the pod: learns the cluster, listens, registers, and begins renewing its lease. */
  @Override
  public void start(Sharding facade) {
    managerChannel = new ManagerAddresses(settings.managers(),
        a -> Wire.channel(a, settings.security(), Role.MANAGER), ctx.ticker());
    ClusterConfig first = StartConfig.fetch(managerChannel, ctx.ticker(), settings.startTimeout(), configs);
    view = new View(first, null, new ViewEvents());
    lease = new Lease(ctx.ticker(), settings.clientOnly(), view.guard(), view::self, new LeaseEvents());
    if (!settings.clientOnly()) {
      host = new EntityHost(ctx, view, lease, hosted, facade, new HostEvents());
    }
    router = new Router(ctx, view, host, hosted, TypeCodecs::forType, new RouterEvents());
    gossip = new Gossip(ctx.ticker(), view, router.channels(), random, configs);
    // Each hosted type's role and hasher (its own, else the pod's), which the manager holds
    // against the live pods' declarations of the type.
    Map<String, io.atoll.core.TypeDeclaration> types = new java.util.TreeMap<>();
    // Most types share one hasher object. Keyed by identity, not equals: a hasher whose equals
    // ignored its parameters would hand one type another type's fingerprint, and a pod with another
    // hasher for that type would then be admitted. The cache only saves start-up work.
    Map<io.atoll.core.ShardHasher, Long> prints = new java.util.IdentityHashMap<>();
    for (TypeRuntime t : hosted) {
      io.atoll.core.ShardHasher h = t.hasher(settings.hasher());
      types.put(t.name, new io.atoll.core.TypeDeclaration(t.role,
          prints.computeIfAbsent(h, x -> fingerprint(t.name, x)), io.atoll.core.HasherFingerprint.nameOf(h)));
    }
    manager = new ManagerLink(ctx, managerChannel, view, lease, router.channels(), new ManagerLink.Callback() {
      @Override
      public void unknownToManager(String why) {
        rejoin(why);
      }

      @Override
      public void relayedUnassign(io.atoll.transport.grpc.proto.UnassignRequest request,
          io.grpc.stub.StreamObserver<io.atoll.transport.grpc.proto.UnassignResponse> out) {
        PodService s = service;
        if (s == null) {
          out.onError(io.grpc.Status.UNAVAILABLE.withDescription("not serving").asRuntimeException());
        } else {
          s.unassign(request, out);
        }
      }
    }, configs, types);
    PodAddress address;
    if (settings.clientOnly()) {
      address = new PodAddress(settings.host(), 1);
    } else {
      // The view is in place before the server starts: requests may arrive at once.
      service = new PodService(ctx, view, lease, host, manager, () -> closing, configs,
          new StateCarrier(router.channels(), view::self));
      server = Wire.startServer(settings.host(), settings.port(), List.<BindableService>of(service),
          settings.security());
      address = settings.advertise() != null ? settings.advertise() : new PodAddress(settings.host(), Wire.port(server));
    }
    view.identify(new PodId(address, random.nextLong()));
    timer.every(CHORE_MILLIS, this::chores);
    if (!settings.clientOnly()) {
      manager.register(settings.startTimeout());
    }
    manager.watch();
    if (!settings.clientOnly()) {
      timer.every(settings.gossipInterval().toMillis(), this::gossip);
      timer.every(PASSIVATION_MILLIS, this::passivate);
      if (host.sharesDrains()) {
        timer.every(EntityHost.WATCH_DRAINS_MILLIS, this::watchDrains);
      }
    }
  }

  /** Graceful stop: stops local entities, unregisters, lets waiting messages leave, closes. */
  @Override
  public void close() {
    if (closing) {
      return;
    }
    closing = true;
    if (lease != null) {
      lease.closing();
    }
    if (router != null) {
      router.closing(); // new sends fail at once from here on
    }
    try {
      if (host != null && lease.granted()) {
        host.releaseAll(settings.terminationTimeout().toMillis());
        manager.unregister();
      }
      if (router != null) {
        // Let what is in flight finish: waiting messages flow to the new owners once the manager
        // has published them.
        try {
          if (!router.awaitInFlight(settings.sendTimeout().toMillis())) {
            log.warn("pod {}: {} messages still in flight at close", self(), router.inFlight());
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    } finally {
      closed = true;
      if (lease != null) {
        lease.closed();
      }
      if (manager != null) {
        manager.close();
      } else if (managerChannel != null) {
        managerChannel.close();
      }
      if (router != null) {
        router.failAll("the sharding of pod " + self() + " is closed");
      }
      if (server != null) {
        server.shutdown();
        try {
          if (!server.awaitTermination(1, TimeUnit.SECONDS)) {
            server.shutdownNow();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          server.shutdownNow();
        }
      }
      if (router != null) {
        router.clients().closeAll();
      }
      timer.close();
    }
  }

  // ------------------------------------------------------------------------------------------
  // The timer's chores

  @GuardedBy("the pod timer")
  private void chores() {
    timer.checkInTimer();
    try {
      lease.check();
      router.expire();
      if (++chores % 5 == 0) {
        router.abandonMoved(); // every 100 ms: its grace is 500 ms
      }
      router.kickAll(); // a safety net: no waiting route depends on a single kick
    } catch (RuntimeException e) {
      log.warn("pod {}: timer task failed: {}", self(), e.toString());
    }
  }

  @GuardedBy("the pod timer")
  private void gossip() {
    timer.checkInTimer();
    gossip.once();
  }

  @GuardedBy("the pod timer")
  private void watchDrains() {
    try {
      host.watchDrains();
    } catch (RuntimeException | OutOfMemoryError e) {
      // Out of memory: no drain thread could be made. Logged, not thrown: a task that throws is
      // cancelled by the timer, and the watchdog must look again in 5 ms.
      log.warn("pod {}: the shared drains' watchdog failed: {}", self(), e.toString());
    }
  }

  @GuardedBy("the pod timer")
  private void passivate() {
    timer.checkInTimer();
    try {
      host.passivateIdle();
      host.expireCarried(); // carried states no activation took in time
    } catch (RuntimeException e) {
      log.warn("pod {}: passivation failed: {}", self(), e.toString());
    }
  }

  // ------------------------------------------------------------------------------------------
  // A new incarnation

  /** The manager no longer knows this pod: fence, and join again as a new incarnation. */
  private void rejoin(String why) {
    if (closing || host == null || !rejoins.begin()) {
      return; // one rejoin at a time; none after a refusal for good
    }
    synchronized (view.guard()) {
      if (closing) {
        rejoins.cancel();
        return;
      }
      log.warn("pod {}: {}; stopping every shard and joining again as a new incarnation", self(), why);
      lease.revokeLocked();
      host.fenceAll();
      host.resetForNewIncarnation();
      view.newIncarnationLocked(new PodId(view.self().address(), random.nextLong()));
    }
    settings.observer().fenced();
    Thread.ofVirtual().name("atoll-rejoin").start(
        () -> rejoins.run(() -> manager.register(settings.startTimeout()), () -> closing, self(),
            manager::stopRenewing));
  }

  /**
   * The fingerprint of type {@code type}'s hasher.
   *
   * @throws IllegalArgumentException naming the type if the hasher overflows the stack
   */
  static long fingerprint(String type, io.atoll.core.ShardHasher h) {
    try {
      return io.atoll.core.HasherFingerprint.of(h);
    } catch (StackOverflowError e) {
      throw new IllegalArgumentException("entity type '" + type + "': its hasher "
          + io.atoll.core.HasherFingerprint.nameOf(h) + " overflowed the stack (expected: a hasher that answers a"
          + " shard for any id and count)", e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // The rooms' callbacks, each connected to the room that acts on it

  private final class ViewEvents implements View.Callback {
    @Override
    public void grow(io.atoll.core.Spaces longer) {
      // The host first: a route may dispatch into it as soon as the router has the new shards.
      if (host != null) {
        host.grow(longer.size());
      }
      if (router != null) {
        router.grow(longer);
      }
    }

    @Override
    public void apply(ClusterConfig config, PodId self, boolean selfActive) {
      if (host != null && !closed) {
        host.onView(config, self, selfActive);
      }
    }

    @Override
    public void podGone(PodId pod) {
      router.clients().retire(pod);
    }

    @Override
    public void changed() {
      router.kickAll();
      forgetDeparted();
    }

    @Override
    public void selfDeclaredGone() {
      if (host != null && !closing && !closed) {
        rejoin("the manager declared it gone");
      }
    }
  }

  /** Drops what each room keeps per peer for pods no longer active in the view: bounded by the config. */
  private void forgetDeparted() {
    Set<PodId> live = new HashSet<>(view.peers());
    router.clients().retainOnly(live);
    if (gossip != null) {
      gossip.retainOnly(live);
    }
    if (manager != null) {
      manager.retainOnly(live);
    }
  }

  private final class LeaseEvents implements Lease.Callback {
    @Override
    public void fence() {
      host.fenceAll();
    }

    @Override
    public void unfence() {
      if (host != null) {
        view.applyLocked();
      }
    }

    @Override
    public void extended() {
      router.kickAll();
    }

    @Override
    public void fenced() {
      settings.observer().fenced();
    }
  }

  private final class HostEvents implements EntityHost.Callback {
    @Override
    public void shardServed(int shard) {
      router.kick(shard);
    }

    @Override
    public void releaseFinished() {
      if (!closed) {
        view.reapply();
      }
    }
  }

  private final class RouterEvents implements Router.Callback {
    @Override
    public void notOwner(PodId peer, int shard, long epoch) {
      gossip.onNotOwner(peer, shard, epoch);
    }

    @Override
    public void unreachable(PodId peer) {
      if (manager != null && !closing && view.isActive(peer)) {
        manager.notifyUnhealthy(peer);
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // For the facade

  /** A handle to {@code type/id} sending from this pod. */
  @Override
  public <M> EntityRef<M> entity(EntityType<M> type, String id) {
    return router.ref(type, id);
  }

  /** The current view of the cluster config. */
  @Override
  public ClusterConfig view() {
    return view.config();
  }

  /** This pod's identity (a new incarnation after it was taken for dead). */
  @Override
  public PodId self() {
    return view == null ? null : view.self();
  }

  /** The number of shards of the cluster. */
  @Override
  public int numberOfShards() {
    return view.numberOfShards();
  }

  /** Shards this pod serves now. */
  @Override
  public List<Integer> servedShards() {
    return host == null ? List.of() : host.servedShards();
  }

  /** Live activations on this pod. */
  @Override
  public int activeEntities() {
    return host == null ? 0 : host.activeEntities();
  }

  /** Messages of this pod in flight. */
  @Override
  public int inFlight() {
    return router.inFlight();
  }

  /** Messages of this pod waiting in shard buffers. */
  @Override
  public int bufferedMessages() {
    return router.buffered();
  }

  /** Whether the pod holds a live lease (always true for a client). */
  @Override
  public boolean holdsLease() {
    return lease.valid();
  }
}

package io.atoll.runtime.internal;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.Ticker;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.GossipRequest;
import io.atoll.transport.grpc.proto.GossipResponse;
import io.atoll.transport.grpc.proto.NotOwner;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.grpc.BindableService;
import io.grpc.Server;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pod: the router, the entity host, the connections to other pods and to the manager, the
 * lease, and the current view of the cluster config. {@link Sharding} is its public face.
 *
 * <p><b>The view</b> is one volatile reference to an immutable {@link ClusterConfig}; the hot
 * path reads it without locks. Every config that arrives (manager watch, push, gossip, a peer's
 * hint) is merged into it under {@link #configLock}, which also serializes what the host does
 * with it, so a shard's stop always finishes before a later config can give it back.
 *
 * <p><b>The lease</b> is a deadline on the injected monotonic clock, counted from when the pod
 * sent its last successful renewal. Every delivery checks it: after it passes the pod handles
 * nothing, even before the lease keeper notices and fences the shards.
 */
public final class PodRuntime {

  private static final Logger log = LoggerFactory.getLogger(PodRuntime.class);

  final PodSettings settings;
  final Ticker ticker;
  final ShardingObserver observer;
  Sharding sharding;
  final Timeouts timeouts;
  final Map<String, TypeRuntime> types = new ConcurrentHashMap<>();
  private final TypeRuntime[] hosted;
  private final Map<PodId, PeerClient> clients = new ConcurrentHashMap<>();
  private final Object configLock = new Object();
  private final ScheduledExecutorService timer;
  private final ThreadFactory entityThreads = Thread.ofVirtual().name("atoll-entity").factory();
  private final SecureRandom random = new SecureRandom();

  Router router;
  EntityHost host;
  private ManagerLink manager;
  private Server server;
  private volatile ClusterConfig view;
  /** This pod's entry in {@link #view} (the same object), or null; for identity checks on the hot path. */
  volatile PodEntry selfEntry;
  private volatile PodId self;
  private volatile long leaseUntil;
  private volatile boolean fenced;
  private volatile boolean closing;
  private volatile boolean closed;
  private int numberOfShards;
  private final Map<PodId, Long> lastHint = new ConcurrentHashMap<>();
  private final Map<PodId, Long> lastGossipEpoch = new ConcurrentHashMap<>();

  /**
   * Creates a pod that hosts {@code hostedTypes} (none for a client) and knows how to send to
   * {@code knownTypes}.
   */
  public PodRuntime(PodSettings settings, Map<EntityType<?>, EntityFactory<?>> hostedTypes) {
    this.settings = settings;
    this.ticker = settings.ticker();
    this.observer = settings.observer();
    this.timeouts = new Timeouts(settings.maxInFlight());
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "atoll-pod-timer");
      t.setDaemon(true);
      return t;
    });
    List<TypeRuntime> list = new ArrayList<>();
    for (Map.Entry<EntityType<?>, EntityFactory<?>> e : hostedTypes.entrySet()) {
      @SuppressWarnings("unchecked")
      EntityFactory<Object> f = (EntityFactory<Object>) e.getValue();
      TypeRuntime t = new TypeRuntime(e.getKey(), Codecs.forType(e.getKey()), f, list.size());
      list.add(t);
      types.put(t.name, t);
    }
    this.hosted = list.toArray(new TypeRuntime[0]);
  }

  // ------------------------------------------------------------------------------------------
  // Start and stop

  /** Starts the pod: learns the cluster, listens, registers, and begins renewing its lease. */
  public void start(Sharding facade) {
    this.sharding = facade;
    manager = new ManagerLink(this, settings.manager(), settings.keepServingWhileManagerDown());
    ClusterConfig first = manager.fetchConfig(settings.startTimeout());
    numberOfShards = first.size();
    router = new Router(this, numberOfShards);
    PodAddress address;
    if (settings.clientOnly()) {
      address = new PodAddress(settings.host(), 1);
      self = new PodId(address, random.nextLong());
      view = first;
    } else {
      host = new EntityHost(this, numberOfShards, hosted);
      view = first; // before the server: requests may arrive at once
      server = Wire.startServer(settings.host(), settings.port(), List.<BindableService>of(new PodService(this)));
      address = new PodAddress(settings.host(), Wire.port(server));
      self = new PodId(address, random.nextLong());
    }
    long tick = 20;
    timer.scheduleWithFixedDelay(this::expireSafely, tick, tick, TimeUnit.MILLISECONDS);
    if (settings.clientOnly()) {
      manager.watch();
    } else {
      manager.register(settings.startTimeout());
      manager.watch();
      long gossip = settings.gossipInterval().toMillis();
      timer.scheduleWithFixedDelay(this::gossipOnce, gossip, gossip, TimeUnit.MILLISECONDS);
      timer.scheduleWithFixedDelay(this::passivateSafely, 1000, 1000, TimeUnit.MILLISECONDS);
    }
  }

  /** Graceful stop: stops local entities, unregisters, lets waiting messages leave, closes. */
  public void close() {
    if (closing) {
      return;
    }
    closing = true;
    try {
      if (!settings.clientOnly() && host != null && leaseUntil != 0) {
        host.releaseAll(settings.terminationTimeout().toMillis());
        manager.unregister();
      }
      // Let what is in flight finish: waiting messages flow to the new owners once the manager
      // has published them.
      List<Pending> inFlight = timeouts.snapshot();
      if (!inFlight.isEmpty()) {
        try {
          java.util.concurrent.CompletableFuture.allOf(inFlight.toArray(new Pending[0]))
              .handle((v, e) -> null)
              .get(settings.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
          log.warn("pod {}: {} messages still in flight at close", self, timeouts.size());
        }
      }
    } finally {
      closed = true;
      if (manager != null) {
        manager.close();
      }
      if (router != null) {
        router.failAll("the sharding of pod " + self + " is closed");
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
      clients.values().forEach(PeerClient::close);
      clients.clear();
      timer.shutdownNow();
    }
  }

  boolean isClosing() {
    return closing;
  }

  // ------------------------------------------------------------------------------------------
  // Sending

  /** Sends a message from this pod. */
  java.util.concurrent.CompletableFuture<Object> send(TypeRuntime t, String entityId, Object message, boolean ask, long timeoutNanos) {
    int shard = shardOf(entityId);
    Pending p = new Pending(this, t, entityId, shard, message, ask, timeoutNanos);
    if (closing) {
      p.completeExceptionally(new DeliveryException(DeliveryException.Reason.SHUT_DOWN, "send to "
          + p.describe() + " failed: the sharding of pod " + self + " is closing"));
      return p;
    }
    router.send(p);
    return p;
  }

  /** Creates a pending ask whose message is built from it, then sends it. */
  java.util.concurrent.CompletableFuture<Object> ask(TypeRuntime t, String entityId,
      java.util.function.Function<Pending, Object> build,
      long timeoutNanos) {
    int shard = shardOf(entityId);
    Pending p = new Pending(this, t, entityId, shard, null, true, timeoutNanos);
    p.message = java.util.Objects.requireNonNull(build.apply(p), "the ask built a null message");
    if (closing) {
      p.completeExceptionally(new DeliveryException(DeliveryException.Reason.SHUT_DOWN, "ask to "
          + p.describe() + " failed: the sharding of pod " + self + " is closing"));
      return p;
    }
    router.send(p);
    return p;
  }

  /** The runtime of a type this pod sends to, made on first use. */
  TypeRuntime typeFor(EntityType<?> type) {
    TypeRuntime t = types.get(type.name());
    if (t == null) {
      t = types.computeIfAbsent(type.name(), n -> new TypeRuntime(type, Codecs.forType(type), null, -1));
    }
    if (!t.type.messageClass().equals(type.messageClass())) {
      throw new IllegalArgumentException("entity type '" + type.name() + "': message class "
          + type.messageClass().getName() + " (expected: " + t.type.messageClass().getName()
          + ", as first used on this pod)");
    }
    return t;
  }

  int shardOf(String entityId) {
    return settings.hasher().shardOf(entityId, numberOfShards);
  }

  public int numberOfShards() {
    return numberOfShards;
  }

  TypeRuntime hostedType(String name) {
    TypeRuntime t = types.get(name);
    return t != null && t.hosted() ? t : null;
  }

  String hostedTypeNames() {
    List<String> names = new ArrayList<>();
    for (TypeRuntime t : hosted) {
      names.add(t.name);
    }
    return String.join(", ", names);
  }

  Object decode(TypeRuntime t, byte[] bytes, InboundDelivery d) {
    ReplyBinding.bind(d);
    try {
      return t.codec.decode(bytes);
    } finally {
      ReplyBinding.unbind();
    }
  }

  PeerClient client(PodId peer) {
    PeerClient c = clients.get(peer);
    if (c == null) {
      c = clients.computeIfAbsent(peer, p -> new PeerClient(this, p));
    }
    return c;
  }

  void startEntityThread(EntityInstance i) {
    entityThreads.newThread(i).start();
  }

  void schedule(Runnable r, long delayNanos) {
    try {
      timer.schedule(r, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closed
    }
  }

  private void expireSafely() {
    try {
      checkLease();
      router.expire();
      router.kickAll(); // a safety net: no waiting route depends on a single kick
    } catch (RuntimeException e) {
      log.warn("pod {}: timer task failed: {}", self, e.toString());
    }
  }

  private void passivateSafely() {
    try {
      host.passivateIdle();
    } catch (RuntimeException e) {
      log.warn("pod {}: passivation failed: {}", self, e.toString());
    }
  }

  // ------------------------------------------------------------------------------------------
  // View

  /** The current view of the cluster config. */
  public ClusterConfig view() {
    return view;
  }

  /** This pod's identity (a new incarnation after it was taken for dead). */
  public PodId self() {
    return self;
  }

  Pod selfPod() {
    return new Pod(self, settings.version());
  }

  /** Merges a config into the view and acts on it. */
  void onConfig(ClusterConfig incoming) {
    if (incoming.size() != numberOfShards) {
      log.warn("pod {}: ignored a config of {} shards (expected: {})", self, incoming.size(), numberOfShards);
      return;
    }
    boolean declaredGone = false;
    synchronized (configLock) {
      ClusterConfig merged = view.merge(incoming);
      if (merged == view) {
        return;
      }
      selfEntry = null; // never an entry of another config than the view's
      view = merged;
      selfEntry = merged.pod(self).orElse(null);
      if (host != null && !closed) {
        Optional<PodEntry> me = merged.pod(self);
        boolean active = me.isPresent() && me.get().status() == PodStatus.ACTIVE;
        declaredGone = me.isPresent() && me.get().status() == PodStatus.GONE && !closing;
        host.onView(merged, self, active);
      }
      for (PodEntry e : merged.pods()) {
        if (e.status() == PodStatus.GONE) {
          PeerClient c = clients.remove(e.id());
          if (c != null) {
            retire(c, ticker.nanoTime() + settings.sendTimeout().toNanos());
          }
        }
      }
    }
    router.kickAll();
    if (declaredGone) {
      rejoin("the manager declared it gone");
    }
  }

  /**
   * Closes the client of a pod that left once its answers are in (a pod that stops gracefully
   * still answers what it received), or at {@code deadline}.
   */
  private void retire(PeerClient c, long deadline) {
    c.stopSending(); // what never left goes back to its route now; answers to what did are awaited
    if (c.inflight() == 0 || ticker.nanoTime() - deadline > 0 || closed) {
      c.close();
      return;
    }
    schedule(() -> retire(c, deadline), TimeUnit.MILLISECONDS.toNanos(50));
  }

  /** Milliseconds since this pod's last successful lease renewal, or -1. */
  long leaseRenewedMillisAgo() {
    return manager == null ? -1 : manager.renewedMillisAgo();
  }

  /** The active pods other than this one, from the current view. */
  List<PodId> peers() {
    List<PodId> out = new ArrayList<>();
    for (Pod p : view.activePods()) {
      if (!p.id().equals(self)) {
        out.add(p.id());
      }
    }
    return out;
  }

  /** Applies the current view again (after a release, a claim it ignored may now take effect). */
  void reapplyView() {
    if (host == null || closed) {
      return;
    }
    synchronized (configLock) {
      Optional<PodEntry> me = view.pod(self);
      host.onView(view, self, me.isPresent() && me.get().status() == PodStatus.ACTIVE);
    }
    router.kickAll();
  }

  /** A peer refused a message with a newer claim than ours: fetch its config. */
  void onNotOwner(PodId peer, NotOwner no) {
    int shard = no.getShard();
    if (shard < 1 || shard > numberOfShards || no.getEpoch() <= view.epoch(shard - 1)) {
      return;
    }
    long now = ticker.nanoTime();
    Long last = lastHint.get(peer);
    if (last != null && now - last < TimeUnit.MILLISECONDS.toNanos(50)) {
      return;
    }
    lastHint.put(peer, now);
    gossipWith(peer, true);
  }

  void peerUnreachable(PodId peer) {
    if (manager != null && !closing && view.pod(peer).map(e -> e.status() == PodStatus.ACTIVE).orElse(false)) {
      manager.notifyUnhealthy(peer);
    }
  }

  private void gossipOnce() {
    try {
      List<PodId> peers = new ArrayList<>();
      for (Pod p : view.activePods()) {
        if (!p.id().equals(self)) {
          peers.add(p.id());
        }
      }
      if (!peers.isEmpty()) {
        gossipWith(peers.get(random.nextInt(peers.size())), false);
      }
    } catch (RuntimeException e) {
      log.debug("gossip failed: {}", e.toString());
    }
  }

  private void gossipWith(PodId peer, boolean pull) {
    ClusterConfig v = view;
    Long sent = lastGossipEpoch.get(peer);
    boolean send = !pull && (sent == null || sent != v.epoch());
    if (send) {
      lastGossipEpoch.put(peer, v.epoch());
    }
    GossipRequest.Builder req = GossipRequest.newBuilder().setFrom(Wire.ref(self)).setEpoch(v.epoch());
    if (send) {
      req.setConfig(Wire.bytes(v));
    }
    PodServiceGrpc.newStub(client(peer).channel()).withDeadlineAfter(1, TimeUnit.SECONDS).gossip(req.build(),
        new io.grpc.stub.StreamObserver<GossipResponse>() {
          @Override
          public void onNext(GossipResponse r) {
            if (r.hasConfig()) {
              try {
                onConfig(Wire.config(r.getConfig()));
              } catch (RuntimeException e) {
                log.debug("pod {}: ignored a gossiped config from {}: {}", self, peer, e.getMessage());
              }
            }
          }

          @Override
          public void onError(Throwable t) {
            lastGossipEpoch.remove(peer);
          }

          @Override
          public void onCompleted() {}
        });
  }

  long managerTerm() {
    return manager.term();
  }

  // ------------------------------------------------------------------------------------------
  // Lease

  boolean leaseValid() {
    return settings.clientOnly() || ticker.nanoTime() - leaseUntil < 0;
  }

  boolean leaseValid(long now) {
    return settings.clientOnly() || now - leaseUntil < 0;
  }

  /** The lease now runs until {@code until} (never shortened). */
  void extendLease(long until) {
    synchronized (configLock) {
      if (until - leaseUntil > 0) {
        leaseUntil = until;
      }
      if (fenced && leaseValid() && !closing) {
        fenced = false;
        log.info("pod {}: lease renewed; serving again", self);
        if (host != null) {
          Optional<PodEntry> me = view.pod(self);
          host.onView(view, self, me.isPresent() && me.get().status() == PodStatus.ACTIVE);
        }
      }
    }
    router.kickAll();
  }

  private void checkLease() {
    if (settings.clientOnly() || host == null || leaseUntil == 0 || fenced || closed || leaseValid()) {
      return;
    }
    synchronized (configLock) {
      if (fenced || leaseValid()) {
        return;
      }
      fenced = true;
      log.warn("pod {}: lease ran out without a renewal; stopped serving every shard (self-fencing)", self);
      host.fenceAll();
    }
    observer.fenced();
  }

  /** The manager no longer knows this pod: fence, and join again as a new incarnation. */
  void rejoin(String why) {
    if (closing || host == null) {
      return;
    }
    synchronized (configLock) {
      if (closing) {
        return;
      }
      log.warn("pod {}: {}; stopping every shard and joining again as a new incarnation", self, why);
      leaseUntil = ticker.nanoTime();
      fenced = true;
      host.fenceAll();
      host.resetForNewIncarnation();
      self = new PodId(self.address(), random.nextLong());
      selfEntry = null;
    }
    observer.fenced();
    Thread.ofVirtual().name("atoll-rejoin").start(() -> {
      while (!closing) {
        try {
          manager.register(settings.startTimeout());
          return;
        } catch (RuntimeException e) {
          log.warn("pod {}: could not join again yet: {}; retrying", self, e.getMessage());
        }
      }
    });
  }

  // ------------------------------------------------------------------------------------------
  // Introspection for the facade

  /** Shards this pod serves now. */
  public List<Integer> servedShards() {
    return host == null ? List.of() : host.servedShards();
  }

  /** Live activations on this pod. */
  public int activeEntities() {
    return host == null ? 0 : host.activeEntities();
  }

  /** Messages of this pod in flight. */
  public int inFlight() {
    return timeouts.size();
  }

  /** Whether the pod holds a live lease (always true for a client). */
  public boolean holdsLease() {
    return leaseValid();
  }
}

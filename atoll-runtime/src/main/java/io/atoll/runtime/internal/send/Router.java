package io.atoll.runtime.internal.send;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.Spaces;
import io.atoll.core.Ticker;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.ShardingObserver;
import io.atoll.runtime.codec.MessageCodec;
import io.atoll.runtime.internal.cluster.PeerChannels;
import io.atoll.runtime.internal.cluster.View;
import io.atoll.runtime.internal.host.EntityHost;
import io.atoll.runtime.internal.host.TypeRuntime;
import io.atoll.runtime.internal.util.PodContext;
import io.atoll.runtime.PodSettings;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Sends this pod's messages: picks each message's shard route, reads the shard's owner from the
 * view (one volatile read of an immutable snapshot), and hands the message to the local host or
 * to the client of the owning pod. Owns the routes, the in-flight bound and deadlines
 * ({@link Timeouts}) and the clients of other pods ({@link PeerClients}); reports what it learns
 * about other pods upward through its {@link Callback}. Thread-safe.
 */
public final class Router implements ShardRoute.Callback, Pending.Owner, PeerClient.Callback {

  /** What the router reports upward. */
  public interface Callback {
    /** {@code peer} refused a message of {@code shard} under a claim at {@code epoch}. */
    void notOwner(PodId peer, int shard, long epoch);

    /** The stream to {@code peer} broke. */
    void unreachable(PodId peer);
  }

  /**
   * What {@link #ownerOf} returns when this pod owns and serves the shard: decided once, so the
   * local/remote choice cannot change between choosing a target and dispatching to it.
   */
  static final PodId SERVED_HERE = new PodId(new PodAddress("this-pod", 1), 0);

  private final PodSettings settings;
  private final Ticker ticker;
  private final View view;
  /** Null on a client. */
  private final EntityHost host;
  private final Callback callback;
  private final ShardingObserver observer;
  private final Timeouts timeouts;
  private final PeerClients clients;
  /** The routes, the layout they follow, and the messages waiting for a space of their role. */
  private final Routes routes;
  private final Set<ShardRoute> holding = ConcurrentHashMap.newKeySet();
  private final Map<String, TypeRuntime> types = new ConcurrentHashMap<>();
  private final Function<EntityType<?>, MessageCodec> codecs;
  private volatile boolean closing;

  /**
   * A router for the pod of {@code view}, delivering locally to {@code host} (null on a client).
   *
   * @param hosted the types {@code host} hosts
   * @param codecs the codec of a type this pod only sends to
   */
  public Router(PodContext ctx, View view, EntityHost host, TypeRuntime[] hosted,
      Function<EntityType<?>, MessageCodec> codecs, Callback callback) {
    this.codecs = codecs;
    this.settings = ctx.settings();
    this.ticker = ctx.ticker();
    this.view = view;
    this.host = host;
    this.callback = callback;
    this.observer = settings.observer();
    this.timeouts = new Timeouts(settings.maxInFlight());
    this.clients = new PeerClients(ctx, view::clusterId, this);
    for (TypeRuntime t : hosted) {
      types.put(t.name, t);
    }
    this.routes = new Routes(view.spaces(), settings.hasher(), settings.bufferSize(),
        shard -> new ShardRoute(shard, settings.bufferSize(), ticker, ctx.scheduler(), this));
  }

  /**
   * The layout grew by spaces appended at run time (called by the view, under its guard, before
   * the config that numbers the new shards is published): routes for the new shards, then the
   * messages that waited for a space of their role go to their shards, in send order.
   */
  public void grow(Spaces longer) {
    routes.grow(longer);
  }

  /** The clients of other pods, by pod id. */
  public PeerClients clients() {
    return clients;
  }

  /** The channels to other pods (shared with the clients). */
  public PeerChannels channels() {
    return clients;
  }

  // ---- Sending

  /** A ref to {@code type/id} sending from this pod. */
  public <M> EntityRef<M> ref(EntityType<M> type, String id) {
    return new EntityRefImpl<>(this, typeFor(type), type, id);
  }

  /** Sends a message; the stage is the message's {@link Pending}, which the caller cannot complete. */
  CompletionStage<Object> send(TypeRuntime t, String entityId, Object message, boolean ask, long timeoutNanos) {
    Pending p = new Pending(this, t, entityId, shardOf(t, entityId), message, ask, timeoutNanos, ticker.nanoTime());
    route(p, "send to ");
    return p;
  }

  /** Creates a pending ask whose message is built from its reply handle, then sends it. */
  CompletionStage<Object> ask(TypeRuntime t, String entityId, Function<Reply<Object>, Object> build,
      long timeoutNanos) {
    Pending p = new Pending(this, t, entityId, shardOf(t, entityId), null, true, timeoutNanos, ticker.nanoTime());
    p.message = Objects.requireNonNull(build.apply(p), "the ask built a null message");
    route(p, "ask to ");
    return p;
  }

  private void route(Pending p, String verb) {
    observer.messageSent();
    if (closing) {
      p.settleExceptionally(new DeliveryException(DeliveryException.Reason.SHUT_DOWN, verb + p.describe() + " failed: the sharding of pod " + view.self() + " is closing"));
      observer.messageFailed(DeliveryException.Reason.SHUT_DOWN);
      return;
    }
    if (!timeouts.add(p)) {
      p.settleExceptionally(new DeliveryException(DeliveryException.Reason.TOO_MANY_IN_FLIGHT, "send to "
          + p.describe() + " failed: " + settings.maxInFlight() + " messages of this pod are already in flight;"
          + " nothing was sent, wait for some to complete"));
      observer.messageFailed(DeliveryException.Reason.TOO_MANY_IN_FLIGHT);
      return;
    }
    if (routes.place(p)) {
      routes.route(p.shard).send(p, true); // the caller's own thread, holding nothing of the pod
    }
  }

  static String roleName(String role) {
    return role.isEmpty() ? "the default role" : "role '" + role + "'";
  }

  private int shardOf(TypeRuntime t, String entityId) {
    return routes.shardOf(t, entityId);
  }

  /** The runtime of a type this pod sends to, made on first use. */
  TypeRuntime typeFor(EntityType<?> type) {
    TypeRuntime t = types.get(type.name());
    if (t == null) {
      t = types.computeIfAbsent(type.name(), n -> new TypeRuntime(type, codecs.apply(type), null, -1));
    }
    if (!t.type.messageClass().equals(type.messageClass())) {
      throw new IllegalArgumentException("entity type '" + type.name() + "': message class "
          + type.messageClass().getName() + " (expected: " + t.type.messageClass().getName()
          + ", as first used on this pod)");
    }
    if (!t.role.equals(type.role())) {
      throw new IllegalArgumentException("entity type '" + type.name() + "': role '" + type.role()
          + "' (expected: '" + t.role + "', as first used or registered on this pod; every pod must declare"
          + " a type on the same role)");
    }
    if (t.hasher != type.hasher() && hasherClass(t.hasher) != hasherClass(type.hasher())) {
      throw new IllegalArgumentException("entity type '" + type.name() + "': hasher " + hasherName(type.hasher())
          + " (expected: " + hasherName(t.hasher) + ", as first used or registered on this pod; every pod must"
          + " give a type the same hasher)");
    }
    return t;
  }

  private static Class<?> hasherClass(io.atoll.core.ShardHasher h) {
    return h == null ? null : h.getClass();
  }

  private static String hasherName(io.atoll.core.ShardHasher h) {
    return h == null ? "none of its own (the pod's)" : h.getClass().getName();
  }

  long askTimeoutNanos() {
    return settings.askTimeout().toNanos();
  }

  long sendTimeoutNanos() {
    return settings.sendTimeout().toNanos();
  }

  // ---- ShardRoute.Callback

  @Override
  public PodId ownerOf(int shard) {
    return ownerOf(shard, ticker.nanoTime());
  }

  @Override
  public PodId ownerOf(int shard, long now) {
    PodEntry me = view.selfEntry();
    ClusterConfig config = view.config();
    if (shard > config.size()) {
      return null; // a space appended at run time whose config is not published yet
    }
    PodEntry owner = config.ownerEntry(shard - 1);
    if (owner == null || owner.status() != PodStatus.ACTIVE) {
      return null;
    }
    // Identity first (the entry of this pod in the view it was read with); else the incarnation,
    // a random long, rules out other pods before the full comparison.
    PodId self = view.self();
    boolean mine = owner == me
        || (owner.id().incarnation() == self.incarnation() && owner.id().equals(self));
    if (mine) {
      return host != null && host.accepts(shard, now) ? SERVED_HERE : null;
    }
    return owner.id();
  }

  @Override
  public long claimEpoch(int shard) {
    ClusterConfig config = view.config();
    return shard > config.size() ? 0 : config.epoch(shard - 1);
  }

  @Override
  public boolean dispatch(Pending p, PodId to) {
    return dispatch(p, to, false);
  }

  @Override
  public boolean dispatch(Pending p, PodId to, boolean sending) {
    if (to == SERVED_HERE) {
      p.where = "in the mailbox of the entity on this pod";
      return host != null && host.deliverLocal(p.shard, p.type, p.entityId, p, sending,
          sending ? p.startNanos : ticker.nanoTime());
    }
    PeerClient c = clients.client(to);
    p.where = "sent to pod " + to + ", no answer yet";
    c.enqueue(p);
    return true;
  }

  @Override
  public void holding(ShardRoute r, boolean on) {
    if (on) {
      holding.add(r);
    } else {
      holding.remove(r);
    }
  }

  // ---- Pending.Owner and PeerClient.Callback

  @Override
  public void completed(Pending p) {
    timeouts.remove(p);
    report(p);
  }

  /** Tells the observer how a settled message ended. */
  private void report(Pending p) {
    if (observer == ShardingObserver.NONE) {
      return;
    }
    if (p.isCompletedExceptionally()) {
      observer.messageFailed(p.exceptionNow() instanceof DeliveryException d ? d.reason()
          : DeliveryException.Reason.ENTITY_FAILED);
    } else {
      observer.messageHandled(p.ask, ticker.nanoTime() - p.startNanos);
    }
  }

  @Override
  public void handled(int shard, Pending first) {
    // Resolved first: a message left in the deadlines by a failure after this still has its
    // sweep, which frees its count; one resolved nowhere would hold its route for good.
    routes.route(shard).resolvedAll(first);
    timeouts.removeSettled(first);
    if (observer != ShardingObserver.NONE) {
      for (Pending p = first; p != null; p = p.nextHandled) {
        if (p.settledInBatch) {
          report(p);
        }
      }
    }
  }

  @Override
  public void resolved(Pending p, boolean retry) {
    if (retry) {
      observer.notOwnerRetry();
    }
    routes.route(p.shard).resolved(p, retry);
  }

  @Override
  public void notOwner(PodId peer, int shard, long epoch) {
    callback.notOwner(peer, shard, epoch);
  }

  @Override
  public void unreachable(PodId peer) {
    callback.unreachable(peer);
  }

  // ---- Changes, deadlines, close

  /** The view changed, or a lease was extended: waiting messages may go now. */
  public void kickAll() {
    for (ShardRoute r : holding) {
      r.kick();
    }
  }

  /** A shard became served here: its waiting messages may go now. */
  public void kick(int shard) {
    routes.route(shard).kick();
  }

  /**
   * Gives up messages left at a pod, still a member, that no longer owns their shard (see {@link
   * PeerClient#abandonMoved}), so that their shards' later messages go to the new owners.
   */
  public void abandonMoved() {
    ClusterConfig config = view.config();
    // A pod gone from the config is retired instead (PeerClients.retire).
    clients.abandonMoved(config::isActive, (peer, shard) -> {
      if (shard < 1 || shard > config.size()) {
        return true; // not in this view's layout yet: nothing to say
      }
      PodEntry owner = config.ownerEntry(shard - 1);
      return owner != null && owner.id().equals(peer);
    });
  }

  /** Fails messages past their deadline, saying where each one waited. */
  public void expire() {
    List<Pending> expired = timeouts.expired(ticker.nanoTime());
    if (!expired.isEmpty()) {
      // Failing a future runs its callers' continuations: never on the pod's timer thread.
      Thread.ofVirtual().name("atoll-timeouts").start(() -> fail(expired));
    }
  }

  private void fail(List<Pending> expired) {
    for (Pending p : expired) {
      long waited = TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - p.startNanos);
      DeliveryException e = new DeliveryException(DeliveryException.Reason.TIMEOUT,
          (p.ask ? "ask to " : "tell to ") + p.describe() + " timed out after " + waited + " ms; it was "
              + p.where + noHost(p));
      if (p.settleExceptionally(e)) {
        observer.messageFailed(DeliveryException.Reason.TIMEOUT);
        PeerClient c = p.client;
        if (c != null) {
          c.forget(p);
        }
      }
      if (p.shard < 1) {
        routes.forget(p);
      } else {
        routes.route(p.shard).timedOut(p);
      }
    }
  }

  /**
   * What to add to a timeout when no live pod hosts the message's role: its shard can have no
   * owner until one starts, so say which type and role wait for one.
   */
  private String noHost(Pending p) {
    ClusterConfig config = view.config();
    String role = roleName(p.type.role);
    if (p.shard < 1) {
      return "; entity type '" + p.type.name + "' is on " + role + ", which has no shard space: no pod of that"
          + " role has registered (the manager appends its space when the first one does, unless its"
          + " --new-space-shards is 0)";
    }
    if (config.activeOwner(p.shard - 1) != null || config.hasActiveHost(p.type.role)) {
      return "";
    }
    return "; no live pod hosts " + role + " of entity type '" + p.type.name + "' (start a pod of "
        + role + " hosting the type)";
  }

  /** New sends fail at once: the sharding is closing. */
  public void closing() {
    closing = true;
  }

  /** Waits up to {@code timeoutMillis} for the messages in flight; false if some are still out. */
  public boolean awaitInFlight(long timeoutMillis) throws InterruptedException {
    List<Pending> inFlight = timeouts.snapshot();
    if (inFlight.isEmpty()) {
      return true;
    }
    try {
      CompletableFuture.allOf(inFlight.toArray(new Pending[0])).handle((v, e) -> null)
          .get(timeoutMillis, TimeUnit.MILLISECONDS);
      return true;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  /** Fails every message in flight (the sharding is closing). */
  public void failAll(String why) {
    DeliveryException e = new DeliveryException(DeliveryException.Reason.SHUT_DOWN, why);
    routes.failWaiting(e);
    for (ShardRoute r : routes.all()) {
      if (r != null) {
        r.failAll(e);
      }
    }
    for (Pending p : timeouts.all()) {
      p.settleExceptionally(e);
    }
  }

  /** Messages of this pod in flight. */
  public int inFlight() {
    return timeouts.size();
  }

  /** Messages of this pod waiting in shard buffers (read shard by shard, not one snapshot). */
  public int buffered() {
    ShardRoute[] all = routes.all();
    int n = routes.waitingForSpace();
    for (int s = 1; s < all.length; s++) {
      n += all[s].waiting();
    }
    return n;
  }
}

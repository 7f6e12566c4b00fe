package io.atoll.runtime.internal.send;

import com.google.protobuf.UnsafeByteOperations;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.internal.codec.FailureCodes;
import io.atoll.runtime.internal.util.BackoffPolicy;
import io.atoll.runtime.internal.util.GuardedBy;
import io.atoll.runtime.internal.util.LoopDrain;
import io.atoll.runtime.internal.util.PodContext;
import io.atoll.runtime.internal.util.Scheduler;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.proto.DeliverBatch;
import io.atoll.core.ClusterId;
import java.util.function.Supplier;
import io.atoll.transport.grpc.proto.Envelope;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.Reply;
import io.atoll.transport.grpc.proto.ReplyBatch;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * This pod's connection to one other pod: a long-lived Deliver stream that carries batches of
 * envelopes out and batches of replies back.
 *
 * <p>Sends go into an outbox; whichever thread finds the outbox unattended drains it into batches
 * (so under load many messages share a batch, and a lone message leaves at once on its sender's
 * thread). Nothing is written before the receiver's hello: until then a stream failure means the
 * messages never left, and they go back to their shard routes to be retried. After the hello, a
 * failure leaves the fate of unanswered messages unknown, and they fail with
 * {@link DeliveryException.Reason#OUTCOME_UNKNOWN} rather than risk running twice.
 *
 * <p>A stream that fails before its hello backs off (50 ms doubling to 2 s) before the next
 * connect. It reports every outcome upward through its {@link Callback}.
 */
final class PeerClient {

  private static final int MAX_ENVELOPES_PER_BATCH = 256;
  private static final int MAX_BYTES_PER_BATCH = 4 << 20;
  static final BackoffPolicy CONNECT_BACKOFF = BackoffPolicy.exponential(Duration.ofMillis(50), Duration.ofSeconds(2));

  /** What a client reports upward. */
  interface Callback {
    /** A message was resolved: handled or failed, or it never reached the peer ({@code retry}). */
    void resolved(Pending p, boolean retry);

    /** The peer refused a message of {@code shard}: it is not the owner under its claim at {@code epoch}. */
    void notOwner(PodId peer, int shard, long epoch);

    /** The stream to the peer broke. */
    void unreachable(PodId peer);
  }

  private final Callback callback;
  private final Supplier<ClusterId> cluster;
  private final Ticker ticker;
  private final Scheduler scheduler;
  private final int maxMessageBytes;
  final PodId peer;
  private final ManagedChannel channel;
  private final ConcurrentLinkedQueue<Pending> outbox = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean draining = new AtomicBoolean();
  private final Map<Long, Pending> inflight = new ConcurrentHashMap<>();
  /** When the pod last answered anything on its stream (this pod's clock). */
  private volatile long lastHeardNanos;
  private volatile Stream stream;
  private volatile long brokenUntil;
  private volatile long backoffNanos;
  @GuardedBy("draining")
  private long nextId = 1;
  @GuardedBy("draining")
  private int generation;
  private volatile boolean closed;
  private volatile boolean retiring;

  PeerClient(PodContext ctx, PodId peer, Supplier<ClusterId> cluster, Callback callback) {
    this.cluster = cluster;
    this.callback = callback;
    this.ticker = ctx.ticker();
    this.scheduler = ctx.scheduler();
    this.maxMessageBytes = ctx.settings().maxMessageBytes();
    this.peer = peer;
    this.channel = Wire.channel(peer.address(), ctx.settings().security(), Role.POD);
  }

  void enqueue(Pending p) {
    if (closed || retiring) {
      callback.resolved(p, true);
      return;
    }
    outbox.add(p);
    Stream s = stream;
    writes.request(s == null ? null : s.loop);
  }

  private final LoopDrain writes = new LoopDrain(this::drain);

  ManagedChannel channel() {
    return channel;
  }

  /** A timed-out message: drop its in-flight entry. */
  void forget(Pending p) {
    inflight.remove(p.envelopeId, p);
  }

  private void drain() {
    while (!outbox.isEmpty() && draining.compareAndSet(false, true)) {
      boolean blocked;
      try {
        blocked = !drainOnce();
      } finally {
        draining.set(false);
      }
      if (blocked && !writable()) {
        return; // the hello or onReady drains again; re-checked after letting go, so no wake-up is lost
      }
    }
  }

  private boolean writable() {
    Stream s = stream;
    return s != null && !s.dead && s.ready && s.call.isReady();
  }

  /** Drains what it can; false when the stream cannot take more now. */
  @GuardedBy("draining")
  private boolean drainOnce() {
    assert draining.get() : "drainOnce outside a drain";
    Stream s = stream;
    if (s == null || s.dead) {
      if (closed || ticker.nanoTime() - brokenUntil < 0) {
        bounceOutbox(); // unreachable for now: the routes keep the messages and retry
        return true;
      }
      s = open();
    }
    if (!s.ready) {
      return false;
    }
    while (s.call.isReady()) {
      DeliverBatch.Builder b = null;
      int n = 0;
      long bytes = 0;
      Pending p;
      while (n < MAX_ENVELOPES_PER_BATCH && bytes < MAX_BYTES_PER_BATCH && (p = outbox.poll()) != null) {
        Envelope e = envelope(p, s);
        if (e != null) {
          if (b == null) {
            b = DeliverBatch.newBuilder().setClusterId(cluster.get().toString());
          }
          b.addEnvelopes(e);
          n++;
          bytes += e.getPayload().size() + 64;
        }
      }
      if (b == null) {
        return true;
      }
      b.setSenderClockNanos(clockStamp());
      try {
        s.call.onNext(b.build());
      } catch (RuntimeException ex) {
        // The call was cancelled under us; its onError fails what is in flight.
        return true;
      }
    }
    return outbox.isEmpty();
  }

  /** This pod's clock for a batch's stamp; never 0, which means "not given". */
  private long clockStamp() {
    long now = ticker.nanoTime();
    return now == 0 ? 1 : now;
  }

  @GuardedBy("draining")
  private Envelope envelope(Pending p, Stream s) {
    if (p.isDone()) {
      return null; // timed out while queued; its route was told
    }
    byte[] payload = p.payload;
    if (payload == null) {
      try {
        payload = p.type.codec.encode(p.message);
      } catch (RuntimeException e) {
        p.failed(new DeliveryException(DeliveryException.Reason.CODEC, "message to " + p.describe()
            + " could not be encoded by the codec of type '" + p.type.name + "': " + e.getMessage(), e));
        return null;
      }
      if (payload.length > maxMessageBytes) {
        p.failed(new DeliveryException(DeliveryException.Reason.MESSAGE_TOO_LARGE, "message to " + p.describe()
            + ": " + payload.length + " bytes encoded (expected: <= " + maxMessageBytes
            + "); nothing was sent"));
        return null;
      }
      p.payload = payload;
    }
    long id = nextId++;
    p.envelopeId = id;
    p.generation = s.generation;
    p.client = this;
    inflight.put(id, p);
    long remaining = Math.max(1, TimeUnit.NANOSECONDS.toMillis(p.deadlineNanos - ticker.nanoTime()));
    return Envelope.newBuilder()
        .setId(id)
        .setEntityType(p.type.name)
        .setEntityId(p.entityId)
        .setShard(p.shard)
        .setPayload(UnsafeByteOperations.unsafeWrap(payload))
        .setAsk(p.ask)
        .setResume(p.resume)
        .setDeadlineMillis(remaining)
        .build();
  }

  private void bounceOutbox() {
    Pending p;
    while ((p = outbox.poll()) != null) {
      callback.resolved(p, true);
    }
  }

  @GuardedBy("draining")
  private Stream open() {
    Stream s = new Stream(++generation);
    stream = s;
    try {
      PodServiceGrpc.newStub(Wire.reconnecting(channel)).deliver(s);
    } catch (RuntimeException e) {
      s.dead = true;
      stream = null;
    }
    return s;
  }

  // ---- replies, on the transport thread

  private void onReply(Reply r) {
    Pending p = inflight.remove(r.getId());
    if (p == null) {
      return; // timed out already
    }
    switch (r.getResultCase()) {
      case VALUE -> {
        Object v;
        try {
          v = p.type.codec.decode(r.getValue().toByteArray());
        } catch (RuntimeException e) {
          p.failWith(new DeliveryException(DeliveryException.Reason.CODEC, "the answer from " + p.describe()
              + " could not be decoded: " + e.getMessage(), e));
          callback.resolved(p, false);
          return;
        }
        p.send(v);
        callback.resolved(p, false);
      }
      case ACCEPTED -> {
        p.send(null);
        callback.resolved(p, false);
      }
      case NOT_OWNER -> {
        callback.notOwner(peer, r.getNotOwner().getShard(), r.getNotOwner().getEpoch());
        callback.resolved(p, true);
      }
      case FAILURE -> {
        p.failWith(new DeliveryException(FailureCodes.fromWire(r.getFailure().getCode()), r.getFailure().getMessage(),
            java.time.Duration.ofMillis(Math.max(0, r.getFailure().getRetryAfterMillis()))));
        callback.resolved(p, false);
      }
      default -> {
        p.failWith(new DeliveryException(DeliveryException.Reason.OUTCOME_UNKNOWN, "pod " + peer
            + " answered " + p.describe() + " with an empty reply"));
        callback.resolved(p, false);
      }
    }
  }

  private void onDead(Stream s, Throwable t) {
    s.dead = true;
    if (stream == s) {
      stream = null;
    }
    long now = ticker.nanoTime();
    if (!s.ready) {
      backoffNanos = CONNECT_BACKOFF.nextNanos(backoffNanos);
      brokenUntil = now + backoffNanos;
    } else {
      brokenUntil = now; // it worked; reconnect at once
    }
    List<Pending> lost = new ArrayList<>();
    for (Iterator<Pending> it = inflight.values().iterator(); it.hasNext(); ) {
      Pending p = it.next();
      if (p.generation == s.generation) {
        it.remove();
        lost.add(p);
      }
    }
    for (Pending p : lost) {
      p.failWith(new DeliveryException(DeliveryException.Reason.OUTCOME_UNKNOWN, "the connection to pod " + peer
          + " broke after " + p.describe() + " was sent; it may or may not have been handled"
          + (t == null ? "" : " (" + t.getMessage() + ")")));
      callback.resolved(p, false);
    }
    if (!closed) {
      callback.unreachable(peer);
      scheduler.schedule(this::drain, Math.max(0, brokenUntil - now));
    }
  }

  /**
   * Fails every message this pod has not answered, as {@link DeliveryException.Reason#OUTCOME_UNKNOWN}:
   * the config no longer has the pod as a member, so none of them is still due to be handled there
   * (its lease ran out, or it stopped its entities and left); whether one was, before, is unknown.
   * Their shards' routes are then free to send what waits behind them to the new owners.
   */
  void abandonUnanswered(String why) {
    List<Pending> lost = new ArrayList<>();
    for (Map.Entry<Long, Pending> e : inflight.entrySet()) {
      if (inflight.remove(e.getKey(), e.getValue())) { // an answer arriving now wins, or this does
        lost.add(e.getValue());
      }
    }
    failUnknown(lost, p -> "pod " + peer + " " + why + " without answering " + p.describe()
        + "; it may or may not have been handled");
  }

  /**
   * The messages this pod holds whose shard it no longer owns in the view ({@code owned} says
   * false), the pod still a member: a hand-off moved the shard while they were on their way, or
   * waiting to be written (the connection stalled). Unwritten ones go back to their routes at
   * once, for the new owner. Unanswered ones are failed as outcome unknown once they have been
   * so for {@code graceNanos} and the pod has answered nothing for as long: it released the
   * shard, so none of them will be handled there under the claim it released (only if the shard
   * came back to it before a message's deadline could that message still be handled there, the
   * caveat of every outcome unknown); whether one was before the release is unknown. Until then
   * they hold their shard's later messages back (send order), however long the pod takes to
   * answer: a pod whose port was cut off held them until the cut ended, though its shards had
   * long moved.
   */
  void abandonMoved(java.util.function.IntPredicate owned, long now, long graceNanos) {
    if (!outbox.isEmpty() && draining.compareAndSet(false, true)) {
      List<Pending> back = new ArrayList<>();
      try {
        for (Iterator<Pending> it = outbox.iterator(); it.hasNext(); ) {
          Pending p = it.next();
          if (!owned.test(p.shard) && outbox.remove(p)) {
            back.add(p);
          }
        }
      } finally {
        draining.set(false);
      }
      back.forEach(p -> callback.resolved(p, true));
      if (!outbox.isEmpty()) {
        Stream s = stream;
        writes.request(s == null ? null : s.loop);
      }
    }
    // A pod that answered anything within the grace is alive and answering in order: what it holds
    // is answered in time (handled, or refused as not owned and sent again), so nothing is given up.
    boolean silent = now - lastHeardNanos >= graceNanos;
    List<Pending> lost = new ArrayList<>();
    for (Map.Entry<Long, Pending> e : inflight.entrySet()) {
      Pending p = e.getValue();
      long id = e.getKey();
      if (owned.test(p.shard)) {
        p.movedSeenEnvelope = -1;
      } else if (p.movedSeenEnvelope != id) {
        p.movedSeenEnvelope = id; // first seen moved under this envelope
        p.movedSeenAt = now;
      } else if (silent && now - p.movedSeenAt >= graceNanos && inflight.remove(id, p)) {
        lost.add(p);
      }
    }
    failUnknown(lost, p -> "shard " + p.shard + " moved from pod " + peer + " to another while " + p.describe()
        + " was unanswered there; it may or may not have been handled");
  }

  /**
   * Fails {@code lost} (taken out of {@code inflight}) as outcome unknown, with {@code why} each,
   * and frees their routes; on a thread of its own, since failing a future runs its callers'
   * continuations, and the sweeps that call this run on the pod's timer.
   */
  private void failUnknown(List<Pending> lost, java.util.function.Function<Pending, String> why) {
    if (lost.isEmpty()) {
      return;
    }
    Thread.ofVirtual().name("atoll-outcome-unknown").start(() -> {
      for (Pending p : lost) {
        p.failWith(new DeliveryException(DeliveryException.Reason.OUTCOME_UNKNOWN, why.apply(p)));
        callback.resolved(p, false);
      }
    });
  }

  /** Sends nothing more: queued messages go back to their routes; answers still arrive. */
  void stopSending() {
    retiring = true;
    bounceOutbox();
  }

  /** Closes the stream and channel; messages still queued go back to their routes. */
  void close() {
    closed = true;
    Stream s = stream;
    if (s != null && s.call != null) {
      try {
        s.call.onCompleted();
      } catch (RuntimeException e) {
        // already gone
      }
    }
    bounceOutbox();
    Wire.close(channel);
  }

  /** Whether messages wait to be written to this pod. */
  boolean hasQueued() {
    return !outbox.isEmpty();
  }

  /** How many messages are in flight to this pod. */
  int inflight() {
    return inflight.size();
  }

  private final class Stream implements ClientResponseObserver<DeliverBatch, ReplyBatch> {
    final int generation;
    ClientCallStreamObserver<DeliverBatch> call;
    volatile java.util.concurrent.Executor loop;
    volatile boolean ready;
    volatile boolean dead;

    Stream(int generation) {
      this.generation = generation;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<DeliverBatch> requestStream) {
      this.call = requestStream;
      requestStream.setOnReadyHandler(PeerClient.this::drain);
    }

    @Override
    public void onNext(ReplyBatch batch) {
      lastHeardNanos = ticker.nanoTime();
      if (!ready) {
        loop = Wire.currentEventLoop(); // replies arrive on the stream's event loop
        ready = true;
        backoffNanos = 0;
        drain();
      }
      for (int i = 0, n = batch.getRepliesCount(); i < n; i++) {
        onReply(batch.getReplies(i));
      }
    }

    @Override
    public void onError(Throwable t) {
      onDead(this, t);
    }

    @Override
    public void onCompleted() {
      onDead(this, null);
    }
  }
}

package io.atoll.runtime.internal.host;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.atoll.core.ClusterConfig;
import io.atoll.core.EntityAddress;
import io.atoll.core.ShardHasher;
import io.atoll.core.PodEntry;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.internal.cluster.View;
import io.atoll.runtime.internal.codec.FailureCodes;
import io.atoll.runtime.internal.codec.ReplyBinding;
import io.atoll.runtime.internal.util.GuardedBy;
import io.atoll.runtime.internal.util.LoopDrain;
import io.atoll.runtime.PodSettings;
import io.atoll.runtime.internal.util.Scheduler;
import io.atoll.core.Ticker;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.DeliverBatch;
import io.atoll.transport.grpc.proto.Envelope;
import io.atoll.transport.grpc.proto.Failure;
import io.atoll.transport.grpc.proto.NotOwner;
import io.atoll.transport.grpc.proto.Reply;
import io.atoll.transport.grpc.proto.ReplyBatch;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The receiving end of one sending pod's Deliver stream. Checks every envelope at this pod's own
 * config epoch and queues it in its entity's mailbox, or answers at once (not the owner, unknown
 * type, malformed, too large, undecodable). Replies are batched back on the stream by whichever
 * thread finds the queue unattended.
 *
 * <p>Once it refuses a shard it keeps refusing that shard's envelopes on this stream until one
 * arrives marked {@code resume}: the sender resends refused messages in order, and a later
 * message must not be handled before an earlier refused one.
 *
 * <p><b>Inbound flow control.</b> The stream asks gRPC for one batch at a time, and only while
 * its backlog is under bound: at most {@link #MAX_QUEUED} of its envelopes (and
 * {@link #MAX_QUEUED_BYTES} of their payloads) waiting in mailboxes, and at most
 * {@link #MAX_UNSENT} replies not yet written. Above that it stops reading; HTTP/2 flow control
 * then holds the sender back, so a fast or misbehaving sender cannot grow this pod's memory
 * without bound. It reads again once the backlog is under half of each bound.
 *
 * <p><b>No head-of-line blocking.</b> One entity's mailbox holds at most half of
 * {@link #MAX_QUEUED} (more are refused as overloaded, see {@code EntityHost}), so an entity whose
 * handler blocks cannot stop the stream alone. And while the stream is stopped, every envelope
 * whose deadline passes in its mailbox is answered TIMEOUT and leaves the backlog at once, not
 * when a drain that may be blocked reaches it: blocked entities hold the stream for at most one
 * deadline. An envelope a drain took is never expired, so TIMEOUT from here means not handled.
 *
 * <p><b>Why one class of some 430 lines.</b> The backlog counters, the pause flag, the expiry
 * sweep and the reply writer are the state of one stream: the writer's unsent count is one of the
 * bounds that pause reading, every part resumes reading when its count falls, and all of them stop
 * on the one {@code closed} flag that a failed write, a cancel or a foreign sender sets. Split,
 * each part would hold the others' counters. Delivery into entities is {@link EntityHost}'s, an
 * envelope's answer {@link InboundDelivery}'s.
 */
public final class InboundStream implements StreamObserver<DeliverBatch> {

  private static final int MAX_REPLIES_PER_BATCH = 512;
  /**
   * Replies of one batch stop adding up here. A reply is at most the pod's largest message (at most
   * 16 MiB), so a batch stays under {@link Wire#MAX_GRPC_MESSAGE_BYTES} and a burst of large
   * answers never makes one gRPC message the receiver refuses (which would end the whole stream).
   */
  static final int MAX_REPLY_BATCH_BYTES = 4 << 20;
  /** Envelopes of one stream in mailboxes, not yet handled, above which it stops reading. */
  static final int MAX_QUEUED = 4096;
  /** Their payload bytes, above which it stops reading. */
  static final long MAX_QUEUED_BYTES = 32L << 20;
  /** Replies not yet written (the sender reads slowly), above which it stops reading. */
  static final int MAX_UNSENT = 4096;

  private final PodSettings settings;
  private final Ticker ticker;
  private final View view;
  private final EntityHost host;
  private final ServerCallStreamObserver<ReplyBatch> out;
  private final ConcurrentLinkedQueue<Reply> replies = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean draining = new AtomicBoolean();
  private final Set<Integer> refused = ConcurrentHashMap.newKeySet();
  /**
   * How far beyond this pod's layout a shard may be and still be refused as not ours yet (a space
   * appended that this pod has not heard of): the manager's most shards, which also bounds
   * {@link #refused}.
   */
  static final int MAX_SHARDS_AHEAD = 1 << 16;
  private volatile boolean closed;
  private final AtomicInteger queued = new AtomicInteger();
  private final AtomicLong queuedBytes = new AtomicLong();
  private final AtomicInteger unsent = new AtomicInteger();
  /** Set while reading is stopped for the backlog; whoever clears it asks for the next batch. */
  private final AtomicBoolean paused = new AtomicBoolean();

  private final java.util.concurrent.Executor loop;
  private final TransitClock transit = new TransitClock();
  private final Scheduler scheduler;
  /** Envelopes in the backlog, oldest first: the ones an expiry sweep looks at. */
  @GuardedBy("outstandingLock")
  private InboundDelivery first;
  @GuardedBy("outstandingLock")
  private InboundDelivery last;
  private final Object outstandingLock = new Object();
  /** Set while a sweep is due; whoever clears it may schedule the next. */
  private final AtomicBoolean sweepDue = new AtomicBoolean();

  /** The receiving end of a Deliver call that just began, on {@code out}'s event loop. */
  public InboundStream(PodSettings settings, Ticker ticker, Scheduler scheduler, View view, EntityHost host,
      ServerCallStreamObserver<ReplyBatch> out) {
    this.settings = settings;
    this.ticker = ticker;
    this.scheduler = scheduler;
    this.view = view;
    this.host = host;
    this.out = out;
    this.loop = Wire.currentEventLoop(); // calls begin on the event loop of their connection
    out.disableAutoRequest();
    out.setOnReadyHandler(this::drain);
    out.setOnCancelHandler(() -> closed = true);
    // The hello: tells the sender the stream is open, so that whatever it sends from now on has
    // surely reached this pod, and a broken stream means "outcome unknown", not "never sent".
    out.onNext(ReplyBatch.getDefaultInstance());
    out.request(1);
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public void onNext(DeliverBatch batch) {
    String sender = batch.getClusterId();
    if (!sender.isEmpty() && !sender.equals(view.clusterId().toString())) {
      // A pod of another cluster (a reused address): none of its envelopes is handled here.
      closeForeign(sender);
      return;
    }
    long now = ticker.nanoTime();
    long delay = transit.delay(batch.getSenderClockNanos(), now);
    for (int i = 0, n = batch.getEnvelopesCount(); i < n; i++) {
      receive(batch.getEnvelopes(i), now, delay);
    }
    if (underBound(1)) {
      out.request(1);
      return;
    }
    paused.set(true);
    resumeIfUnder(); // what left the backlog meanwhile found the stream not yet paused
    scheduleSweep(false, ticker.nanoTime());
  }

  /**
   * While the stream is paused, expires the backlog's envelopes as their deadlines pass. Right after
   * a sweep, envelopes already past their deadline are being handled (a drain took them): they
   * leave when their handler returns, so no sweep waits for them.
   */
  private void scheduleSweep(boolean afterSweep, long now) {
    if (closed || !paused.get() || !sweepDue.compareAndSet(false, true)) {
      return;
    }
    long next = Long.MAX_VALUE;
    synchronized (outstandingLock) {
      for (InboundDelivery d = first; d != null; d = d.nextOut) {
        long left = d.deadlineNanos - now;
        if (left > 0 || !afterSweep) {
          next = Math.min(next, left);
        }
      }
    }
    if (next == Long.MAX_VALUE) {
      sweepDue.set(false); // nothing waits: whatever leaves next resumes the stream
      resumeIfUnder();
      return;
    }
    scheduler.schedule(this::sweep, Math.max(0, next - (ticker.nanoTime() - now)));
  }

  private void sweep() {
    sweepDue.set(false);
    if (closed) {
      return;
    }
    long now = ticker.nanoTime();
    java.util.List<InboundDelivery> expired = new java.util.ArrayList<>();
    synchronized (outstandingLock) {
      for (InboundDelivery d = first; d != null; d = d.nextOut) {
        if (now - d.deadlineNanos >= 0) {
          expired.add(d);
        }
      }
    }
    for (InboundDelivery d : expired) {
      d.expire(now); // leaves the backlog unless a drain took it meanwhile
    }
    resumeIfUnder();
    scheduleSweep(true, now);
  }

  /** Whether the backlog is under each bound divided by {@code divisor}. */
  private boolean underBound(int divisor) {
    return queued.get() < MAX_QUEUED / divisor && queuedBytes.get() < MAX_QUEUED_BYTES / divisor
        && unsent.get() < MAX_UNSENT / divisor;
  }

  private void resumeIfUnder() {
    if (paused.get() && underBound(2) && paused.compareAndSet(true, false) && !closed) {
      try {
        out.request(1);
      } catch (RuntimeException e) {
        closed = true; // the call is gone
      }
    }
  }

  /** Delivery {@code d} of {@code bytes} left the backlog (handled, failed, expired or bounced). */
  void left(InboundDelivery d, int bytes) {
    synchronized (outstandingLock) {
      if (d.prevOut == null) {
        first = d.nextOut;
      } else {
        d.prevOut.nextOut = d.nextOut;
      }
      if (d.nextOut == null) {
        last = d.prevOut;
      } else {
        d.nextOut.prevOut = d.prevOut;
      }
      d.prevOut = null;
      d.nextOut = null;
    }
    queued.decrementAndGet();
    queuedBytes.addAndGet(-bytes);
    resumeIfUnder();
  }

  /** Whether this stream stopped reading because of its backlog (for tests). */
  boolean paused() {
    return paused.get();
  }

  private void receive(Envelope env, long now, long delay) {
    long id = env.getId();
    TypeRuntime t = host.hostedType(env.getEntityType());
    if (t == null) {
      failure(id, DeliveryException.Reason.UNKNOWN_ENTITY_TYPE, "pod " + view.self() + " hosts no entity type '"
          + clip(env.getEntityType()) + "' (it hosts: " + host.hostedTypeNames() + ")");
      return;
    }
    String entityId = env.getEntityId();
    if (entityId.isEmpty() || entityId.length() > EntityAddress.MAX_ID_LENGTH) {
      failure(id, DeliveryException.Reason.BAD_REQUEST, "entity id: length " + entityId.length()
          + " (expected: 1.." + EntityAddress.MAX_ID_LENGTH + ")");
      return;
    }
    int n = view.numberOfShards();
    int shard = env.getShard();
    if (shard < 1 || shard > n + MAX_SHARDS_AHEAD) {
      failure(id, DeliveryException.Reason.BAD_REQUEST, "shard: " + shard + " (expected: 1.." + n
          + ", or a shard of spaces appended since, at most " + MAX_SHARDS_AHEAD + " beyond)");
      return;
    }
    if (shard > n) {
      // The sender's layout has a space appended that this pod has not heard of yet (a push can
      // reach the sender first): not ours yet, so the sender retries, as for any claim not seen here.
      notOwner(id, shard);
      return;
    }
    ShardHasher hasher = t.hasher(settings.hasher()); // the type's own, else the pod's
    int expected = view.spaces().isSingle() && t.role.isEmpty() ? hasher.shardOf(entityId, n)
        : view.spaces().shardOf(hasher, t.role, entityId);
    if (shard != expected) {
      failure(id, DeliveryException.Reason.BAD_REQUEST, "entity " + t.name + "/" + clip(entityId)
          + " is in shard " + expected + " on pod " + view.self() + ", the sender said " + shard
          + " (expected: every pod uses the same number of shards, the same hasher and the same role for the"
          + " type; here it is on " + (t.role.isEmpty() ? "the default role" : "role '" + t.role + "'") + " with "
          + (t.hasher != null ? "its own hasher " + t.hasher.getClass().getName() : "the pod's hasher") + ")");
      return;
    }
    ByteString payload = env.getPayload();
    if (payload.size() > settings.maxMessageBytes()) {
      failure(id, DeliveryException.Reason.MESSAGE_TOO_LARGE, "message to " + t.name + "/" + clip(entityId)
          + ": " + payload.size() + " bytes (expected: <= " + settings.maxMessageBytes() + ")");
      return;
    }
    if (env.getResume()) {
      refused.remove(shard);
    } else if (!refused.isEmpty() && refused.contains(shard)) {
      notOwner(id, shard);
      return;
    }
    if (!host.accepts(shard)) {
      notOwner(id, shard);
      return;
    }
    long deadline = now - delay + (env.getDeadlineMillis() > 0
        ? TimeUnit.MILLISECONDS.toNanos(env.getDeadlineMillis())
        : settings.sendTimeout().toNanos());
    if (deadline - now <= 0) {
      failure(id, DeliveryException.Reason.TIMEOUT, "message to " + t.name + "/" + clip(entityId) + " reached pod "
          + view.self() + " " + TimeUnit.NANOSECONDS.toMillis(delay) + " ms late, after its sender's deadline;"
          + " it was not handled");
      return;
    }
    InboundDelivery d = new InboundDelivery(this, id, env.getAsk(), deadline, t, shard, entityId, payload.size());
    synchronized (outstandingLock) {
      d.prevOut = last;
      if (last == null) {
        first = d;
      } else {
        last.nextOut = d;
      }
      last = d;
    }
    queued.incrementAndGet(); // from here on every path ends in the delivery leaving: left()
    queuedBytes.addAndGet(payload.size());
    try {
      Object msg = ReplyBinding.decode(t.codec, payload.toByteArray(), d);
      if (!t.type.messageClass().isInstance(msg)) {
        throw new IllegalArgumentException("decoded a " + msg.getClass().getName() + " (expected: a "
            + t.type.messageClass().getName() + ")");
      }
      d.message = msg;
    } catch (RuntimeException e) {
      d.failed(new DeliveryException(DeliveryException.Reason.CODEC, "message to " + t.name + "/"
          + clip(entityId) + " could not be decoded on pod " + view.self() + ": " + e.getMessage()));
      return;
    }
    if (!host.deliverRemote(shard, t, entityId, d)) {
      d.bounce();
    }
  }

  private static String clip(String s) {
    return s.length() <= 64 ? s : s.substring(0, 64) + "...";
  }

  // ---- replies

  void accepted(long id) {
    enqueue(Reply.newBuilder().setId(id).setAccepted(true).build());
  }

  /** The largest answer this stream carries. */
  int maxReplyBytes() {
    return settings.maxMessageBytes();
  }

  void value(long id, byte[] bytes) {
    enqueue(Reply.newBuilder().setId(id).setValue(UnsafeByteOperations.unsafeWrap(bytes)).build());
  }

  void failure(long id, DeliveryException.Reason reason, String message) {
    failure(id, reason, message, 0);
  }

  /** As {@link #failure(long, DeliveryException.Reason, String)}, with a retry hint (0: none). */
  void failure(long id, DeliveryException.Reason reason, String message, long retryAfterMillis) {
    enqueue(Reply.newBuilder().setId(id).setFailure(Failure.newBuilder().setCode(FailureCodes.toWire(reason))
        .setMessage(message).setRetryAfterMillis(Math.max(0, retryAfterMillis))).build());
  }

  void notOwner(long id, int shard) {
    refused.add(shard);
    ClusterConfig config = view.config();
    if (shard > config.size()) { // a shard of a space this view has not grown to yet: nothing known of it
      refused.add(shard); // as below: later messages of the shard wait for the sender's resume, in order
      enqueue(Reply.newBuilder().setId(id).setNotOwner(NotOwner.newBuilder().setShard(shard)).build());
      return;
    }
    NotOwner.Builder no = NotOwner.newBuilder().setShard(shard).setEpoch(config.epoch(shard - 1));
    PodEntry owner = config.ownerEntry(shard - 1);
    if (owner != null && EntityHost.active(owner)) {
      no.setOwner(Wire.ref(owner.id()));
    }
    enqueue(Reply.newBuilder().setId(id).setNotOwner(no).build());
  }

  private void enqueue(Reply r) {
    if (closed) {
      return;
    }
    unsent.incrementAndGet();
    replies.add(r);
    writes.request(loop);
  }

  private final LoopDrain writes = new LoopDrain(this::drain);

  private void drain() {
    while (!closed && !replies.isEmpty() && out.isReady() && draining.compareAndSet(false, true)) {
      try {
        ReplyBatch.Builder b = ReplyBatch.newBuilder();
        Reply r;
        int n = 0;
        long bytes = 0;
        while (n < MAX_REPLIES_PER_BATCH && bytes < MAX_REPLY_BATCH_BYTES && (r = replies.poll()) != null) {
          b.addReplies(r);
          n++;
          bytes += r.getSerializedSize() + 8;
        }
        if (n > 0) {
          out.onNext(b.build());
          unsent.addAndGet(-n);
        }
      } catch (RuntimeException e) {
        closed = true; // the call is gone
      } finally {
        draining.set(false);
      }
    }
    if (closed) {
      replies.clear();
    } else {
      resumeIfUnder();
    }
  }

  /** Ends the stream with FAILED_PRECONDITION: the sender belongs to another cluster. */
  private void closeForeign(String sender) {
    if (closed) {
      return;
    }
    closed = true;
    while (!draining.compareAndSet(false, true)) {
      Thread.onSpinWait(); // a drain in progress sees closed and lets go: one writer at a time
    }
    try {
      out.onError(io.grpc.Status.FAILED_PRECONDITION.withDescription("envelopes from cluster " + sender
          + " refused: pod " + view.self() + " belongs to cluster " + view.clusterId()
          + " (expected: the same)").asRuntimeException());
    } catch (RuntimeException e) {
      // already closed
    } finally {
      draining.set(false);
    }
  }

  @Override
  public void onError(Throwable t) {
    closed = true;
  }

  @Override
  public void onCompleted() {
    closed = true;
    try {
      out.onCompleted();
    } catch (RuntimeException e) {
      // already closed
    }
  }
}

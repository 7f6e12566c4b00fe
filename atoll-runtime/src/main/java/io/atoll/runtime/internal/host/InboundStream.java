package io.atoll.runtime.internal.host;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.atoll.core.ClusterConfig;
import io.atoll.core.EntityAddress;
import io.atoll.core.PodEntry;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.internal.cluster.View;
import io.atoll.runtime.internal.codec.FailureCodes;
import io.atoll.runtime.internal.codec.ReplyBinding;
import io.atoll.runtime.internal.util.LoopDrain;
import io.atoll.runtime.internal.util.PodSettings;
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

/**
 * The receiving end of one sending pod's Deliver stream. Checks every envelope at this pod's own
 * config epoch and queues it in its entity's mailbox, or answers at once (not the owner, unknown
 * type, malformed, too large, undecodable). Replies are batched back on the stream by whichever
 * thread finds the queue unattended.
 *
 * <p>Once it refuses a shard it keeps refusing that shard's envelopes on this stream until one
 * arrives marked {@code resume}: the sender resends refused messages in order, and a later
 * message must not be handled before an earlier refused one.
 */
public final class InboundStream implements StreamObserver<DeliverBatch> {

  private static final int MAX_REPLIES_PER_BATCH = 512;

  private final PodSettings settings;
  private final Ticker ticker;
  private final View view;
  private final EntityHost host;
  private final ServerCallStreamObserver<ReplyBatch> out;
  private final ConcurrentLinkedQueue<Reply> replies = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean draining = new AtomicBoolean();
  private final Set<Integer> refused = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private final java.util.concurrent.Executor loop;

  /** The receiving end of a Deliver call that just began, on {@code out}'s event loop. */
  public InboundStream(PodSettings settings, Ticker ticker, View view, EntityHost host,
      ServerCallStreamObserver<ReplyBatch> out) {
    this.settings = settings;
    this.ticker = ticker;
    this.view = view;
    this.host = host;
    this.out = out;
    this.loop = Wire.currentEventLoop(); // calls begin on the event loop of their connection
    out.setOnReadyHandler(this::drain);
    out.setOnCancelHandler(() -> closed = true);
    // The hello: tells the sender the stream is open, so that whatever it sends from now on has
    // surely reached this pod, and a broken stream means "outcome unknown", not "never sent".
    out.onNext(ReplyBatch.getDefaultInstance());
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
    for (int i = 0, n = batch.getEnvelopesCount(); i < n; i++) {
      receive(batch.getEnvelopes(i));
    }
  }

  private void receive(Envelope env) {
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
    if (shard < 1 || shard > n) {
      failure(id, DeliveryException.Reason.BAD_REQUEST, "shard: " + shard + " (expected: 1.." + n + ")");
      return;
    }
    int expected = settings.hasher().shardOf(entityId, n);
    if (shard != expected) {
      failure(id, DeliveryException.Reason.BAD_REQUEST, "entity " + t.name + "/" + clip(entityId)
          + " is in shard " + expected + " on pod " + view.self() + ", the sender said " + shard
          + " (expected: every pod uses the same number of shards and the same hasher)");
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
    long now = ticker.nanoTime();
    long deadline = now + (env.getDeadlineMillis() > 0
        ? TimeUnit.MILLISECONDS.toNanos(env.getDeadlineMillis())
        : settings.sendTimeout().toNanos());
    InboundDelivery d = new InboundDelivery(this, id, env.getAsk(), deadline, t, shard, entityId);
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

  void value(long id, byte[] bytes) {
    enqueue(Reply.newBuilder().setId(id).setValue(UnsafeByteOperations.unsafeWrap(bytes)).build());
  }

  void failure(long id, DeliveryException.Reason reason, String message) {
    enqueue(Reply.newBuilder().setId(id)
        .setFailure(Failure.newBuilder().setCode(FailureCodes.toWire(reason)).setMessage(message)).build());
  }

  void notOwner(long id, int shard) {
    refused.add(shard);
    ClusterConfig config = view.config();
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
        while (n < MAX_REPLIES_PER_BATCH && (r = replies.poll()) != null) {
          b.addReplies(r);
          n++;
        }
        if (n > 0) {
          out.onNext(b.build());
        }
      } catch (RuntimeException e) {
        closed = true; // the call is gone
      } finally {
        draining.set(false);
      }
    }
    if (closed) {
      replies.clear();
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

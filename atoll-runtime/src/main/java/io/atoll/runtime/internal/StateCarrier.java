package io.atoll.runtime.internal;

import com.google.protobuf.ByteString;
import io.atoll.core.PodId;
import io.atoll.runtime.internal.cluster.PeerChannels;
import io.atoll.runtime.internal.host.Left;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.CarriedEntity;
import io.atoll.transport.grpc.proto.CarryStateRequest;
import io.atoll.transport.grpc.proto.CarryStateResponse;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends what released durable activations left to their shards' next owners, before the pod
 * answers the manager's Unassign, so the new owner holds it before the claim reaches it. Best
 * effort within {@link #DEADLINE_MILLIS}: a state that does not arrive in time costs the new owner
 * a read of the store, nothing else (a late one is refused there). Requests of at most
 * {@link #MAX_REQUEST_BYTES}; a single state larger than that is not carried.
 */
final class StateCarrier {

  private static final Logger log = LoggerFactory.getLogger(StateCarrier.class);

  /** How long all the carries of one Unassign may take, within the slack the manager leaves it. */
  static final long DEADLINE_MILLIS = 1000;

  /** The most bytes of states, with their ids, in one request (well under the transport's bound). */
  static final int MAX_REQUEST_BYTES = 4 << 20;

  /** What an entity costs a request besides its state and strings (field tags, lengths, revision). */
  private static final int ENTITY_OVERHEAD = 32;

  private final PeerChannels peers;
  private final java.util.function.Supplier<PodId> selfNow;

  /**
   * @param peers the channels to other pods
   * @param self this pod's identity now (a new incarnation changes it)
   */
  StateCarrier(PeerChannels peers, java.util.function.Supplier<PodId> self) {
    this.peers = peers;
    this.selfNow = self;
  }

  /**
   * Carries {@code left} to each shard's target named in {@code unassign} (none to this pod or to
   * a shard without a target), returning once every request was answered or the deadline passed:
   * {@link #DEADLINE_MILLIS}, or {@code budgetMillis} if less (what the manager's deadline for the
   * Unassign leaves; nothing is sent without some).
   *
   * @return how many states the targets said they kept
   */
  int carry(UnassignRequest unassign, Map<Integer, List<Left>> left, long budgetMillis) {
    long deadlineMillis = Math.min(DEADLINE_MILLIS, budgetMillis);
    if (left.isEmpty() || unassign.getTargetsCount() != unassign.getShardsCount() || deadlineMillis <= 0) {
      return 0;
    }
    PodId self = selfNow.get();
    AtomicInteger kept = new AtomicInteger();
    List<CompletableFuture<Void>> sent = new ArrayList<>();
    for (int i = 0; i < unassign.getShardsCount(); i++) {
      int shard = unassign.getShards(i);
      List<Left> states = left.get(shard);
      if (states == null || states.isEmpty()) {
        continue;
      }
      PodId target = Wire.podId(unassign.getTargets(i));
      if (target.equals(self)) {
        continue;
      }
      for (CarryStateRequest r : requests(unassign, self, shard, states)) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        sent.add(f);
        try {
          PodServiceGrpc.newStub(peers.channel(target)).withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS)
              .carryState(r, new StreamObserver<>() {
                @Override
                public void onNext(CarryStateResponse value) {
                  kept.addAndGet(value.getKept());
                }

                @Override
                public void onError(Throwable t) {
                  log.debug("pod {}: carrying {} states of shard {} to {} failed (it reads the store): {}", self,
                      r.getEntitiesCount(), shard, target, t.toString());
                  f.complete(null);
                }

                @Override
                public void onCompleted() {
                  f.complete(null);
                }
              });
        } catch (RuntimeException e) {
          f.complete(null); // a channel that cannot be made: the new owner reads the store
        }
      }
    }
    try {
      CompletableFuture.allOf(sent.toArray(new CompletableFuture<?>[0]))
          .get(deadlineMillis + 100, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
      // the deadlines end them; the states not answered for cost a read
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return kept.get();
  }

  /** {@code states} of {@code shard} in requests of at most {@link #MAX_REQUEST_BYTES} of state each. */
  private static List<CarryStateRequest> requests(UnassignRequest unassign, PodId self, int shard, List<Left> states) {
    List<CarryStateRequest> out = new ArrayList<>();
    CarryStateRequest.Builder b = null;
    long bytes = 0;
    for (Left l : states) {
      long size = ENTITY_OVERHEAD + 3L * (l.type().length() + l.id().length())
          + (l.state().bytes() == null ? 0 : l.state().bytes().length);
      if (size > MAX_REQUEST_BYTES || size - ENTITY_OVERHEAD > io.atoll.core.spi.StateStore.MAX_STATE_BYTES) {
        continue; // too large to carry: read from the store
      }
      if (b == null || bytes + size > MAX_REQUEST_BYTES) {
        if (b != null) {
          out.add(b.build());
        }
        b = CarryStateRequest.newBuilder().setUnassign(unassign).setFrom(Wire.ref(self)).setShard(shard);
        bytes = 0;
      }
      CarriedEntity.Builder e = CarriedEntity.newBuilder().setEntityType(l.type()).setEntityId(l.id())
          .setRevision(l.state().revision());
      if (l.state().bytes() != null) {
        e.setState(ByteString.copyFrom(l.state().bytes()));
      }
      b.addEntities(e);
      bytes += size;
    }
    if (b != null) {
      out.add(b.build());
    }
    return out;
  }
}

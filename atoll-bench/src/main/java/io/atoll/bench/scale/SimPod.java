package io.atoll.bench.scale;

import com.google.protobuf.ByteString;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GossipRequest;
import io.atoll.transport.grpc.proto.GossipResponse;
import io.atoll.transport.grpc.proto.PingRequest;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodInfo;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.PushConfigResponse;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RegisterResponse;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.RenewLeaseResponse;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.atoll.transport.grpc.proto.UnassignResponse;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.grpc.BindableService;
import io.grpc.Context;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A simulated pod: a gRPC server on its own port answering the manager's Ping, Unassign (every
 * shard released at once: no entities) and PushConfig, and a client of the manager that registers,
 * renews its lease every third of it and watches configs, counting every config's bytes it gets.
 * Killing it closes its server and stops its renewals, as a process that died. Thread-safe.
 */
final class SimPod extends PodServiceGrpc.PodServiceImplBase {

  private final SimFleet fleet;
  private final Server server;
  private final PodId id;
  private final PodInfo info;
  private final AtomicLong configBytes = new AtomicLong();
  private volatile long epoch = -1;
  private volatile ByteString credential = ByteString.EMPTY;
  private volatile long renewedAt;
  private volatile boolean dead;
  private volatile Context.CancellableContext watch;
  private volatile ScheduledFuture<?> renewals;

  SimPod(SimFleet fleet, Random random) {
    this.fleet = fleet;
    this.server = Wire.startServer("127.0.0.1", 0, List.<BindableService>of(this));
    this.id = new PodId(new PodAddress("127.0.0.1", Wire.port(server)), random.nextLong());
    this.info = PodInfo.newBuilder().setPod(Wire.ref(id)).setVersion("1").build();
  }

  PodId id() {
    return id;
  }

  /** The newest config epoch it holds; -1 before the first. */
  long epoch() {
    return epoch;
  }

  /** Bytes of configs it has received (register, watch, pushes). */
  long configBytes() {
    return configBytes.get();
  }

  boolean dead() {
    return dead;
  }

  /** Registers (blocking, up to 60 s), then watches configs and renews its lease. */
  void register() {
    RegisterResponse r = fleet.blockingStub().withDeadlineAfter(60, TimeUnit.SECONDS)
        .register(RegisterRequest.newBuilder().setPod(info).build());
    credential = r.getCredential();
    renewedAt = System.nanoTime();
    received(r.getConfig());
    watch();
    long period = Math.max(1, fleet.lease().toMillis() / 3);
    renewals = fleet.timer().scheduleAtFixedRate(this::renew, period, period, TimeUnit.MILLISECONDS);
  }

  private void watch() {
    Context.CancellableContext c = Context.current().withCancellation();
    watch = c;
    c.run(() -> fleet.stub().watch(WatchRequest.newBuilder().setPod(Wire.ref(id)).build(),
        new StreamObserver<ConfigBytes>() {
          @Override
          public void onNext(ConfigBytes b) {
            received(b);
          }

          @Override
          public void onError(Throwable t) {
            if (!dead) {
              fleet.timer().schedule(SimPod.this::watch, 1, TimeUnit.SECONDS); // watch again, as a pod does
            }
          }

          @Override
          public void onCompleted() {
            onError(null);
          }
        }));
  }

  private void renew() {
    if (dead) {
      return;
    }
    long sent = System.nanoTime();
    fleet.stub().withDeadlineAfter(fleet.lease().toMillis() / 3, TimeUnit.MILLISECONDS).renewLease(
        RenewLeaseRequest.newBuilder().setPod(Wire.ref(id)).setCredential(credential).build(),
        new StreamObserver<RenewLeaseResponse>() {
          @Override
          public void onNext(RenewLeaseResponse r) {
            if (r.getStatus() == RenewLeaseResponse.Status.UNKNOWN_POD) {
              fleet.unknownPod();
            } else {
              renewedAt = sent;
            }
          }

          @Override
          public void onError(Throwable t) {
            // the next period tries again
          }

          @Override
          public void onCompleted() {
          }
        });
  }

  private void received(ConfigBytes b) {
    configBytes.addAndGet(b.getSerializedSize());
    long e = fleet.epochOf(b);
    synchronized (this) {
      if (e <= epoch) {
        return;
      }
      // A pod's first config counts for that config only: the ones before it were not its to get.
      long from = epoch < 0 ? e - 1 : epoch;
      epoch = e;
      fleet.arrived(from, e, System.nanoTime());
    }
  }

  /** Dies: no more renewals, its watch cancelled, its server closed (its port refuses). */
  void kill() {
    dead = true;
    ScheduledFuture<?> r = renewals;
    if (r != null) {
      r.cancel(false);
    }
    Context.CancellableContext w = watch;
    if (w != null) {
      w.cancel(null);
    }
    server.shutdownNow();
  }

  @Override
  public void ping(PingRequest request, StreamObserver<PingResponse> out) {
    out.onNext(PingResponse.newBuilder().setPod(info).setConfigEpoch(epoch).setServing(!dead)
        .setLeaseRenewedMillisAgo((System.nanoTime() - renewedAt) / 1_000_000).build());
    out.onCompleted();
  }

  @Override
  public void unassign(UnassignRequest request, StreamObserver<UnassignResponse> out) {
    out.onNext(UnassignResponse.newBuilder().addAllReleased(request.getShardsList()).build());
    out.onCompleted();
  }

  @Override
  public void pushConfig(ConfigBytes request, StreamObserver<PushConfigResponse> out) {
    received(request);
    out.onNext(PushConfigResponse.newBuilder().setEpoch(epoch).build());
    out.onCompleted();
  }

  @Override
  public void gossip(GossipRequest request, StreamObserver<GossipResponse> out) {
    out.onNext(GossipResponse.newBuilder().setEpoch(epoch).build());
    out.onCompleted();
  }
}

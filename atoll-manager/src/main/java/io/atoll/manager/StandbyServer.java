package io.atoll.manager;

import io.atoll.core.PodAddress;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.transport.grpc.LeaderHint;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodRequest;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodResponse;
import io.atoll.transport.grpc.proto.RebalanceRequest;
import io.atoll.transport.grpc.proto.RebalanceResponse;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RegisterResponse;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.RenewLeaseResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnregisterRequest;
import io.atoll.transport.grpc.proto.UnregisterResponse;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What a standby manager serves while another one leads: its address answers every pod call with
 * "not the leading shard manager; the leader is at X" ({@link LeaderHint}), so that pods given
 * every manager address find the leader, and a connection to a standby is never refused (a refused
 * connection is what lets pods ride out a manager that is down). The leader's address is the
 * holder name of the store's live lease ({@code host:port}), read at most every 250 ms.
 *
 * <p>Closed before the standby starts leading on the same port. Thread-safe.
 */
public final class StandbyServer implements AutoCloseable {

  private static final long CACHE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  private final Server server;
  private final PodAddress address;

  private StandbyServer(Server server, PodAddress address) {
    this.server = server;
    this.address = address;
  }

  /**
   * Listens on {@code host:port} ({@code port} 0 picks one).
   *
   * @param leader who leads now (the store's {@link AssignmentStore#leader()}); may throw
   * @throws java.io.UncheckedIOException if the address cannot be bound
   */
  public static StandbyServer start(String host, int port, Supplier<Optional<AssignmentStore.Leader>> leader) {
    return start(host, port, leader, WireSecurity.PLAINTEXT);
  }

  /**
   * As {@link #start(String, int, Supplier)}, secured as the manager is ({@code security}: with
   * TLS, pods of a secure cluster reach it and get their hint, and nobody else does).
   */
  public static StandbyServer start(String host, int port, Supplier<Optional<AssignmentStore.Leader>> leader,
      WireSecurity security) {
    Server s = Wire.startServer(host, port, List.<BindableService>of(new Refusing(leader)), security);
    return new StandbyServer(s, new PodAddress(host, Wire.port(s)));
  }

  /** Where it listens. */
  public PodAddress address() {
    return address;
  }

  /** Stops listening and waits up to five seconds for the port to be free. */
  @Override
  public void close() {
    server.shutdownNow();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Answers every call with the refusal. */
  private static final class Refusing extends ShardManagerServiceGrpc.ShardManagerServiceImplBase {
    private final Supplier<Optional<AssignmentStore.Leader>> leader;
    private long readAt;
    private boolean read;
    private Optional<AssignmentStore.Leader> cached = Optional.empty();

    Refusing(Supplier<Optional<AssignmentStore.Leader>> leader) {
      this.leader = leader;
    }

    private synchronized Optional<AssignmentStore.Leader> leader() {
      long now = System.nanoTime();
      if (!read || now - readAt > CACHE_NANOS) {
        try {
          cached = leader.get();
        } catch (RuntimeException e) {
          cached = Optional.empty(); // the store is away: no hint
        }
        read = true;
        readAt = now;
      }
      return cached;
    }

    private void refuse(StreamObserver<?> out) {
      Optional<AssignmentStore.Leader> l = leader();
      Optional<PodAddress> at = l.flatMap(x -> {
        try {
          return Optional.of(PodAddress.parse(x.holder()));
        } catch (IllegalArgumentException e) {
          return Optional.empty();
        }
      });
      out.onError(LeaderHint.notLeader(at, l.map(AssignmentStore.Leader::term).orElse(0L)));
    }

    @Override
    public void register(RegisterRequest request, StreamObserver<RegisterResponse> out) {
      refuse(out);
    }

    @Override
    public void unregister(UnregisterRequest request, StreamObserver<UnregisterResponse> out) {
      refuse(out);
    }

    @Override
    public void renewLease(RenewLeaseRequest request, StreamObserver<RenewLeaseResponse> out) {
      refuse(out);
    }

    @Override
    public void notifyUnhealthyPod(NotifyUnhealthyPodRequest request,
        StreamObserver<NotifyUnhealthyPodResponse> out) {
      refuse(out);
    }

    @Override
    public void getAssignments(GetAssignmentsRequest request, StreamObserver<ConfigBytes> out) {
      refuse(out);
    }

    @Override
    public void watch(WatchRequest request, StreamObserver<ConfigBytes> out) {
      refuse(out);
    }

    @Override
    public void rebalance(RebalanceRequest request, StreamObserver<RebalanceResponse> out) {
      refuse(out);
    }
  }
}

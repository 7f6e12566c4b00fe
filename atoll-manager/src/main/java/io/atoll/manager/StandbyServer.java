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
import io.grpc.Metadata;
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
 * holder name of the store's live lease ({@code host:port}), as {@code leader} tells it at the
 * call: in {@code atoll manager} the store's leader watch's last answer, so a takeover or a new
 * leader is named from the next call on. The refusal is built once per answer; each call gets its
 * own copy of the trailers only, since the transport adds the status to the trailers it is given.
 *
 * <p>Closed before the standby starts leading on the same port. Thread-safe.
 */
public final class StandbyServer implements AutoCloseable {

  private final Server server;
  private final PodAddress address;

  private StandbyServer(Server server, PodAddress address) {
    this.server = server;
    this.address = address;
  }

  /**
   * Listens on {@code host:port} ({@code port} 0 picks one).
   *
   * @param leader who leads now, read at every call, so it should be cheap (the leader watch's last
   *     answer; {@link AssignmentStore#leader()} would read the store at every call); may throw
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
    /** The refusal for one answer of {@code leader}: its status, and the trailers each call copies. */
    private record Refusal(Optional<AssignmentStore.Leader> leader, io.grpc.Status status, Metadata trailers) {}

    private static final Refusal UNKNOWN = refusal(Optional.empty());

    private final Supplier<Optional<AssignmentStore.Leader>> leader;
    private volatile Refusal last = UNKNOWN;

    Refusing(Supplier<Optional<AssignmentStore.Leader>> leader) {
      this.leader = leader;
    }

    private static Refusal refusal(Optional<AssignmentStore.Leader> l) {
      Optional<PodAddress> at = l.flatMap(x -> {
        try {
          return Optional.of(PodAddress.parse(x.holder()));
        } catch (IllegalArgumentException e) {
          return Optional.empty();
        }
      });
      io.grpc.StatusRuntimeException e = LeaderHint.notLeader(at, l.map(AssignmentStore.Leader::term).orElse(0L));
      return new Refusal(l, e.getStatus(), e.getTrailers());
    }

    private void refuse(StreamObserver<?> out) {
      Optional<AssignmentStore.Leader> l;
      try {
        l = leader.get();
      } catch (RuntimeException e) {
        l = Optional.empty(); // the store is away: no hint
      }
      Refusal r = last;
      if (!r.leader().equals(l)) {
        r = refusal(l);
        last = r;
      }
      Metadata trailers = new Metadata();
      trailers.merge(r.trailers());
      out.onError(r.status().asRuntimeException(trailers));
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
    public void released(io.atoll.transport.grpc.proto.ReleasedRequest request,
        StreamObserver<io.atoll.transport.grpc.proto.ReleasedResponse> out) {
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

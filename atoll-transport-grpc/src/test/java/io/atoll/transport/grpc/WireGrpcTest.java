package io.atoll.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.PingRequest;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.PushConfigResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.grpc.BindableService;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Channels and servers made by {@link Wire}, over real gRPC on 127.0.0.1 and ephemeral ports. */
class WireGrpcTest {

  private static final Pod SELF = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 42), PodVersion.of("1.0"));

  private final List<Server> servers = new ArrayList<>();
  private final List<ManagedChannel> channels = new ArrayList<>();
  /** Whether each server-side call ran on one of the transport event loops. */
  private final List<Boolean> serverCallsOnEventLoop = new CopyOnWriteArrayList<>();

  /** A pod service answering pings and decoding pushed configs. */
  private final class PodService extends PodServiceGrpc.PodServiceImplBase {
    @Override
    public void ping(PingRequest request, StreamObserver<PingResponse> out) {
      serverCallsOnEventLoop.add(Wire.currentEventLoop() != null);
      out.onNext(PingResponse.newBuilder().setPod(Wire.info(SELF)).setConfigEpoch(7).setServing(true).build());
      out.onCompleted();
    }

    @Override
    public void pushConfig(ConfigBytes request, StreamObserver<PushConfigResponse> out) {
      try {
        ClusterConfig config = Wire.config(request);
        out.onNext(PushConfigResponse.newBuilder().setEpoch(config.epoch()).build());
        out.onCompleted();
      } catch (StatusRuntimeException e) {
        out.onError(e);
      }
    }
  }

  /** A manager service whose assignments are {@code bytes} raw bytes (large answers). */
  private static final class Manager extends ShardManagerServiceGrpc.ShardManagerServiceImplBase {
    private final int bytes;

    Manager(int bytes) {
      this.bytes = bytes;
    }

    @Override
    public void getAssignments(GetAssignmentsRequest request, StreamObserver<ConfigBytes> out) {
      out.onNext(ConfigBytes.newBuilder().setEncoded(ByteString.copyFrom(new byte[bytes])).build());
      out.onCompleted();
    }
  }

  private Server start(int port, BindableService... services) {
    Server s = Wire.startServer("127.0.0.1", port, List.of(services));
    servers.add(s);
    return s;
  }

  private ManagedChannel channelTo(int port) {
    ManagedChannel ch = Wire.channel(new PodAddress("127.0.0.1", port));
    channels.add(ch);
    return ch;
  }

  @AfterEach
  void stop() throws InterruptedException {
    channels.forEach(Wire::close);
    servers.forEach(Server::shutdownNow);
    for (ManagedChannel ch : channels) {
      assertThat(ch.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }
    for (Server s : servers) {
      assertThat(s.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void aServerOnPortZeroListensOnAnEphemeralPortThatAChannelReaches() {
    Server server = start(0, new PodService());
    int port = Wire.port(server);
    assertThat(port).isBetween(1, 65535);
    PingResponse r = PodServiceGrpc.newBlockingStub(channelTo(port)).withDeadlineAfter(10, TimeUnit.SECONDS)
        .ping(PingRequest.getDefaultInstance());
    assertThat(Wire.pod(r.getPod())).isEqualTo(SELF);
    assertThat(r.getConfigEpoch()).isEqualTo(7);
  }

  @Test
  void callbacksRunOnTheTransportEventLoopsOnBothSides() throws Exception {
    int port = Wire.port(start(0, new PodService()));
    assertThat(Wire.currentEventLoop()).as("a test thread runs no event loop").isNull();
    CompletableFuture<Boolean> clientOnLoop = new CompletableFuture<>();
    PodServiceGrpc.newStub(channelTo(port)).withDeadlineAfter(10, TimeUnit.SECONDS)
        .ping(PingRequest.getDefaultInstance(), new StreamObserver<>() {
          @Override
          public void onNext(PingResponse value) {
            clientOnLoop.complete(Wire.currentEventLoop() != null);
          }

          @Override
          public void onError(Throwable t) {
            clientOnLoop.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {}
        });
    assertThat(clientOnLoop.get(10, TimeUnit.SECONDS)).as("client callback on an event loop").isTrue();
    assertThat(serverCallsOnEventLoop).containsExactly(true);
  }

  @Test
  void aConfigPushedOverTheWireArrivesWhole() {
    int port = Wire.port(start(0, new PodService()));
    ClusterConfig config = ClusterConfig.empty(1024).toBuilder()
        .pod(new PodEntry(SELF, PodStatus.ACTIVE, 9)).build();
    PushConfigResponse r = PodServiceGrpc.newBlockingStub(channelTo(port)).withDeadlineAfter(10, TimeUnit.SECONDS)
        .pushConfig(Wire.bytes(config));
    assertThat(r.getEpoch()).isEqualTo(9);
  }

  @Test
  void aMalformedConfigComesBackAsInvalidArgumentWithItsReason() {
    int port = Wire.port(start(0, new PodService()));
    ConfigBytes junk = ConfigBytes.newBuilder().setEncoded(ByteString.copyFromUtf8("XY")).build();
    assertThatThrownBy(() -> PodServiceGrpc.newBlockingStub(channelTo(port)).withDeadlineAfter(10, TimeUnit.SECONDS)
        .pushConfig(junk))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).isEqualTo("config: config: bad magic (expected: bytes 'A' 'C')");
        });
  }

  @Test
  void messagesUpToTheLimitPassBothWaysAndLargerOnesAreRefused() {
    // gRPC's own default is 4 MiB; Atoll raises it to MAX_GRPC_MESSAGE_BYTES on servers and channels.
    int big = 8 << 20;
    int port = Wire.port(start(0, new PodService(), new Manager(big)));
    ManagedChannel ch = channelTo(port);
    // Server inbound: 8 MiB reaches the service (which finds no config in zeros).
    ConfigBytes zeros = ConfigBytes.newBuilder().setEncoded(ByteString.copyFrom(new byte[big])).build();
    assertThatThrownBy(() -> PodServiceGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS).pushConfig(zeros))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getDescription()).contains("bad magic"));
    // Channel inbound: an 8 MiB answer arrives.
    ConfigBytes answer = ShardManagerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS)
        .getAssignments(GetAssignmentsRequest.getDefaultInstance());
    assertThat(answer.getEncoded().size()).isEqualTo(big);
    // Past the limit: refused by the server before the service sees it.
    ConfigBytes tooBig = ConfigBytes.newBuilder()
        .setEncoded(ByteString.copyFrom(new byte[Wire.MAX_GRPC_MESSAGE_BYTES])).build();
    assertThatThrownBy(() -> PodServiceGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS).pushConfig(tooBig))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
  }

  @Test
  void aPortInUseIsReportedWithTheAddress() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      int port = taken.getLocalPort();
      assertThatThrownBy(() -> start(port, new PodService()))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageStartingWith("cannot listen on 127.0.0.1:" + port + ": ")
          .hasMessageEndingWith("(is another process using the port?)");
    }
  }

  @Test
  void closeShutsTheChannelDownAndFailsItsCalls() throws Exception {
    int port = Wire.port(start(0, new PodService()));
    ManagedChannel ch = channelTo(port);
    Wire.close(ch);
    assertThat(ch.isShutdown()).isTrue();
    assertThat(ch.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThatThrownBy(() -> PodServiceGrpc.newBlockingStub(ch).ping(PingRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
  }

  @Test
  void reconnectingLeavesAHealthyChannelAsItIs() {
    int port = Wire.port(start(0, new PodService()));
    ManagedChannel ch = channelTo(port);
    ch.getState(true);
    await().atMost(Duration.ofSeconds(10)).until(() -> ch.getState(false) == ConnectivityState.READY);
    assertThat(Wire.reconnecting(ch)).isSameAs(ch);
    assertThat(ch.getState(false)).isEqualTo(ConnectivityState.READY);
  }

  /**
   * A peer that comes back is reached at once, not after gRPC's back-off. A listener that resets
   * every connection makes each connect attempt fail; after the fourth, gRPC waits 4.1 s (+-20 %)
   * before the fifth. A server then starts on the port, and the channel must be ready well before
   * that wait is over.
   */
  @Test
  void reconnectingCutsTheConnectBackOffShortWhenThePeerIsBack() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    int port;
    try (ServerSocket resetting = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      port = resetting.getLocalPort();
      Thread acceptor = Thread.ofVirtual().start(() -> {
        while (true) {
          try (Socket s = resetting.accept()) {
            s.setSoLinger(true, 0); // close with a reset: the attempt fails, and leaves no TIME_WAIT
            attempts.incrementAndGet();
          } catch (IOException e) {
            return; // the listener was closed
          }
        }
      });
      ManagedChannel ch = channelTo(port);
      ch.getState(true);
      await().atMost(Duration.ofSeconds(20)).until(() -> attempts.get() >= 4);
      assertThat(ch.getState(false)).isEqualTo(ConnectivityState.TRANSIENT_FAILURE);
      resetting.close();
      acceptor.join(5_000);
    }
    ManagedChannel ch = channels.get(0);
    start(port, new PodService());
    long resetAt = System.nanoTime();
    assertThat(Wire.reconnecting(ch)).isSameAs(ch);
    await().atMost(Duration.ofMillis(2500)).until(() -> ch.getState(false) == ConnectivityState.READY);
    assertThat(Duration.ofNanos(System.nanoTime() - resetAt)).isLessThan(Duration.ofMillis(2500));
    assertThat(attempts.get()).as("no attempt in between").isEqualTo(4);
    assertThat(PodServiceGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS)
        .ping(PingRequest.getDefaultInstance()).getServing()).isTrue();
  }
}

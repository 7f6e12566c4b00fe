package io.atoll.runtime.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pod's watch on the manager's configs, against a manager's gRPC face on loopback that holds
 * each watch open: a watch broken because its channel was replaced (another call found the
 * channel silent) watches the same manager again; it does not mark a live manager down.
 */
class ConfigWatchTest {

  private final AtomicInteger watches = new AtomicInteger();
  /** Opened when the manager sees a watch cancelled, once a test puts one here. */
  private volatile CountDownLatch watchEnded;
  private final Server leader = Wire.startServer("127.0.0.1", 0, List.<BindableService>of(
      new ShardManagerServiceGrpc.ShardManagerServiceImplBase() {
        @Override
        public void watch(WatchRequest request, StreamObserver<ConfigBytes> out) {
          watches.incrementAndGet(); // held open, as a manager with no new config does
          ((io.grpc.stub.ServerCallStreamObserver<ConfigBytes>) out).setOnCancelHandler(() -> {
            CountDownLatch l = watchEnded;
            if (l != null) {
              l.countDown();
            }
          });
        }
      }));
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final View view = QuietViews.of(4, new PodId(new PodAddress("127.0.0.1", 2), 1));
  private ManagerAddresses managers;
  private ConfigWatch watch;

  @AfterEach
  void close() {
    if (watch != null) {
      watch.close();
    }
    if (managers != null) {
      managers.close();
    }
    timer.shutdownNow();
    leader.shutdownNow();
  }

  private static int closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort(); // nothing listens there once closed
    }
  }

  @Test
  void aWatchWhoseChannelWasReplacedWatchesTheSameManagerAgain() throws Exception {
    PodAddress leaderAt = new PodAddress("127.0.0.1", leader.getPort());
    PodAddress standby = new PodAddress("127.0.0.1", closedPort());
    managers = new ManagerAddresses(List.of(leaderAt, standby), Wire::channel);
    watch = new ConfigWatch(managers, view, new SignedConfigs(), timer);
    watch.watch();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> watches.get() == 1);

    // A renewal's deadline passed with nothing heard: the link replaces the channel, which fails
    // the watch's stream on the old one.
    assertThat(managers.reopenIfSilent(leaderAt, 0)).isTrue();

    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> watches.get() == 2);
    assertThat(managers.current()).as("still the live manager").isEqualTo(leaderAt);
    assertThat(managers.switches()).isZero();
  }

  @Test
  void closingTheWatchDoesNotMoveTheLink() throws Exception {
    PodAddress leaderAt = new PodAddress("127.0.0.1", leader.getPort());
    managers = new ManagerAddresses(List.of(leaderAt, new PodAddress("127.0.0.1", closedPort())), Wire::channel);
    watch = new ConfigWatch(managers, view, new SignedConfigs(), timer);
    watch.watch();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> watches.get() == 1);
    CountDownLatch cancelled = new CountDownLatch(1);
    watchEnded = cancelled;
    watch.close(); // the pod stops: its own cancel fails the stream (CANCELLED)
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the manager saw the watch end").isTrue();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> watch.streamsEnded() == 1); // the pod saw it
    assertThat(managers.current()).isEqualTo(leaderAt);
    assertThat(managers.switches()).isZero();
  }

  @Test
  void aFailureOnTheLinksOwnChannelStillMovesTheLink() {
    PodAddress a = new PodAddress("127.0.0.1", 1);
    PodAddress b = new PodAddress("127.0.0.1", 3);
    managers = new ManagerAddresses(List.of(a, b), Wire::channel);
    io.grpc.ManagedChannel first = managers.channel();
    Throwable down = io.grpc.Status.UNAVAILABLE.withDescription("io exception").asRuntimeException();
    assertThat(managers.failed(first, a, down)).as("the channel in use: the manager is down").isTrue();
    assertThat(managers.current()).isEqualTo(b);
    assertThat(managers.failed(first, b, down)).as("a call on the channel left behind").isFalse();
    assertThat(managers.current()).isEqualTo(b);
  }
}

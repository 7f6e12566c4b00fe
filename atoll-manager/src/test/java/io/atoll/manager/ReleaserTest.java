package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.manager.pods.Pods;
import io.atoll.transport.grpc.Wire;
import io.grpc.BindableService;
import io.grpc.Server;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a stopping manager releases, in which order, and once: a real gRPC server on loopback, the
 * calls to pods, the creator's threads, the store.
 */
class ReleaserTest {

  /** Records its close, and whether the server was shut down by then. */
  private static final class RecordingPods implements Pods {
    final List<String> events;
    volatile Server server;

    RecordingPods(List<String> events) {
      this.events = events;
    }

    @Override
    public CompletableFuture<Boolean> ping(PodId pod, Duration timeout) {
      return CompletableFuture.completedFuture(false);
    }

    @Override
    public CompletableFuture<Set<Integer>> unassign(PodId pod, List<Integer> shards, long newEpoch,
        Duration termination, long term, Duration deadline) {
      return CompletableFuture.failedFuture(new IllegalStateException("not in this test"));
    }

    @Override
    public void push(PodId pod, ClusterConfig config, Duration deadline) {}

    @Override
    public void close() {
      events.add("pods closed, server " + (server == null ? "none" : server.isTerminated() ? "terminated" : "running"));
    }
  }

  private final List<String> events = new CopyOnWriteArrayList<>();
  private final MemoryStoreThreadSafe store = new MemoryStoreThreadSafe();
  private final CompletableFuture<Void> stopped = new CompletableFuture<>();

  private static Server server() {
    return Wire.startServer("127.0.0.1", 0, List.<BindableService>of());
  }

  private static boolean portFree(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  @Test
  void theServerStopsFirstThenThePodsTheThreadsAndTheStoreThenStoppedCompletes() {
    RecordingPods pods = new RecordingPods(events);
    Releaser r = new Releaser(pods, () -> events.add("threads released, store closes " + store.closes), store,
        stopped);
    Server s = server();
    int port = Wire.port(s);
    pods.server = s;
    r.server(s);
    stopped.whenComplete((v, e) -> events.add("stopped, store closes " + store.closes));
    assertThat(stopped).isNotDone();

    r.release();

    assertThat(events).containsExactly("pods closed, server terminated", "threads released, store closes 0",
        "stopped, store closes 1");
    assertThat(s.isTerminated()).isTrue();
    assertThat(portFree(port)).as("the port is free when release returns").isTrue();
    assertThat(stopped).isCompleted();
  }

  @Test
  void aReleaseFromAnInterruptedThreadReleasesEverythingAndKeepsTheInterrupt() {
    Releaser r = new Releaser(new RecordingPods(events), () -> events.add("threads released"), store, stopped);
    Server s = server();
    r.server(s);
    Thread.currentThread().interrupt();
    try {
      r.release();
      assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept").isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(s.isShutdown()).isTrue();
    assertThat(events).containsExactly("pods closed, server none", "threads released");
    assertThat(store.closes).isEqualTo(1);
    assertThat(stopped).isCompleted();
  }

  @Test
  void aManagerThatNeverListenedStillReleasesEverythingElse() {
    Releaser r = new Releaser(new RecordingPods(events), () -> events.add("threads released"), store, stopped);
    r.release();
    assertThat(events).containsExactly("pods closed, server none", "threads released");
    assertThat(store.closes).isEqualTo(1);
    assertThat(stopped).isCompleted();
  }

  @Test
  void everythingIsReleasedOnceHoweverOftenReleaseIsCalled() {
    Releaser r = new Releaser(new RecordingPods(events), () -> events.add("threads released"), store, stopped);
    r.server(server());
    r.release();
    r.release();
    r.release();
    assertThat(events).hasSize(2);
    assertThat(store.closes).isEqualTo(1);
  }

  @Test
  void aDeposedManagersStoppedStaysExceptional() {
    Releaser r = new Releaser(new RecordingPods(events), () -> {}, store, stopped);
    stopped.completeExceptionally(new StoreConflictException("memory store", 1, 2));
    r.release();
    assertThat(stopped).isCompletedExceptionally();
    assertThat(store.closes).isEqualTo(1);
  }

  @Test
  void aSecondCallWaitsUntilTheFirstHasReleasedEverything() throws Exception {
    CountDownLatch threadsHeld = new CountDownLatch(1);
    CountDownLatch inOnClose = new CountDownLatch(1);
    Releaser r = heldWhileClosingThreads(inOnClose, threadsHeld);
    Thread first = Thread.ofPlatform().start(r::release);
    assertThat(inOnClose.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Integer> second = new CompletableFuture<>();
    Thread waiter = Thread.ofPlatform().start(() -> {
      r.release();
      second.complete(store.closes);
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> waiter.getState() == Thread.State.TIMED_WAITING);
    assertThat(second).as("waits while the first release runs").isNotDone();
    threadsHeld.countDown();
    assertThat(second.get(10, TimeUnit.SECONDS)).as("returns after the store is closed").isEqualTo(1);
    first.join(10_000);
    assertThat(stopped).isCompleted();
  }

  @Test
  void aWaiterThatIsInterruptedReturnsAndKeepsItsInterrupt() throws Exception {
    CountDownLatch threadsHeld = new CountDownLatch(1);
    CountDownLatch inOnClose = new CountDownLatch(1);
    Releaser r = heldWhileClosingThreads(inOnClose, threadsHeld);
    Thread first = Thread.ofPlatform().start(r::release);
    assertThat(inOnClose.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
    Thread waiter = Thread.ofPlatform().start(() -> {
      r.release();
      interrupted.complete(Thread.currentThread().isInterrupted());
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> waiter.getState() == Thread.State.TIMED_WAITING);
    waiter.interrupt();
    assertThat(interrupted.get(5, TimeUnit.SECONDS)).isTrue();
    assertThat(store.closes).as("the first release still runs").isZero();
    threadsHeld.countDown();
    first.join(10_000);
    assertThat(store.closes).isEqualTo(1);
  }

  /** A releaser whose thread close signals {@code inOnClose}, then waits for {@code threadsHeld}. */
  private Releaser heldWhileClosingThreads(CountDownLatch inOnClose, CountDownLatch threadsHeld) {
    return new Releaser(new RecordingPods(events), () -> {
      inOnClose.countDown();
      try {
        threadsHeld.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, store, stopped);
  }
}

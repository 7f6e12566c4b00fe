package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Ticker;
import io.atoll.core.spi.PodHealth;
import io.atoll.core.spi.StoreException;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.grpc.ManagedChannel;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The production start and stop of a manager ({@code ShardManager.start}, {@link ManagerStart},
 * {@link Releaser}) over real gRPC on loopback: what a start takes and what a stop gives back —
 * the store's lease, the port, the threads — also when a start fails half way or a round is out.
 */
class ManagerLifecycleTest {

  private final MemoryStoreThreadSafe store = new MemoryStoreThreadSafe();
  private final List<AutoCloseable> closing = new ArrayList<>();
  private ShardManager manager;

  @AfterEach
  void stop() throws Exception {
    Thread.interrupted(); // a test that interrupted itself
    if (manager != null) {
      manager.close();
    }
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private ShardManager start(ManagerSettings settings, ManagerObserver observer) {
    return ShardManager.start(settings, store, PodHealth.LEASE_ONLY, "127.0.0.1", 0, Ticker.SYSTEM, new Random(1),
        observer);
  }

  private ShardManagerServiceGrpc.ShardManagerServiceBlockingStub stub(ShardManager m) {
    ManagedChannel ch = Wire.channel(m.address());
    closing.add(() -> Wire.close(ch));
    return ShardManagerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private FakePodServer pod(long incarnation) {
    FakePodServer p = new FakePodServer(incarnation);
    closing.add(p);
    return p;
  }

  private static boolean portFree(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  private static long threadsNamed(String name) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().equals(name))
        .count();
  }

  @Test
  void theObserverGivenToStartHearsTheManagerFromItsStartOn() {
    List<ClusterConfig> installed = new CopyOnWriteArrayList<>();
    List<Integer> rounds = new CopyOnWriteArrayList<>();
    manager = start(ShardManagerTest.settings(3), new ManagerObserver() {
      @Override
      public void configInstalled(ClusterConfig config) {
        installed.add(config);
      }

      @Override
      public void roundFinished(int moved, boolean failed) {
        rounds.add(moved);
      }
    });
    FakePodServer a = pod(1);
    stub(manager).register(RegisterRequest.newBuilder().setPod(Wire.info(a.pod)).build());
    await().atMost(Duration.ofSeconds(10)).until(() -> rounds.contains(3));
    assertThat(installed).as("the registration's config, then the round's").hasSizeGreaterThanOrEqualTo(2);
    assertThat(installed.get(0).isActive(a.pod.id())).isTrue();
    assertThat(installed.get(installed.size() - 1)).isEqualTo(manager.config());
  }

  @Test
  void aStartThatCannotListenGivesBackTheStoresLeaseAndItsThreads() throws Exception {
    long loops = threadsNamed("atoll-manager");
    long ios = threadsNamed("atoll-manager-store");
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      assertThatThrownBy(() -> ShardManager.start(ShardManagerTest.settings(2), store, PodHealth.LEASE_ONLY,
          "127.0.0.1", taken.getLocalPort(), Ticker.SYSTEM, new Random(1)))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageContaining("cannot listen on 127.0.0.1:" + taken.getLocalPort());
    }
    assertThat(store.closes).isEqualTo(1);
    assertThat(store.leader()).as("the lease taken before the bind is given back").isEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() -> threadsNamed("atoll-manager") == loops
        && threadsNamed("atoll-manager-store") == ios);
    manager = start(ShardManagerTest.settings(2), ManagerObserver.NONE);
    assertThat(manager.term()).as("the next start takes the next term at once").isEqualTo(2);
  }

  @Test
  void aStopGivesBackThePortTheThreadsAndTheStoreAndARestartTakesTheNextTerm() {
    long loops = threadsNamed("atoll-manager");
    long ios = threadsNamed("atoll-manager-store");
    manager = start(ShardManagerTest.settings(2), ManagerObserver.NONE);
    stub(manager).register(RegisterRequest.newBuilder().setPod(Wire.info(pod(1).pod)).build()); // a save
    assertThat(threadsNamed("atoll-manager")).isEqualTo(loops + 1);
    // The save may still be on its way to the store's thread when the answer is out.
    await("saves run on a thread of their own").atMost(Duration.ofSeconds(5))
        .until(() -> threadsNamed("atoll-manager-store") == ios + 1);
    int port = manager.address().port();
    manager.close();
    assertThat(portFree(port)).as("the port is free when close returns").isTrue();
    assertThat(manager.stopped()).isCompleted();
    assertThat(store.closes).isEqualTo(1);
    assertThat(store.leader()).isEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() -> threadsNamed("atoll-manager") == loops
        && threadsNamed("atoll-manager-store") == ios);
    manager = start(ShardManagerTest.settings(2), ManagerObserver.NONE);
    assertThat(manager.term()).isEqualTo(2);
  }

  @Test
  void aStopWhileARoundsUnassignIsOutFailsTheWaitingRebalanceAndSavesNothing() {
    ManagerSettings settings = ShardManagerTest.settings(4)
        .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(20)); // the unassign may take 22 s
    manager = start(settings, ManagerObserver.NONE);
    var stub = stub(manager);
    FakePodServer a = pod(1);
    stub.register(RegisterRequest.newBuilder().setPod(Wire.info(a.pod)).build());
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().ownedCounts().getOrDefault(a.pod.id(), 0) == 4);
    a.holdUnassigns = true;
    FakePodServer b = pod(2);
    stub.register(RegisterRequest.newBuilder().setPod(Wire.info(b.pod)).build());
    await().atMost(Duration.ofSeconds(10)).until(() -> a.unassigns.size() == 1);
    CompletableFuture<ShardManager.RoundResult> waiting = manager.rebalance();
    int port = manager.address().port();
    manager.close();
    assertThat(waiting).failsWithin(Duration.ofSeconds(5)).withThrowableThat()
        .havingRootCause().isInstanceOf(IllegalStateException.class).withMessage("shard manager is stopping");
    assertThat(portFree(port)).isTrue();
    assertThat(store.closes).isEqualTo(1);
    manager = start(settings, ManagerObserver.NONE);
    assertThat(manager.term()).isEqualTo(2);
    assertThat(manager.config().ownedCounts()).as("the round out at the stop saved nothing")
        .containsEntry(a.pod.id(), 4);
    assertThat(manager.config().isActive(b.pod.id())).isTrue();
  }

  @Test
  void aWatchOpenAtTheStopEndsNormally() {
    manager = start(ShardManagerTest.settings(2), ManagerObserver.NONE);
    Iterator<ConfigBytes> watch = stub(manager).withDeadlineAfter(20, TimeUnit.SECONDS)
        .watch(WatchRequest.getDefaultInstance());
    assertThat(Wire.config(watch.next())).isEqualTo(manager.config());
    manager.close();
    assertThat(watch.hasNext()).as("completed by the manager, not cut by its server").isFalse();
  }

  @Test
  void aCloseFromAnInterruptedThreadStillReleasesEverythingAndKeepsTheInterrupt() {
    manager = start(ShardManagerTest.settings(2), ManagerObserver.NONE);
    Thread.currentThread().interrupt();
    manager.close();
    assertThat(Thread.interrupted()).as("the caller's interrupt is kept").isTrue();
    assertThat(store.closes).isEqualTo(1);
    assertThat(manager.stopped()).isCompleted();
  }

  /**
   * Regression: a start from an interrupted thread failed at once, while its recovery still ran on
   * the loop; the close that followed could close the store before that recovery took the store's
   * lease, which then stayed held by no manager until it lapsed.
   */
  @Test
  void aStartFromAnInterruptedThreadFailsAndLeavesTheStoreFreeForTheNext() {
    Thread.currentThread().interrupt();
    assertThatThrownBy(() -> start(ShardManagerTest.settings(2), ManagerObserver.NONE))
        .isInstanceOf(StoreException.class).hasMessage("shard manager: interrupted while starting");
    assertThat(Thread.interrupted()).as("the interrupt is kept").isTrue();
    assertThat(store.closes).isEqualTo(1);
    assertThat(store.leader()).as("no lease left behind").isEmpty();
    manager = start(ShardManagerTest.settings(2), ManagerObserver.NONE);
    assertThat(manager.term()).isEqualTo(2);
  }

  @Test
  void unassignsCarryTheClusterIdReadFromTheStore() {
    manager = start(ShardManagerTest.settings(4), ManagerObserver.NONE);
    var stub = stub(manager);
    FakePodServer a = pod(1);
    stub.register(RegisterRequest.newBuilder().setPod(Wire.info(a.pod)).build());
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().ownedCounts().getOrDefault(a.pod.id(), 0) == 4);
    stub.register(RegisterRequest.newBuilder().setPod(Wire.info(pod(2).pod)).build());
    await().atMost(Duration.ofSeconds(10)).until(() -> !a.unassigns.isEmpty());
    assertThat(a.unassigns.get(0).getClusterId()).isEqualTo(manager.clusterId().toString()).isNotEmpty();
  }

  @Test
  void aLongerLeaseOfThePreviousTermIsRecordedUntilItHasSurelyEnded() {
    manager = start(ShardManagerTest.settings(2), ManagerObserver.NONE); // 30 s + 2 s
    manager.close();
    manager = start(ShardManagerTest.settings(2).withLease(Duration.ofMillis(600), Duration.ofMillis(100)),
        ManagerObserver.NONE);
    stub(manager).register(RegisterRequest.newBuilder().setPod(Wire.info(pod(1).pod)).build());
    ManagerState saved = ManagerState.decode(store.load().orElseThrow().data());
    assertThat(saved.config().pods()).as("the registration's save").hasSize(1);
    assertThat(saved.leaseTtl()).as("pods may still hold the previous term's leases").isEqualTo(Duration.ofSeconds(30));
    assertThat(saved.leaseMargin()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void aStoredKeyThatDoesNotParseStopsTheStartAndClosesTheStore() {
    store.overwrite(new ManagerState(1, ClusterConfig.empty(2), Duration.ofSeconds(1), Duration.ofMillis(100),
        PrunedPods.NONE, "not a key").encode());
    assertThatThrownBy(() -> start(ShardManagerTest.settings(2), ManagerObserver.NONE))
        .isInstanceOf(StoreException.class).hasMessageContaining("the cluster's signing key: 3 parts");
    assertThat(store.closes).isEqualTo(1);
    assertThat(store.leader()).isEmpty();
  }

  @Test
  void aStoreWithoutAKeyGetsTheStartingManagersOwn() {
    ConfigSigner own = ConfigSigner.generate();
    store.overwrite(new ManagerState(1, ClusterConfig.empty(2), Duration.ofSeconds(1), Duration.ofMillis(100),
        PrunedPods.NONE, "").encode());
    manager = ShardManager.start(ShardManagerTest.settings(2), store, PodHealth.LEASE_ONLY, "127.0.0.1", 0,
        Ticker.SYSTEM, new Random(1), ManagerObserver.NONE,
        new ManagerSecurity(io.atoll.transport.grpc.security.WireSecurity.PLAINTEXT, own, true));
    assertThat(ManagerState.decode(store.load().orElseThrow().data()).signingKey()).isEqualTo(own.encodedKey());
  }
}

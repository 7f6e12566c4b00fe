package io.atoll.manager;

import com.google.protobuf.ByteString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.Ticker;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.PodHealth;
import io.atoll.core.spi.StaleTermException;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodRequest;
import io.atoll.transport.grpc.proto.PodInfo;
import io.atoll.transport.grpc.proto.PodRef;
import io.atoll.transport.grpc.proto.RebalanceRequest;
import io.atoll.transport.grpc.proto.RebalanceResponse;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RegisterResponse;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.RenewLeaseResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnregisterRequest;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The manager over real gRPC on loopback: its service, its calls to pods, its lifecycle. */
class ShardManagerTest {

  final MemoryStoreThreadSafe store = new MemoryStoreThreadSafe();
  final List<AutoCloseable> closing = new ArrayList<>();
  volatile PodHealth.Verdict verdict = PodHealth.Verdict.UNKNOWN;
  /** The health source proves this pod gone (whatever {@link #verdict} says of the others). */
  volatile PodId provenGone;
  ShardManager manager;
  ShardManagerServiceGrpc.ShardManagerServiceBlockingStub stub;

  static ManagerSettings settings(int shards) {
    return ManagerSettings.defaults().withNumberOfShards(shards)
        .withLease(Duration.ofSeconds(30), Duration.ofSeconds(2))
        .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(1))
        .withRebalanceIntervals(Duration.ofMinutes(10), Duration.ofMillis(200))
        .withAllocation(RebalanceLimits.UNLIMITED, AllocationStrategy.versionAware());
  }

  void start(int shards) {
    start(shards, store);
  }

  void start(int shards, AssignmentStore on) {
    manager = ShardManager.start(settings(shards), on,
        p -> p.id().equals(provenGone) ? PodHealth.Verdict.GONE : verdict, "127.0.0.1", 0, Ticker.SYSTEM,
        new Random(1));
    ManagedChannel ch = Wire.channel(manager.address());
    closing.add(() -> Wire.close(ch));
    stub = ShardManagerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  FakePodServer pod() {
    FakePodServer p = new FakePodServer(1);
    closing.add(p);
    return p;
  }

  RegisterResponse register(FakePodServer p) {
    return stub.register(RegisterRequest.newBuilder().setPod(Wire.info(p.pod)).build());
  }

  @AfterEach
  void stop() throws Exception {
    if (manager != null) {
      manager.close();
    }
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  @Test
  void aPodThatRegistersGetsEveryShardPushedToIt() {
    start(6);
    FakePodServer a = pod();
    RegisterResponse r = register(a);
    assertThat(Wire.config(r.getConfig()).isActive(a.pod.id())).isTrue();
    assertThat(r.getLeaseTtlMillis()).isEqualTo(30_000);
    assertThat(r.getNumberOfShards()).isEqualTo(6);
    assertThat(r.getManagerTerm()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> a.lastPushed() != null
        && a.lastPushed().ownedCounts().getOrDefault(a.pod.id(), 0) == 6);
    assertThat(manager.config().ownedCounts()).containsEntry(a.pod.id(), 6);
    assertThat(ShardManager.shardCounts(manager.config())).containsEntry(a.pod.id().toString(), 6);
    assertThat(manager.term()).isEqualTo(1);
    assertThat(manager.settings().numberOfShards()).isEqualTo(6);
    assertThat(Wire.config(stub.getAssignments(GetAssignmentsRequest.getDefaultInstance())))
        .isEqualTo(manager.config());
    assertThat(register(a).getConfig()).as("registering again changes nothing").isNotNull();
    assertThat(manager.config().pods()).hasSize(1);
  }

  @Test
  void aSecondPodGetsHalfTheShardsAfterTheFirstReleasesThem() {
    start(8);
    FakePodServer a = pod();
    register(a);
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().ownedCounts().getOrDefault(a.pod.id(), 0) == 8);
    FakePodServer b = pod();
    register(b);
    await().atMost(Duration.ofSeconds(10)).until(() -> b.lastPushed() != null
        && b.lastPushed().ownedCounts().getOrDefault(b.pod.id(), 0) == 4);
    assertThat(a.unassigns).hasSize(1);
    assertThat(a.unassigns.get(0).getShardsList()).hasSize(4);
    assertThat(a.unassigns.get(0).getManagerTerm()).isEqualTo(1);
    assertThat(a.unassigns.get(0).getTerminationTimeoutMillis()).isEqualTo(1000);
    ClusterConfig c = manager.config();
    for (int s : a.unassigns.get(0).getShardsList()) {
      assertThat(c.owner(s - 1)).isEqualTo(b.pod.id());
      assertThat(c.epoch(s - 1)).isEqualTo(a.unassigns.get(0).getNewEpoch());
    }
  }

  @Test
  void aFailedUnassignRegrantsTheShardsToTheirOwnerAndRetries() {
    start(4);
    FakePodServer a = pod();
    register(a);
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().ownedCounts().getOrDefault(a.pod.id(), 0) == 4);
    long before = manager.config().epoch();
    a.failUnassign = true;
    FakePodServer b = pod();
    register(b);
    await().atMost(Duration.ofSeconds(10)).until(() -> a.unassigns.size() >= 2);
    ClusterConfig c = manager.config();
    assertThat(c.ownedCounts()).containsEntry(a.pod.id(), 4);
    assertThat(c.epoch(a.unassigns.get(0).getShardsList().get(0) - 1)).isGreaterThan(before);
    a.failUnassign = false;
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().ownedCounts().getOrDefault(b.pod.id(), 0) == 2);
  }

  @Test
  void aPodThatAnswersAsAnotherIncarnationGetsNothing() {
    start(3);
    FakePodServer a = pod();
    a.answerAs.set(new io.atoll.core.Pod(new PodId(a.pod.address(), 99), a.pod.version()));
    register(a);
    RebalanceResponse r = stub.rebalance(RebalanceRequest.getDefaultInstance());
    assertThat(r.getMoved()).isZero();
    assertThat(manager.config().unownedCount()).isEqualTo(3);
    a.answerAs.set(a.pod);
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().unownedCount() == 0);
  }

  @Test
  void renewalsAreGrantedOnlyToActivePodsAndUnregisterMarksThePodGone() {
    start(2);
    FakePodServer a = pod();
    ByteString cred = register(a).getCredential();
    assertThat(cred.size()).as("a 256-bit credential").isEqualTo(32);
    RenewLeaseResponse ok = stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(a.pod.id()))
        .setCredential(cred).build());
    assertThat(ok.getStatus()).isEqualTo(RenewLeaseResponse.Status.RENEWED);
    assertThat(ok.getLeaseTtlMillis()).isEqualTo(30_000);
    assertThat(ok.getManagerTerm()).isEqualTo(1);
    PodRef stranger = Wire.ref(new PodId(a.pod.address(), 7));
    assertThatThrownBy(() -> stub.renewLease(RenewLeaseRequest.newBuilder().setPod(stranger).setCredential(cred)
        .build())).as("another incarnation's credential is no credential")
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    assertThatThrownBy(() -> stub.unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(a.pod.id())).build()))
        .as("an unregister without the credential").isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    assertThat(manager.config().pod(a.pod.id()).orElseThrow().status()).isEqualTo(PodStatus.ACTIVE);
    stub.unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(a.pod.id())).setCredential(cred).build());
    assertThat(manager.config().pod(a.pod.id()).orElseThrow().status()).isEqualTo(PodStatus.GONE);
    assertThat(stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(a.pod.id())).setCredential(cred)
        .build()).getStatus()).isEqualTo(RenewLeaseResponse.Status.UNKNOWN_POD);
    assertThatThrownBy(() -> register(a)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
      assertThat(e.getStatus().getDescription()).contains("declared gone")
          .as("a restarted KV node tells this answer from others by its start").startsWith(Wire.INCARNATION_GONE);
    });
    stub.unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(a.pod.id())).setCredential(cred).build()); // idempotent
  }

  @Test
  void badRequestsGetInvalidArgumentAndChangeNothing() {
    start(2);
    assertInvalid(() -> stub.register(RegisterRequest.getDefaultInstance()), "pod");
    assertInvalid(() -> stub.register(RegisterRequest.newBuilder().setPod(PodInfo.newBuilder()
        .setPod(PodRef.newBuilder().setHost("127.0.0.1").setPort(7000))).build()), "version");
    assertInvalid(() -> stub.renewLease(RenewLeaseRequest.getDefaultInstance()), "pod");
    assertInvalid(() -> stub.unregister(UnregisterRequest.getDefaultInstance()), "pod");
    assertInvalid(() -> stub.notifyUnhealthyPod(NotifyUnhealthyPodRequest.getDefaultInstance()), "pod");
    assertThat(manager.config().pods()).isEmpty();
    assertThat(store.version()).isEqualTo(1);
  }

  @Test
  void aRegisterWithFieldsTheConfigCannotCarryIsRefusedAndNothingIsSaved() {
    start(2);
    PodRef ok = PodRef.newBuilder().setHost("127.0.0.1").setPort(7000).setIncarnation(1).build();
    // 65 accented letters: 65 characters but 130 bytes of UTF-8, over the decoder's 128.
    assertInvalid(() -> stub.register(RegisterRequest.newBuilder().setPod(PodInfo.newBuilder().setPod(ok)
        .setVersion("\u00e9".repeat(65))).build()), "130 bytes of UTF-8");
    assertInvalid(() -> stub.register(RegisterRequest.newBuilder().setPod(PodInfo.newBuilder()
        .setPod(ok.toBuilder().setHost("h".repeat(256))).setVersion("1")).build()), "host: 256 bytes of UTF-8");
    assertInvalid(() -> stub.register(RegisterRequest.newBuilder().setPod(PodInfo.newBuilder()
        .setPod(ok.toBuilder().setHost("\u00e9".repeat(200))).setVersion("1")).build()), "host: 400 bytes");
    assertInvalid(() -> stub.register(RegisterRequest.newBuilder().setPod(PodInfo.newBuilder()
        .setPod(ok.toBuilder().setPort(70000)).setVersion("1")).build()), "port: 70000");
    assertInvalid(() -> stub.register(RegisterRequest.newBuilder().setPod(PodInfo.newBuilder()
        .setPod(ok).setVersion("  ")).build()), "version: blank");
    assertThat(manager.config().pods()).isEmpty();
    assertThat(store.version()).as("nothing saved after the start").isEqualTo(1);
    // The manager still works, and what it saved it can restart from.
    assertThat(stub.register(RegisterRequest.newBuilder().setPod(PodInfo.newBuilder().setPod(ok)
        .setVersion("\u00e9".repeat(64))).build()).getConfig()).isNotNull();
    manager.close();
    manager = null;
    start(2);
    assertThat(manager.config().pods()).hasSize(1);
  }

  @Test
  void aClusterGetsAnIdAtItsFirstStartKeepsItAndRefusesPodsOfAnotherCluster() {
    start(2);
    ClusterId id = manager.clusterId();
    assertThat(id.isNone()).isFalse();
    assertThat(manager.config().clusterId()).isEqualTo(id);
    FakePodServer a = pod();
    RegisterResponse r = register(a);
    assertThat(r.getClusterId()).isEqualTo(id.toString());
    assertThat(Wire.config(r.getConfig()).clusterId()).isEqualTo(id);
    FakePodServer b = pod();
    String other = new ClusterId(7, 7).toString();
    assertThatThrownBy(() -> stub.register(RegisterRequest.newBuilder().setPod(Wire.info(b.pod))
        .setClusterId(other).build())).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
          assertThat(e.getStatus().getDescription()).contains("belongs to cluster " + other)
              .contains("serves cluster " + id);
        });
    assertThatThrownBy(() -> stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(a.pod.id()))
        .setClusterId(other).build())).isInstanceOf(StatusRuntimeException.class);
    assertInvalid(() -> stub.register(RegisterRequest.newBuilder().setPod(Wire.info(b.pod)).setClusterId("zz")
        .build()), "cluster id: 'zz'");
    assertThat(manager.config().pod(b.pod.id())).isEmpty();
    manager.close();
    manager = null;
    start(2);
    assertThat(manager.clusterId()).as("kept across restarts").isEqualTo(id);
  }

  private static void assertInvalid(Runnable call, String field) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(e.getStatus().getDescription()).contains(field);
    });
  }

  @Test
  void aPodReportedUnhealthyIsMarkedGoneOnlyWhenTheHealthSourceSaysSo() {
    start(2);
    FakePodServer a = pod();
    FakePodServer b = pod();
    register(a);
    ByteString credB = register(b).getCredential();
    NotifyUnhealthyPodRequest report = NotifyUnhealthyPodRequest.newBuilder().setPod(Wire.ref(a.pod.id()))
        .setReporter(Wire.ref(b.pod.id())).setCredential(credB).build();
    assertThatThrownBy(() -> stub.notifyUnhealthyPod(report.toBuilder().clearCredential().build()))
        .as("a report without the reporter's credential").isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    stub.notifyUnhealthyPod(report);
    stub.rebalance(RebalanceRequest.getDefaultInstance()); // a loop round trip after the check
    assertThat(manager.config().isActive(a.pod.id())).isTrue();
    verdict = PodHealth.Verdict.GONE;
    stub.notifyUnhealthyPod(report);
    await().atMost(Duration.ofSeconds(10)).until(() -> !manager.config().isActive(a.pod.id()));
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().ownedCounts().getOrDefault(b.pod.id(), 0) == 2);
    assertInvalid(() -> stub.notifyUnhealthyPod(NotifyUnhealthyPodRequest.newBuilder().setPod(Wire.ref(a.pod.id()))
        .build()), "reporter");
  }

  @Test
  void aPodThatFailsItsPingIsCheckedWithTheHealthSourceAndMarkedGone() {
    start(2);
    FakePodServer a = pod();
    register(a);
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().unownedCount() == 0);
    FakePodServer b = pod();
    provenGone = b.pod.id();
    b.close(); // registered, but it never answers a ping
    register(b);
    await().atMost(Duration.ofSeconds(10)).until(() -> !manager.config().isActive(b.pod.id()));
    assertThat(manager.config().isActive(a.pod.id())).isTrue();
    assertThat(manager.config().ownedCounts()).containsEntry(a.pod.id(), 2);
  }

  @Test
  void aPodWhoseUnassignFailsIsCheckedWithTheHealthSourceAndItsShardsMove() {
    start(2);
    FakePodServer a = pod();
    register(a);
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().unownedCount() == 0);
    a.failUnassign = true;
    provenGone = a.pod.id();
    FakePodServer b = pod();
    register(b);
    await().atMost(Duration.ofSeconds(10)).until(() -> !manager.config().isActive(a.pod.id()));
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().ownedCounts().getOrDefault(b.pod.id(), 0) == 2);
  }

  @Test
  void aWatcherGetsTheCurrentConfigAndEveryOneAfter() {
    start(2);
    Iterator<ConfigBytes> watch = stub.withDeadlineAfter(20, TimeUnit.SECONDS).watch(WatchRequest.getDefaultInstance());
    assertThat(Wire.config(watch.next()).pods()).isEmpty();
    FakePodServer a = pod();
    register(a);
    ClusterConfig c;
    do {
      c = Wire.config(watch.next());
    } while (c.unownedCount() > 0);
    assertThat(c.isActive(a.pod.id())).isTrue();
    assertThat(c).isEqualTo(manager.config());
  }

  @Test
  void aRebalanceOfABalancedClusterMovesNothing() {
    start(2);
    RebalanceResponse r = stub.rebalance(RebalanceRequest.getDefaultInstance());
    assertThat(r.getMoved()).isZero();
    assertThat(r.getEpoch()).isEqualTo(manager.config().epoch());
    assertThat(manager.rebalance().join().moved()).isZero();
  }

  @Test
  void aRestartedManagerTakesTheNextTermAndReissuesEveryShard() {
    start(3);
    FakePodServer a = pod();
    register(a);
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().unownedCount() == 0);
    ClusterConfig before = manager.config();
    manager.close();
    assertThat(manager.stopped()).isCompleted();
    manager = null;
    start(3);
    assertThat(manager.term()).isEqualTo(2);
    ClusterConfig after = manager.config();
    for (int pos = 0; pos < 3; pos++) {
      assertThat(after.owner(pos)).isEqualTo(a.pod.id());
      assertThat(after.epoch(pos)).isEqualTo(before.epoch() + 1);
    }
  }

  @Test
  void aManagerWhoseStoreWasTakenOverStopsAsDeposed() {
    start(2);
    store.overwrite(new ManagerState(9, ClusterConfig.empty(2)).encode());
    FakePodServer a = pod();
    assertThatThrownBy(() -> register(a)).isInstanceOf(StatusRuntimeException.class);
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.stopped().isDone());
    assertThat(manager.stopped()).isCompletedExceptionally();
    assertThatThrownBy(() -> manager.stopped().join()).hasCauseInstanceOf(StoreConflictException.class);
    await("the deposed manager released its store (and its lease)").atMost(Duration.ofSeconds(10))
        .until(() -> store.leader().isEmpty());
    assertThat(manager.rebalance()).failsWithin(Duration.ofSeconds(5));
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThatThrownBy(() -> stub.withDeadlineAfter(2,
        TimeUnit.SECONDS).rebalance(RebalanceRequest.getDefaultInstance())).isInstanceOf(StatusRuntimeException.class));
  }

  @Test
  void aManagerWhoseLeaseWasTakenStopsAtItsNextRenewalWithoutWriting() {
    manager = ShardManager.start(settings(2).withLease(Duration.ofMillis(600), Duration.ofMillis(100)), store,
        "127.0.0.1", 0);
    long before = store.version();
    long newer = store.takeOver();
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.stopped().isDone());
    assertThatThrownBy(() -> manager.stopped().join()).hasCauseInstanceOf(StaleTermException.class)
        .hasMessageContaining("the current term " + newer);
    assertThat(store.version()).isEqualTo(before);
  }

  @Test
  void aRegistrationThatCannotBeSavedIsUnavailableAndCanBeRetried() {
    start(2);
    FakePodServer a = pod();
    store.failSaves(1);
    assertThatThrownBy(() -> register(a)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.getStatus().getDescription()).isEqualTo("shard manager: memory store: save failed (injected)");
    });
    assertThat(manager.config().pods()).isEmpty();
    RegisterResponse r = register(a);
    assertThat(Wire.config(r.getConfig()).isActive(a.pod.id())).isTrue();
    assertThat(stub.unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(a.pod.id()))
        .setCredential(r.getCredential()).build())).isNotNull();
    assertThat(stub.rebalance(RebalanceRequest.getDefaultInstance())).isNotNull();
  }

  @Test
  void aStoreThatStopsAnsweringAfterAFailedSaveDoesNotStopTheLeaseRenewals() throws Exception {
    StalledStore stalled = new StalledStore(store);
    start(4, stalled);
    FakePodServer a = pod();
    ByteString cred = register(a).getCredential();
    // a's round is over (its save done): the only save the stall meets is b's.
    await().atMost(Duration.ofSeconds(10)).until(() -> manager.config().ownedCounts().getOrDefault(a.pod.id(), 0) == 4
        && a.lastPushed() != null && a.lastPushed().ownedCounts().getOrDefault(a.pod.id(), 0) == 4);
    FakePodServer b = pod();
    stalled.stall();
    try {
      // b's entry cannot be saved; reading the store back after that failure waits for the store.
      var joining = ShardManagerServiceGrpc.newFutureStub(channelFor(manager)).withDeadlineAfter(60, TimeUnit.SECONDS)
          .register(RegisterRequest.newBuilder().setPod(Wire.info(b.pod)).build());
      await().atMost(Duration.ofSeconds(10)).until(() -> stalled.waiting() > 0);
      RenewLeaseResponse renewed = ShardManagerServiceGrpc.newBlockingStub(channelFor(manager))
          .withDeadlineAfter(5, TimeUnit.SECONDS)
          .renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(a.pod.id())).setCredential(cred).build());
      assertThat(renewed.getStatus()).as("granted while the store is silent")
          .isEqualTo(RenewLeaseResponse.Status.RENEWED);
      assertThat(joining.isDone()).as("b's registration waits for the store").isFalse();
      stalled.resume();
      assertThatThrownBy(joining::get).hasMessageContaining("save timed out");
    } finally {
      stalled.resume();
    }
    RegisterResponse joined = ShardManagerServiceGrpc.newBlockingStub(channelFor(manager))
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .register(RegisterRequest.newBuilder().setPod(Wire.info(b.pod)).build());
    assertThat(Wire.config(joined.getConfig()).isActive(b.pod.id())).as("saved once the store answers").isTrue();
  }

  ManagedChannel channelFor(ShardManager m) {
    ManagedChannel ch = Wire.channel(m.address());
    closing.add(() -> Wire.close(ch));
    return ch;
  }

  @Test
  void theStoreNamesTheLeaderByItsAdvertisedAddressNeverAWildcard() throws Exception {
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    manager = ShardManager.start(settings(2), store, PodHealth.LEASE_ONLY, "127.0.0.1", port, "localhost",
        Ticker.SYSTEM, new Random(1), ManagerObserver.NONE, ManagerSecurity.plaintext());
    assertThat(store.leader().orElseThrow().holder()).isEqualTo("localhost:" + port);
    assertThat(manager.address()).isEqualTo(new io.atoll.core.PodAddress("127.0.0.1", port));
    assertThatThrownBy(() -> ShardManager.start(settings(2), new MemoryStoreThreadSafe(), PodHealth.LEASE_ONLY,
        "127.0.0.1", 0, "0.0.0.0", Ticker.SYSTEM, new Random(1), ManagerObserver.NONE, ManagerSecurity.plaintext()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("advertised host: 0.0.0.0 is every address");
  }

  @Test
  void aStoppedManagerRefusesCalls() {
    start(2);
    manager.close();
    assertThat(manager.rebalance()).isCompletedExceptionally();
    assertThatThrownBy(() -> stub.rebalance(RebalanceRequest.getDefaultInstance()))
        .isInstanceOf(StatusRuntimeException.class);
    manager.close(); // idempotent
  }

  @Test
  void aStoreOfAnotherSizeStopsTheStartAndIsLeftAsItWas() {
    start(2);
    manager.close();
    manager = null;
    assertThatThrownBy(() -> start(3)).isInstanceOf(StoreException.class).hasMessageContaining("holds 2 shards")
        .hasMessageNotContaining("cannot start");
    assertThat(store.version()).isEqualTo(1);
    start(2);
    assertThat(manager.term()).isEqualTo(2);
  }

  @Test
  void aManagerThatKeepsTheKeyInTheStoreSavesItWithItsFirstState() {
    start(2); // plaintext: the cluster's key lives in the store
    String kept = ManagerState.decode(store.load().orElseThrow().data()).signingKey();
    assertThat(kept).isNotEmpty();
    manager.close();
    manager = null;
    start(2);
    assertThat(ManagerState.decode(store.load().orElseThrow().data()).signingKey()).as("the next term signs with it")
        .isEqualTo(kept);
  }

  @Test
  void aPodThatStopsRenewingIsDeclaredGoneByTheManagersOwnTimer() {
    manager = ShardManager.start(settings(2).withLease(Duration.ofMillis(600), Duration.ofMillis(100)), store,
        "127.0.0.1", 0);
    ManagedChannel ch = Wire.channel(manager.address());
    closing.add(() -> Wire.close(ch));
    stub = ShardManagerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
    FakePodServer a = pod();
    register(a); // and never renews
    assertThat(manager.config().isActive(a.pod.id())).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> !manager.config().isActive(a.pod.id()));
  }

  @Test
  void aClosedManagerNoLongerListens() {
    start(2);
    register(pod());
    manager.close();
    assertThatThrownBy(() -> stub.withDeadlineAfter(5, TimeUnit.SECONDS)
        .getAssignments(GetAssignmentsRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    assertThat(store.closes).isEqualTo(1);
    manager = null;
  }

  @Test
  void aWildcardAdvertisedHostIsRefusedAndTheStoreClosed() {
    assertThatThrownBy(() -> ShardManager.start(settings(2), store, PodHealth.LEASE_ONLY, "0.0.0.0", 0, "0.0.0.0",
        Ticker.SYSTEM, new Random(1), ManagerObserver.NONE, ManagerSecurity.plaintext()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("advertised host: 0.0.0.0 is every address");
    assertThat(store.closes).isEqualTo(1);
    assertThat(store.leader()).isEmpty();
  }
}

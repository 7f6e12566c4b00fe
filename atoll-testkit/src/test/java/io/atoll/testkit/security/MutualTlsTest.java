package io.atoll.testkit.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.Ticker;
import io.atoll.core.PodAddress;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.manager.ManagerSecurity;
import io.atoll.manager.StandbyServer;
import io.atoll.transport.grpc.LeaderHint;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.core.spi.PodHealth;
import io.atoll.testkit.tls.DevCa;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.GossipRequest;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodRequest;
import io.atoll.transport.grpc.proto.PodServiceGrpc;
import io.atoll.transport.grpc.proto.RebalanceRequest;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.atoll.transport.grpc.proto.UnregisterRequest;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster over mutual TLS on loopback, attacked from inside and outside: callers without a
 * certificate, with another CA's, with a pod certificate calling manager-only RPCs, a pod acting
 * for another pod, forged, tampered and replayed configs, an Unassign with a made-up term. Each is
 * refused with a clear status, logged once with the peer's identity, and the victim keeps serving:
 * nothing moves.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MutualTlsTest {

  sealed interface Msg permits Add, Get {}

  record Add(long delta) implements Msg {}

  record Get(Reply<Long> reply) implements Msg {}

  static final EntityType<Msg> COUNTER = EntityType.of("counter", Msg.class);

  static final class Counter implements Entity<Msg> {
    long value;

    @Override
    public void onMessage(Msg msg, EntityContext ctx) {
      switch (msg) {
        case Add a -> value += a.delta();
        case Get g -> g.reply().send(value);
      }
    }
  }

  @TempDir
  static Path dir;
  Path certs;
  final List<String> managerRefusals = new CopyOnWriteArrayList<>();
  final List<String> victimRefusals = new CopyOnWriteArrayList<>();
  ShardManager manager;
  ConfigSigner managerKey;
  Sharding victim;
  Sharding other;
  ConfigBytes firstSigned;

  @BeforeAll
  void start() throws Exception {
    certs = dir.resolve("certs");
    DevCa ca = DevCa.create("test", Duration.ofDays(1));
    ca.writeCa(certs);
    ca.issue(Role.MANAGER, "manager", List.of()).write(certs, "manager");
    ca.issue(Role.MANAGER, "manager", List.of()).write(certs, "rogue-manager"); // a stolen certificate, not the key
    ca.issue(Role.POD, "victim", List.of()).write(certs, "victim");
    ca.issue(Role.POD, "other", List.of()).write(certs, "other");
    ca.issue(Role.ADMIN, "ops", List.of()).write(certs, "admin");
    DevCa foreign = DevCa.create("foreign", Duration.ofDays(1));
    foreign.writeCa(dir.resolve("foreign"));
    foreign.issue(Role.MANAGER, "manager", List.of()).write(dir.resolve("foreign"), "manager");
    foreign.issue(Role.POD, "victim", List.of()).write(dir.resolve("foreign"), "pod");

    managerKey = ConfigSigner.generate();
    ManagerSecurity security = new ManagerSecurity(security("manager").withRefusalSink(managerRefusals::add),
        managerKey);
    manager = ShardManager.start(ManagerSettings.defaults().withNumberOfShards(12),
        FileAssignmentStore.open(dir.resolve("store")), PodHealth.LEASE_ONLY, "127.0.0.1", 0, Ticker.SYSTEM,
        new Random(), io.atoll.manager.ManagerObserver.NONE, security);
    victim = pod("victim", victimRefusals);
    firstSigned = managerStub(security("admin")).getAssignments(GetAssignmentsRequest.getDefaultInstance());
    other = pod("other", new CopyOnWriteArrayList<>());
    await().atMost(Duration.ofSeconds(20)).until(() -> victim.servedShards().size() == 6
        && other.servedShards().size() == 6 && victim.config().epoch() == manager.config().epoch());
  }

  @AfterAll
  void stop() {
    channels.forEach(Wire::close);
    for (AutoCloseable c : new AutoCloseable[] {other, victim, manager}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        // closing
      }
    }
  }

  WireSecurity security(String name) {
    return WireSecurity.tls(certs.resolve("ca.pem"), certs.resolve(name + ".pem"), certs.resolve(name + ".key"));
  }

  Sharding pod(String name, List<String> refusals) {
    return Sharding.builder().manager(manager.address()).security(security(name).withRefusalSink(refusals::add))
        .register(COUNTER, id -> new Counter()).start();
  }

  ShardManagerServiceGrpc.ShardManagerServiceBlockingStub managerStub(WireSecurity as) {
    ManagedChannel ch = Wire.channel(manager.address(), as, Role.MANAGER);
    channels.add(ch);
    return ShardManagerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS);
  }

  PodServiceGrpc.PodServiceBlockingStub podStub(Sharding pod, WireSecurity as) {
    ManagedChannel ch = Wire.channel(pod.podId().address(), as, Role.POD);
    channels.add(ch);
    return PodServiceGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS);
  }

  final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();

  static void refused(Runnable call, Status.Code code, String text) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(code);
      assertThat(String.valueOf(e.getStatus().getDescription())).contains(text);
    });
  }

  static long count(List<String> lines, String... parts) {
    return lines.stream().filter(l -> {
      for (String p : parts) {
        if (!l.contains(p)) {
          return false;
        }
      }
      return true;
    }).count();
  }

  /** The victim still holds its lease and its shards, and the manager's assignment did not change. */
  void nothingMoved(Map<Integer, PodId> owners, long epoch) {
    assertThat(victim.holdsLease()).isTrue();
    assertThat(manager.config().epoch()).as("no new config").isEqualTo(epoch);
    assertThat(owners(manager.config())).isEqualTo(owners);
    assertThat(victim.servedShards()).hasSize(6);
    assertThat(victim.config().isActive(victim.podId())).isTrue();
    long before = victim.entity(COUNTER, "probe").<Long>ask(Get::new).toCompletableFuture().join();
    other.entity(COUNTER, "probe").tell(new Add(1)).toCompletableFuture().join();
    assertThat(victim.entity(COUNTER, "probe").<Long>ask(Get::new).toCompletableFuture().join())
        .as("the cluster still serves").isEqualTo(before + 1);
  }

  static Map<Integer, PodId> owners(ClusterConfig c) {
    Map<Integer, PodId> out = new java.util.TreeMap<>();
    for (int s = 1; s <= c.size(); s++) {
      PodId p = c.owner(s - 1);
      if (p != null) {
        out.put(s, p);
      }
    }
    return out;
  }

  @Test
  void aClientWithoutACertificateIsRefusedAndLoggedOnce() throws Exception {
    ManagedChannel anonymous = NettyChannelBuilder.forAddress("127.0.0.1", manager.address().port())
        .sslContext(GrpcSslContexts.forClient().trustManager(certs.resolve("ca.pem").toFile()).build()).build();
    channels.add(anonymous);
    for (int i = 0; i < 3; i++) {
      refused(() -> ShardManagerServiceGrpc.newBlockingStub(anonymous).withDeadlineAfter(5, TimeUnit.SECONDS)
          .getAssignments(GetAssignmentsRequest.getDefaultInstance()), Status.Code.UNAUTHENTICATED,
          "needs a client certificate");
    }
    assertThat(count(managerRefusals, "no client certificate", "127.0.0.1")).isEqualTo(1);
  }

  @Test
  void aPlaintextClientGetsNothing() {
    ManagedChannel plain = Wire.channel(manager.address());
    channels.add(plain);
    assertThatThrownBy(() -> ShardManagerServiceGrpc.newBlockingStub(plain).withDeadlineAfter(5, TimeUnit.SECONDS)
        .getAssignments(GetAssignmentsRequest.getDefaultInstance())).isInstanceOfSatisfying(
            StatusRuntimeException.class, e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
  }

  @Test
  void aClientWithAnotherCasCertificateIsRefusedAndLoggedOnce() throws Exception {
    Path f = dir.resolve("foreign");
    // A client of another cluster: it does not trust our manager either (its own refusal, client side).
    WireSecurity foreign = WireSecurity.tls(f.resolve("ca.pem"), f.resolve("pod.pem"), f.resolve("pod.key"));
    assertThatThrownBy(() -> managerStub(foreign).getAssignments(GetAssignmentsRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    // One that trusts our CA but holds another CA's certificate: the manager refuses it.
    ManagedChannel half = NettyChannelBuilder.forAddress("127.0.0.1", manager.address().port())
        .sslContext(GrpcSslContexts.forClient().trustManager(certs.resolve("ca.pem").toFile())
            .keyManager(f.resolve("pod.pem").toFile(), f.resolve("pod.key").toFile()).build()).build();
    channels.add(half);
    for (int i = 0; i < 3; i++) {
      // The JDK's TLS drops an untrusted client certificate (the server asks for one without
      // requiring it), so the call arrives without one and is refused as unauthenticated.
      assertThatThrownBy(() -> ShardManagerServiceGrpc.newBlockingStub(half).withDeadlineAfter(5, TimeUnit.SECONDS)
          .getAssignments(GetAssignmentsRequest.getDefaultInstance())).isInstanceOfSatisfying(
              StatusRuntimeException.class, e -> assertThat(e.getStatus().getCode()).isIn(Status.Code.UNAVAILABLE,
                  Status.Code.UNAUTHENTICATED));
    }
    // The client's key manager finds no certificate of the issuers the server asks for, so it sends
    // none: the refusal names the peer's address, once (shared with the no-certificate case).
    assertThat(count(managerRefusals, "no client certificate", "127.0.0.1")).as("logged once").isEqualTo(1);
  }

  @Test
  void aPodCertificateCallingManagerOnlyRpcsIsRefusedAndLoggedOnceWithItsIdentity() {
    Map<Integer, PodId> owners = owners(manager.config());
    long epoch = manager.config().epoch();
    List<Integer> served = victim.servedShards();
    UnassignRequest unassign = UnassignRequest.newBuilder().addAllShards(served).setNewEpoch(epoch + 1_000)
        .setManagerTerm(manager.term()).setTerminationTimeoutMillis(100)
        .setClusterId(manager.clusterId().toString()).build();
    for (int i = 0; i < 3; i++) {
      refused(() -> podStub(victim, security("other")).unassign(unassign), Status.Code.PERMISSION_DENIED,
          "needs role manager; the caller is atoll:pod:other");
      refused(() -> podStub(victim, security("other")).pushConfig(firstSigned), Status.Code.PERMISSION_DENIED,
          "needs role manager");
      refused(() -> managerStub(security("other")).rebalance(RebalanceRequest.getDefaultInstance()),
          Status.Code.PERMISSION_DENIED, "needs role admin");
      refused(() -> managerStub(security("admin")).renewLease(RenewLeaseRequest.newBuilder()
          .setPod(Wire.ref(victim.podId())).build()), Status.Code.PERMISSION_DENIED, "needs role pod");
    }
    assertThat(count(victimRefusals, "Unassign", "atoll:pod:other")).isEqualTo(1);
    assertThat(count(victimRefusals, "PushConfig", "atoll:pod:other")).isEqualTo(1);
    assertThat(count(managerRefusals, "Rebalance", "atoll:pod:other")).isEqualTo(1);
    assertThat(count(managerRefusals, "RenewLease", "atoll:admin:ops")).isEqualTo(1);
    nothingMoved(owners, epoch);
  }

  @Test
  void aPodActingForAnotherPodIsRefusedAndTheVictimKeepsServing() {
    Map<Integer, PodId> owners = owners(manager.config());
    long epoch = manager.config().epoch();
    var asOther = managerStub(security("other"));
    PodId v = victim.podId();
    for (ByteString forged : List.of(ByteString.EMPTY, ByteString.copyFrom(new byte[32]))) {
      refused(() -> asOther.unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(v)).setCredential(forged)
          .build()), Status.Code.PERMISSION_DENIED, "unregister for pod " + v + " refused");
      refused(() -> asOther.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(v)).setCredential(forged)
          .setClusterId(manager.clusterId().toString()).build()), Status.Code.PERMISSION_DENIED, "credential");
      refused(() -> asOther.notifyUnhealthyPod(NotifyUnhealthyPodRequest.newBuilder().setPod(Wire.ref(v))
          .setReporter(Wire.ref(other.podId())).setCredential(forged).build()), Status.Code.PERMISSION_DENIED,
          "credential");
    }
    assertThat(count(managerRefusals, "unregister for pod " + v, "atoll:pod:other")).isEqualTo(1);
    assertThat(manager.config().pod(v).orElseThrow().status()).isEqualTo(PodStatus.ACTIVE);
    nothingMoved(owners, epoch);
  }

  @Test
  void aPodRegisteringAnotherPodsIncarnationGetsNoCredentialAndTheVictimKeepsServing() {
    Map<Integer, PodId> owners = owners(manager.config());
    long epoch = manager.config().epoch();
    var asOther = managerStub(security("other"));
    PodId v = victim.podId();
    RegisterRequest steal = RegisterRequest.newBuilder().setPod(Wire.info(manager.config().pod(v).orElseThrow().pod()))
        .setClusterId(manager.clusterId().toString()).build();
    // Before the fix this returned a credential for (victim, other), and Unregister with it took the victim out.
    refused(() -> asOther.register(steal), Status.Code.PERMISSION_DENIED, "register for pod " + v + " refused");
    refused(() -> asOther.register(steal.toBuilder().setCredential(ByteString.copyFrom(new byte[32])).build()),
        Status.Code.PERMISSION_DENIED, "did not register that incarnation");
    assertThat(count(managerRefusals, "refused register for pod " + v, "atoll:pod:other")).isEqualTo(1);
    assertThat(manager.config().pod(v).orElseThrow().status()).isEqualTo(PodStatus.ACTIVE);
    nothingMoved(owners, epoch);
  }

  @Test
  void forgedTamperedForeignAndReplayedConfigsAreRefusedOrChangeNothing() {
    Map<Integer, PodId> owners = owners(manager.config());
    long epoch = manager.config().epoch();
    ClusterConfig mine = victim.config();
    // A compromised pod claims every shard at a huge epoch, signed with a key of its own.
    ClusterConfig.Builder b = mine.toBuilder();
    for (int s = 0; s < mine.size(); s++) {
      b.claim(s, Claim.stable(other.podId(), Long.MAX_VALUE / 4));
    }
    ClusterConfig grab = b.build();
    ConfigBytes forged = ConfigSigner.generate().bytes(grab);
    ConfigBytes genuine = managerStub(security("admin")).getAssignments(GetAssignmentsRequest.getDefaultInstance());
    ConfigBytes tampered = genuine.toBuilder().setEncoded(Wire.bytes(grab).getEncoded()).build();
    ConfigBytes unsigned = Wire.bytes(grab);
    var asOther = podStub(victim, security("other"));
    for (ConfigBytes bad : List.of(forged, tampered, unsigned)) {
      refused(() -> asOther.gossip(GossipRequest.newBuilder().setFrom(Wire.ref(other.podId()))
          .setEpoch(Long.MAX_VALUE / 4).setConfig(bad).setClusterId(mine.clusterId().toString()).build()),
          Status.Code.PERMISSION_DENIED, "refused");
    }
    assertThat(count(victimRefusals, "gossiped config", "atoll:pod:other")).as("logged once").isEqualTo(1);
    // A replay of the first config the manager ever signed: valid, and older: the merge keeps the newer claims.
    asOther.gossip(GossipRequest.newBuilder().setFrom(Wire.ref(other.podId())).setEpoch(0).setConfig(firstSigned)
        .setClusterId(mine.clusterId().toString()).build());
    assertThat(victim.config().epoch()).isEqualTo(mine.epoch());
    assertThat(owners(victim.config())).isEqualTo(owners(mine));
    nothingMoved(owners, epoch);
  }

  @Test
  void anUnassignWithAMadeUpTermFromAStolenManagerCertificateIsRefused() {
    Map<Integer, PodId> owners = owners(manager.config());
    long epoch = manager.config().epoch();
    List<Integer> served = victim.servedShards();
    var asRogue = podStub(victim, security("rogue-manager"));
    UnassignRequest.Builder r = UnassignRequest.newBuilder().addAllShards(served).setNewEpoch(epoch + 1_000)
        .setManagerTerm(1_000_000).setTerminationTimeoutMillis(100).setClusterId(manager.clusterId().toString());
    refused(() -> asRogue.unassign(r.build()), Status.Code.PERMISSION_DENIED, "not signed by this cluster's manager");
    // A genuine signature of another request does not carry over to a made-up one.
    ByteString otherSig = ConfigSigner.generate().signUnassign(manager.clusterId().toString(), 1_000_000,
        epoch + 1_000, victim.podId(), served, List.of(), 100);
    refused(() -> asRogue.unassign(r.setSignature(otherSig).build()), Status.Code.PERMISSION_DENIED,
        "not signed by this cluster's manager");
    assertThat(count(victimRefusals, "unassign", "atoll:manager")).isEqualTo(1);
    assertThat(victim.servedShards()).isEqualTo(served);
    nothingMoved(owners, epoch);
  }

  @Test
  void anUnassignSignedForAnotherPodOrWithOtherTargetsOrTimeoutIsRefused() {
    Map<Integer, PodId> owners = owners(manager.config());
    long epoch = manager.config().epoch();
    List<Integer> served = victim.servedShards();
    String cluster = manager.clusterId().toString();
    long term = manager.term();
    var asRogue = podStub(victim, security("rogue-manager"));
    List<PodId> targets = served.stream().map(s -> other.podId()).toList();
    UnassignRequest.Builder r = UnassignRequest.newBuilder().addAllShards(served).setNewEpoch(epoch + 1_000)
        .setManagerTerm(term).setTerminationTimeoutMillis(100).setClusterId(cluster)
        .addAllTargets(targets.stream().map(Wire::ref).toList());
    // A genuine signature of the manager's key, over a request made for the other pod: replayed to the victim.
    ByteString forOther = managerKey.signUnassign(cluster, term, epoch + 1_000, other.podId(), served, targets, 100);
    refused(() -> asRogue.unassign(r.setSignature(forOther).build()), Status.Code.PERMISSION_DENIED,
        "not signed by this cluster's manager");
    // Signed for the victim, but the targets or the timeout were changed on the way.
    ByteString genuine = managerKey.signUnassign(cluster, term, epoch + 1_000, victim.podId(), served, targets, 100);
    PodId elsewhere = new PodId(new io.atoll.core.PodAddress("127.0.0.1", 1), 1);
    refused(() -> asRogue.unassign(r.clone().setSignature(genuine).clearTargets()
        .addAllTargets(served.stream().map(s -> Wire.ref(elsewhere)).toList()).build()),
        Status.Code.PERMISSION_DENIED, "not signed by this cluster's manager");
    refused(() -> asRogue.unassign(r.clone().setSignature(genuine).setTerminationTimeoutMillis(1).build()),
        Status.Code.PERMISSION_DENIED, "not signed by this cluster's manager");
    assertThat(victim.servedShards()).isEqualTo(served);
    nothingMoved(owners, epoch);
  }

  @Test
  void aStandbyOfASecureClusterSpeaksTlsAndSendsPodsToTheLeader() {
    PodAddress leaderAt = new PodAddress("127.0.0.1", 4711);
    try (StandbyServer standby = StandbyServer.start("127.0.0.1", 0,
        () -> Optional.of(new AssignmentStore.Leader(leaderAt.toString(), 7)), security("manager"))) {
      ManagedChannel ch = Wire.channel(standby.address(), security("other"), Role.MANAGER);
      channels.add(ch);
      var stub = ShardManagerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS);
      // Before, the standby listened in plaintext: the TLS handshake failed and the pod got no hint.
      assertThatThrownBy(() -> stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(other.podId()))
          .build())).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(LeaderHint.of(e)).contains(leaderAt);
          });
    }
  }
}

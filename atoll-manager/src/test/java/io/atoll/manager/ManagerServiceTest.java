package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.TypeDeclaration;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.core.spi.StoreException;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.NotifyUnhealthyPodRequest;
import io.atoll.transport.grpc.proto.RebalanceRequest;
import io.atoll.transport.grpc.proto.RebalanceResponse;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RegisterResponse;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.RenewLeaseResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnregisterRequest;
import io.atoll.transport.grpc.proto.WatchRequest;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The gRPC face over a fake {@link ManagerCalls}, on a loopback port: what each request reaches
 * the manager as, what each answer carries, and how a refusal or a failure is answered.
 */
class ManagerServiceTest {

  static final ClusterId CLUSTER = ClusterId.random(new Random(7));
  static final Pod A = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 11), PodVersion.of("1.0"));
  static final PodId B = new PodId(new PodAddress("127.0.0.1", 7002), 12);

  final ManagerSecurity security = ManagerSecurity.plaintext();
  final Fake fake = new Fake();
  Server server;
  ManagedChannel channel;
  ShardManagerServiceGrpc.ShardManagerServiceBlockingStub stub;

  /** Records every call; answers with what the test put in place. */
  static final class Fake implements ManagerCalls {
    final List<String> calls = new CopyOnWriteArrayList<>();
    volatile ClusterId clusterId = CLUSTER;
    volatile Supplier<CompletableFuture<ClusterConfig>> config =
        () -> CompletableFuture.completedFuture(ClusterConfig.empty(4).withClusterId(CLUSTER));
    volatile CompletableFuture<Void> leave = CompletableFuture.completedFuture(null);
    volatile boolean renewed = true;
    volatile ShardManager.RoundResult round = new ShardManager.RoundResult(3, 42, 5);

    @Override
    public ClusterId clusterId() {
      return clusterId;
    }

    @Override
    public long term() {
      return 9;
    }

    @Override
    public long leaseTtlMillis() {
      return 1234;
    }

    @Override
    public int numberOfShards() {
      return 4;
    }

    @Override
    public CompletableFuture<ClusterConfig> register(Pod pod, String holder, boolean vouched) {
      calls.add("register " + pod.id() + " holder=" + holder + " vouched=" + vouched);
      return config.get();
    }

    /** The entity types of each registration, as the service read them. */
    final List<java.util.SortedMap<String, TypeDeclaration>> types = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.SortedMap<String, TypeDeclaration> declared = new java.util.TreeMap<>();
    List<String> withoutSpace = List.of();
    volatile boolean declareTypes;

    @Override
    public CompletableFuture<ClusterConfig> register(Pod pod, java.util.SortedMap<String, TypeDeclaration> entityTypes,
        String holder, boolean vouched) {
      types.add(entityTypes);
      return register(pod, holder, vouched);
    }

    @Override
    public CompletableFuture<java.util.SortedMap<String, TypeDeclaration>> entityTypes() {
      return CompletableFuture.completedFuture(declared);
    }

    @Override
    public CompletableFuture<List<String>> settingsWithoutSpace() {
      return CompletableFuture.completedFuture(withoutSpace);
    }

    @Override
    public CompletableFuture<Renewal> renew(PodId pod, boolean declaresTypes) {
      calls.add("renew " + pod + (declaresTypes ? " declares" : ""));
      return CompletableFuture.completedFuture(new Renewal(renewed, declareTypes));
    }

    @Override
    public CompletableFuture<Void> unregister(PodId pod) {
      calls.add("unregister " + pod);
      return leave;
    }

    @Override
    public CompletableFuture<Void> drain(PodId pod) {
      calls.add("drain " + pod);
      return leave;
    }

    @Override
    public CompletableFuture<Boolean> renew(PodId pod) {
      calls.add("renew " + pod);
      return CompletableFuture.completedFuture(renewed);
    }

    @Override
    public void reportUnhealthy(PodId pod, PodId reporter) {
      calls.add("unhealthy " + pod + " by " + reporter);
    }

    @Override
    public CompletableFuture<ClusterConfig> assignments() {
      calls.add("assignments");
      return config.get();
    }

    @Override
    public void watch(ServerCallStreamObserver<ConfigBytes> observer) {
      calls.add("watch");
      observer.onNext(Wire.bytes(ClusterConfig.empty(2)));
      observer.onCompleted();
    }

    @Override
    public CompletableFuture<ShardManager.RoundResult> rebalance() {
      calls.add("rebalance");
      return CompletableFuture.completedFuture(round);
    }
  }

  @BeforeEach
  void start() {
    server = Wire.startServer("127.0.0.1", 0, List.<BindableService>of(new ManagerService(fake, security)));
    channel = Wire.channel(new PodAddress("127.0.0.1", Wire.port(server)));
    stub = ShardManagerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws InterruptedException {
    Wire.close(channel);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  ByteString credential(PodId pod) {
    return security.signer().credential(CLUSTER.toString(), pod, "");
  }

  static void refused(ThrowingCallable call, Status.Code code, String description) {
    assertThatThrownBy(call).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(code);
      assertThat(e.getStatus().getDescription()).contains(description);
    });
  }

  RegisterRequest.Builder register() {
    return RegisterRequest.newBuilder().setPod(Wire.info(A));
  }

  @Test
  void registerAnswersWithTheConfigTheLeaseTheShardsTheTermTheClusterAndACredential() {
    RegisterResponse r = stub.register(register().setClusterId(CLUSTER.toString()).build());
    assertThat(Wire.config(r.getConfig())).isEqualTo(ClusterConfig.empty(4).withClusterId(CLUSTER));
    assertThat(r.getConfig()).isEqualTo(security.signer().bytes(ClusterConfig.empty(4).withClusterId(CLUSTER)));
    assertThat(r.getLeaseTtlMillis()).isEqualTo(1234);
    assertThat(r.getNumberOfShards()).isEqualTo(4);
    assertThat(r.getManagerTerm()).isEqualTo(9);
    assertThat(r.getClusterId()).isEqualTo(CLUSTER.toString());
    assertThat(r.getCredential()).isEqualTo(credential(A.id()));
    assertThat(fake.calls).containsExactly("register " + A.id() + " holder= vouched=false");
  }

  @Test
  void aPodDeclaresItsEntityTypesAndOneThatDeclaresNoneIsStillAccepted() {
    Pod batch = new Pod(B, io.atoll.core.PodVersion.of("1.0"), List.of("", "batch"));
    TypeDeclaration job = TypeDeclaration.of("batch", io.atoll.core.ShardHasher.DEFAULT);
    Map<String, TypeDeclaration> declared = Map.of("Job", job, "Report", TypeDeclaration.roleOnly("batch"),
        "counter", TypeDeclaration.of("", (id, n) -> 1));
    stub.register(RegisterRequest.newBuilder().setPod(Wire.info(batch, declared)).build());
    stub.register(register().build()); // an older pod: no types
    assertThat(fake.types).containsExactly(new java.util.TreeMap<>(declared), new java.util.TreeMap<>());
    fake.declared = new java.util.TreeMap<>(Map.of("Job", job, "Report", TypeDeclaration.roleOnly("batch")));
    fake.withoutSpace = List.of("mailer");
    ConfigBytes answer = stub.getAssignments(GetAssignmentsRequest.getDefaultInstance());
    assertThat(answer.getEntityTypesList()).extracting(t -> t.getName() + "@" + t.getRole() + " " + t.getHasher())
        .containsExactly("Job@batch ShardHasher.DEFAULT", "Report@batch ");
    assertThat(answer.getEntityTypes(0).getHasherFingerprint()).isEqualTo(job.fingerprint());
    assertThat(answer.getEntityTypesOmitted()).isZero();
    assertThat(answer.getSettingsWithoutSpaceList()).containsExactly("mailer");
  }

  @Test
  void aNameOutOfFormIsAcceptedFromAPodThatDeclaresNoHasherAndRefusedFromOneThatDoes() {
    // A pod of the previous version checked only the length; upgrading the manager must not lock it out.
    Map<String, TypeDeclaration> old = Map.of("my job", TypeDeclaration.roleOnly(""));
    stub.register(RegisterRequest.newBuilder().setPod(Wire.info(A, old)).build());
    assertThat(fake.types).containsExactly(new java.util.TreeMap<>(old));
    refused(() -> stub.register(RegisterRequest.newBuilder().setPod(Wire.info(A, Map.of("my job",
        TypeDeclaration.of("", io.atoll.core.ShardHasher.DEFAULT)))).build()), Status.Code.INVALID_ARGUMENT,
        "pod entity type: character U+0020 at 2");
    refused(() -> stub.register(RegisterRequest.newBuilder().setPod(Wire.info(A, Map.of("x".repeat(256),
        TypeDeclaration.roleOnly("")))).build()), Status.Code.INVALID_ARGUMENT, "length 256 (expected: 1..255)");
    assertThat(io.atoll.core.EntityAddress.printableTypeName("my job\\n")).isEqualTo("my\\u0020job\\u005Cn");
    assertThat(io.atoll.core.EntityAddress.printableTypeName("a\nb")).isEqualTo("a\\u000Ab");
    assertThat(io.atoll.core.EntityAddress.printableTypeName("Job.v2")).isEqualTo("Job.v2");
  }

  @Test
  void getAssignmentsListsAtMostItsBoundOfTypesAndCountsTheRest() {
    java.util.SortedMap<String, TypeDeclaration> many = new java.util.TreeMap<>();
    // Every field at its most: a 255-character name, a 64-byte role and a 255-character hasher name.
    String role = "r".repeat(io.atoll.core.Space.MAX_ROLE_BYTES);
    TypeDeclaration full = new TypeDeclaration(role, -1L, "h".repeat(TypeDeclaration.MAX_HASHER_NAME));
    for (int i = 0; i < Wire.MAX_LISTED_TYPES + 7; i++) {
      many.put(String.format("t%05d", i) + "x".repeat(249), full);
    }
    fake.declared = many;
    ConfigBytes answer = stub.getAssignments(GetAssignmentsRequest.getDefaultInstance());
    assertThat(answer.getEntityTypesCount()).isEqualTo(Wire.MAX_LISTED_TYPES);
    assertThat(answer.getEntityTypesOmitted()).isEqualTo(7);
    assertThat(answer.getEntityTypes(0).getName()).startsWith("t00000");
    // The most it can carry is far below the 32 MiB a pod or atoll status reads.
    assertThat(answer.getSerializedSize()).isGreaterThan(2 << 20).isLessThan(4 << 20);
    // A name of an older pod (no hasher) may be 255 characters of three UTF-8 bytes each.
    many.clear();
    for (int i = 0; i < Wire.MAX_LISTED_TYPES; i++) {
      many.put(String.format("t%05d", i) + "\u8a9e".repeat(249), TypeDeclaration.roleOnly(role));
    }
    assertThat(stub.getAssignments(GetAssignmentsRequest.getDefaultInstance()).getSerializedSize())
        .isLessThan(4 << 20);
  }

  @Test
  void aRenewalCarriesWhetherThePodDeclaresItsTypesAndTheAnswerWhetherItMust() {
    fake.declareTypes = true;
    RenewLeaseResponse r = stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(A.id()))
        .setCredential(credential(A.id())).setDeclaresTypes(true).build());
    assertThat(r.getDeclareTypes()).isTrue();
    assertThat(fake.calls).containsExactly("renew " + A.id() + " declares");
  }

  @Test
  void badEntityTypesInARegistrationAreRefusedNamingWhatIsWrong() {
    Pod batch = new Pod(B, io.atoll.core.PodVersion.of("1.0"), List.of("batch"));
    java.util.function.Function<java.util.List<io.atoll.transport.grpc.proto.EntityTypeInfo>, RegisterRequest> req =
        types -> RegisterRequest.newBuilder().setPod(Wire.info(batch).toBuilder().addAllEntityTypes(types)).build();
    java.util.function.BiFunction<String, String, io.atoll.transport.grpc.proto.EntityTypeInfo> type =
        (name, role) -> io.atoll.transport.grpc.proto.EntityTypeInfo.newBuilder().setName(name).setRole(role).build();
    refused(() -> stub.register(req.apply(List.of(type.apply("", "batch")))), Status.Code.INVALID_ARGUMENT,
        "pod entity type: length 0 (expected: 1..255)");
    refused(() -> stub.register(req.apply(List.of(type.apply("x".repeat(256), "batch")))),
        Status.Code.INVALID_ARGUMENT, "pod entity type: length 256 (expected: 1..255)");
    // The form is checked for pods that declare a hasher (an older pod's names are printed escaped).
    refused(() -> stub.register(req.apply(List.of(type.apply("x".repeat(256), "batch").toBuilder().setHasher("H")
        .setHasherFingerprint(1).build()))), Status.Code.INVALID_ARGUMENT,
        "pod entity type: length 256 (expected: 1..255 of [A-Za-z0-9._:$-])");
    refused(() -> stub.register(req.apply(List.of(type.apply("Job\n12:00 INFO forged", "batch").toBuilder()
        .setHasher("H").setHasherFingerprint(1).build()))), Status.Code.INVALID_ARGUMENT, "pod entity type: character U+000A at 3 (expected: 1..255 of [A-Za-z0-9._:$-])");
    refused(() -> stub.register(req.apply(List.of(type.apply("Job", "batch").toBuilder().setHasher("h\u001b[2J")
        .setHasherFingerprint(1).build()))), Status.Code.INVALID_ARGUMENT,
        "pod entity type 'Job': hasher name: character U+001B at 1");
    refused(() -> stub.register(req.apply(List.of(type.apply("Job", "batch").toBuilder().setHasherFingerprint(1)
        .build()))), Status.Code.INVALID_ARGUMENT, "pod entity type 'Job': hasher fingerprint 1 without a hasher name");
    refused(() -> stub.register(req.apply(List.of(type.apply("Job", "b/tch")))), Status.Code.INVALID_ARGUMENT,
        "pod entity type 'Job': role: 'b/tch' has '/' at 1");
    refused(() -> stub.register(req.apply(List.of(type.apply("Job", "web")))), Status.Code.INVALID_ARGUMENT,
        "pod entity type 'Job': role 'web' (expected: one of the pod's roles [batch])");
    refused(() -> stub.register(req.apply(List.of(type.apply("Job", "batch"), type.apply("Job", "batch")))),
        Status.Code.INVALID_ARGUMENT, "pod entity type 'Job': declared twice (expected: once)");
    List<io.atoll.transport.grpc.proto.EntityTypeInfo> many = new java.util.ArrayList<>();
    for (int i = 0; i <= Wire.MAX_ENTITY_TYPES; i++) {
      many.add(type.apply("t" + i, "batch"));
    }
    refused(() -> stub.register(req.apply(many)), Status.Code.INVALID_ARGUMENT,
        "pod entity types: 1025 (expected: 0..1024)");
    assertThat(fake.calls).isEmpty();
  }

  @Test
  void aRegistrationIsVouchedOnlyWithItsIncarnationsCredential() {
    stub.register(register().setCredential(credential(A.id())).build());
    stub.register(register().setCredential(credential(B)).build());
    stub.register(register().build());
    assertThat(fake.calls).containsExactly("register " + A.id() + " holder= vouched=true",
        "register " + A.id() + " holder= vouched=false", "register " + A.id() + " holder= vouched=false");
  }

  @Test
  void aPodOfAnotherClusterIsRefusedAndReachesNothing() {
    String other = ClusterId.random(new Random(8)).toString();
    refused(() -> stub.register(register().setClusterId(other).build()), Status.Code.FAILED_PRECONDITION,
        "belongs to cluster " + other + ", but this shard manager serves cluster " + CLUSTER);
    refused(() -> stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(A.id())).setClusterId(other)
        .setCredential(credential(A.id())).build()), Status.Code.FAILED_PRECONDITION, "belongs to cluster");
    refused(() -> stub.register(register().setClusterId("not an id").build()), Status.Code.INVALID_ARGUMENT, "");
    refused(() -> stub.register(RegisterRequest.getDefaultInstance()), Status.Code.INVALID_ARGUMENT, "pod: missing");
    assertThat(fake.calls).isEmpty();
  }

  @Test
  void aClusterIsNotCheckedWhileEitherSideHasNone() {
    stub.register(register().build());
    fake.clusterId = ClusterId.NONE;
    stub.register(register().setClusterId(CLUSTER.toString()).build());
    assertThat(fake.calls).hasSize(2);
  }

  @Test
  void failuresAreAnsweredByKind() {
    fake.config = () -> CompletableFuture.failedFuture(new IllegalStateException("shard manager is stopping"));
    refused(() -> stub.register(register().build()), Status.Code.FAILED_PRECONDITION, "shard manager is stopping");
    fake.config = () -> CompletableFuture.failedFuture(new SecurityException("pod taken by another holder"));
    refused(() -> stub.register(register().build()), Status.Code.PERMISSION_DENIED, "pod taken by another holder");
    fake.config = () -> CompletableFuture.failedFuture(new StoreException("disk full"));
    refused(() -> stub.register(register().build()), Status.Code.UNAVAILABLE, "shard manager: disk full");
    // "not yet" is not "down": a pod that reads UNAVAILABLE moves to a standby
    fake.config = () -> CompletableFuture.failedFuture(new PodTypes.Pending("2 live pods have not declared"));
    refused(() -> stub.register(register().build()), Status.Code.ABORTED,
        Wire.TYPES_PENDING + "2 live pods have not declared");
    // the same, wrapped as a later stage of a future wraps it
    fake.config = () -> CompletableFuture.<ClusterConfig>failedFuture(new IllegalStateException("stopped"))
        .thenApply(c -> c);
    refused(() -> stub.getAssignments(GetAssignmentsRequest.getDefaultInstance()), Status.Code.FAILED_PRECONDITION,
        "stopped");
  }

  @Test
  void leavingAndDrainingNeedTheCredential() {
    UnregisterRequest.Builder leave = UnregisterRequest.newBuilder().setPod(Wire.ref(A.id()));
    refused(() -> stub.unregister(leave.build()), Status.Code.PERMISSION_DENIED,
        "unregister for pod " + A.id() + " refused: no credential");
    refused(() -> stub.unregister(leave.setCredential(credential(B)).build()), Status.Code.PERMISSION_DENIED,
        "refused: a wrong credential");
    assertThat(fake.calls).isEmpty();
    stub.unregister(leave.setCredential(credential(A.id())).build());
    stub.unregister(leave.setDrain(true).build());
    assertThat(fake.calls).containsExactly("unregister " + A.id(), "drain " + A.id());
  }

  @Test
  void aRenewalSaysWhetherThePodIsKnown() {
    RenewLeaseRequest renew = RenewLeaseRequest.newBuilder().setPod(Wire.ref(A.id()))
        .setCredential(credential(A.id())).build();
    RenewLeaseResponse r = stub.renewLease(renew);
    assertThat(r.getStatus()).isEqualTo(RenewLeaseResponse.Status.RENEWED);
    assertThat(r.getLeaseTtlMillis()).isEqualTo(1234);
    assertThat(r.getManagerTerm()).isEqualTo(9);
    fake.renewed = false;
    assertThat(stub.renewLease(renew).getStatus()).isEqualTo(RenewLeaseResponse.Status.UNKNOWN_POD);
    refused(() -> stub.renewLease(renew.toBuilder().clearCredential().build()), Status.Code.PERMISSION_DENIED,
        "lease renewal for pod");
    assertThat(fake.calls).containsExactly("renew " + A.id(), "renew " + A.id());
  }

  @Test
  void anUnhealthyReportNamesItsReporterAndCarriesTheReportersCredential() {
    NotifyUnhealthyPodRequest.Builder report = NotifyUnhealthyPodRequest.newBuilder().setPod(Wire.ref(B));
    refused(() -> stub.notifyUnhealthyPod(report.build()), Status.Code.INVALID_ARGUMENT, "reporter: missing");
    report.setReporter(Wire.ref(A.id()));
    refused(() -> stub.notifyUnhealthyPod(report.setCredential(credential(B)).build()),
        Status.Code.PERMISSION_DENIED, "unhealthy report for pod " + A.id());
    refused(() -> stub.notifyUnhealthyPod(report.setPod(Wire.ref(B).toBuilder().setPort(-1)).build()),
        Status.Code.INVALID_ARGUMENT, "pod:");
    assertThat(fake.calls).isEmpty();
    stub.notifyUnhealthyPod(report.setPod(Wire.ref(B)).setCredential(credential(A.id())).build());
    assertThat(fake.calls).containsExactly("unhealthy " + B + " by " + A.id());
  }

  @Test
  void assignmentsWatchAndRebalanceCarryWhatTheManagerSaid() {
    assertThat(stub.getAssignments(GetAssignmentsRequest.getDefaultInstance()))
        .isEqualTo(security.signer().bytes(ClusterConfig.empty(4).withClusterId(CLUSTER)));
    Iterator<ConfigBytes> watched = stub.watch(WatchRequest.getDefaultInstance());
    assertThat(Wire.config(watched.next())).isEqualTo(ClusterConfig.empty(2));
    assertThat(watched.hasNext()).isFalse();
    RebalanceResponse r = stub.rebalance(RebalanceRequest.getDefaultInstance());
    assertThat(r.getMoved()).isEqualTo(3);
    assertThat(r.getEpoch()).isEqualTo(42);
    assertThat(r.getRemaining()).isEqualTo(5);
    assertThat(fake.calls).containsExactly("assignments", "watch", "rebalance");
  }
}

package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The refusals of the manager's gRPC face as an operator reads them in the security log: who was
 * refused what, and why; over a fake {@link ManagerCalls} on a loopback port. The refusal log
 * logs once per caller and pod for the whole process, so each test uses pods of its own.
 */
class ManagerServiceLogTest {

  private static final String SECURITY = "io.atoll.security";

  final ManagerSecurity security = ManagerSecurity.plaintext();
  final ManagerServiceTest.Fake fake = new ManagerServiceTest.Fake();
  Server server;
  ManagedChannel channel;
  ShardManagerServiceGrpc.ShardManagerServiceBlockingStub stub;

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

  /** A pod no other test names: the refusal log remembers the pods it logged. */
  private static Pod freshPod() {
    return new Pod(new PodId(new PodAddress("127.0.0.1", 7401), System.nanoTime()), PodVersion.of("1.0"));
  }

  @Test
  void aRenewalWithoutOrWithAWrongCredentialIsLoggedOnceWithTheReason() {
    PodId none = freshPod().id();
    PodId wrong = freshPod().id();
    ByteString othersCredential = security.signer().credential(fake.clusterId.toString(), none, "");
    try (LogLines log = new LogLines()) {
      for (int i = 0; i < 2; i++) {
        assertThatThrownBy(() -> stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(none)).build()))
            .isInstanceOf(StatusRuntimeException.class);
      }
      assertThatThrownBy(() -> stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(wrong))
          .setCredential(othersCredential).build())).isInstanceOf(StatusRuntimeException.class);
      assertThat(log.of(SECURITY, "WARN")).containsExactly(
          "refused lease renewal for pod " + none + " from a caller without TLS: no credential (logged once per peer)",
          "refused lease renewal for pod " + wrong + " from a caller without TLS: wrong credential (logged once per"
              + " peer)");
    }
    assertThat(fake.calls).isEmpty();
  }

  @Test
  void aRegistrationTheManagerRefusesForItsHolderIsLogged() {
    Pod pod = freshPod();
    // Refused by a later stage, as the manager's loop refuses it: the cause arrives wrapped.
    fake.config = () -> CompletableFuture.<ClusterConfig>completedFuture(null).thenApply(c -> {
      throw new SecurityException("register for pod " + pod.id() + " refused: another holder registered it");
    });
    try (LogLines log = new LogLines()) {
      assertThatThrownBy(() -> stub.register(RegisterRequest.newBuilder().setPod(Wire.info(pod)).build()))
          .isInstanceOf(StatusRuntimeException.class);
      assertThat(log.of(SECURITY, "WARN")).containsExactly("refused register for pod " + pod.id() + " from a caller"
          + " without TLS: register for pod " + pod.id() + " refused: another holder registered it (logged once per"
          + " peer)");
    }
  }
}

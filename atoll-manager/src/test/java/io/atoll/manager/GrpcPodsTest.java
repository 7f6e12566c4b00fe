package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.manager.pods.GrpcPods;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodInfo;
import io.atoll.transport.grpc.proto.UnassignRequest;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.ManagerTrust;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link GrpcPods}, the manager's calls to pods, against a pod's real gRPC face on loopback. */
class GrpcPodsTest {

  private final ConfigSigner signer = ConfigSigner.generate();
  private final GrpcPods pods = new GrpcPods(WireSecurity.PLAINTEXT, signer);
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    pods.close();
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private FakePodServer pod(long incarnation) {
    FakePodServer p = new FakePodServer(incarnation);
    closing.add(p);
    return p;
  }

  private static <T> T within(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** The status a failed call completed with. */
  private static Status failure(CompletableFuture<?> f) {
    Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> f.get(10, TimeUnit.SECONDS));
    assertThat(t).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(StatusRuntimeException.class);
    return ((StatusRuntimeException) t.getCause()).getStatus();
  }

  @Test
  void aPingIsAnsweredOnlyByTheSameIncarnation() throws Exception {
    FakePodServer a = pod(3);
    assertThat(within(pods.ping(a.pod.id(), Duration.ofSeconds(5)))).isTrue();
    a.answerAs.set(new Pod(new PodId(a.pod.address(), 4), a.pod.version()));
    assertThat(within(pods.ping(a.pod.id(), Duration.ofSeconds(5)))).as("a restarted pod at the address").isFalse();
    a.answerAs.set(new Pod(new PodId(new PodAddress("127.0.0.1", a.pod.address().port() + 1), 3),
        a.pod.version()));
    assertThat(within(pods.ping(a.pod.id(), Duration.ofSeconds(5)))).as("another address").isFalse();
    a.pingAnswer.set(PingResponse.getDefaultInstance());
    assertThat(within(pods.ping(a.pod.id(), Duration.ofSeconds(5)))).as("an answer naming no pod").isFalse();
    a.pingAnswer.set(PingResponse.newBuilder().setPod(PodInfo.newBuilder().setPod(Wire.ref(a.pod.id()))).build());
    assertThat(within(pods.ping(a.pod.id(), Duration.ofSeconds(5)))).as("an answer without a version")
        .isFalse();
    a.pingAnswer.set(null);
    a.answerAs.set(a.pod);
    assertThat(within(pods.ping(a.pod.id(), Duration.ofSeconds(5)))).isTrue();
    assertThat(a.pings.get()).isEqualTo(6);
  }

  @Test
  void aPingOfAPodThatDoesNotAnswerIsFalseAtItsTimeout() throws Exception {
    FakePodServer a = pod(1);
    a.silent = true;
    assertThat(within(pods.ping(a.pod.id(), Duration.ofMillis(300)))).isFalse();
    assertThat(a.pings.get()).isEqualTo(1);
    PodId nobody = new PodId(new PodAddress("127.0.0.1", freePort()), 1);
    assertThat(within(pods.ping(nobody, Duration.ofMillis(300)))).as("nothing listens there").isFalse();
  }

  @Test
  void aCallWaitsForAPodThatStartsListeningWithinTheDeadline() throws Exception {
    int port = freePort();
    PodId later = new PodId(new PodAddress("127.0.0.1", port), 1);
    CompletableFuture<Boolean> ping = pods.ping(later, Duration.ofSeconds(20));
    // The channel's first connects fail (nothing listens yet): the call keeps waiting for a connection.
    await("the ping stays pending while nothing listens").during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(5)).until(() -> !ping.isDone());
    FakePodServer p = new FakePodServer(1, port);
    closing.add(p);
    assertThat(within(ping)).isTrue();
  }

  @Test
  void anUnassignCarriesTheRequestSignedForThatPodAndReturnsWhatItReleased() throws Exception {
    FakePodServer a = pod(1);
    PodId target = new PodId(new PodAddress("127.0.0.1", 7001), 2);
    ClusterId cluster = new ClusterId(5, 6);
    pods.clusterId(cluster);
    a.releaseOnly = Set.of(4, 9);
    Set<Integer> released = within(pods.unassign(a.pod.id(), List.of(4, 7, 9), List.of(target, target, target), 12,
        Duration.ofMillis(1500), 3, Duration.ofSeconds(5)));
    assertThat(released).containsExactlyInAnyOrder(4, 9);
    UnassignRequest r = a.unassigns.get(0);
    assertThat(r.getShardsList()).containsExactly(4, 7, 9);
    assertThat(r.getTargetsList()).containsExactly(Wire.ref(target), Wire.ref(target), Wire.ref(target));
    assertThat(r.getNewEpoch()).isEqualTo(12);
    assertThat(r.getTerminationTimeoutMillis()).isEqualTo(1500);
    assertThat(r.getManagerTerm()).isEqualTo(3);
    assertThat(r.getClusterId()).isEqualTo(cluster.toString());
    ManagerTrust trust = trusting(signer);
    assertThatCode(() -> trust.checkUnassign(r, a.pod.id())).as("signed by the manager's key for this pod")
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> trust.checkUnassign(r, new PodId(a.pod.address(), 2)))
        .as("not for another incarnation").isInstanceOf(StatusRuntimeException.class);
    assertThatThrownBy(() -> trusting(ConfigSigner.generate()).checkUnassign(r, a.pod.id()))
        .as("not with another key").isInstanceOf(StatusRuntimeException.class);
  }

  @Test
  void anUnassignWithoutTargetsSendsNoneAndClusterIdIsEmptyUntilKnown() throws Exception {
    FakePodServer a = pod(1);
    assertThat(within(pods.unassign(a.pod.id(), List.of(2), 5, Duration.ofMillis(200), 1, Duration.ofSeconds(5))))
        .containsExactly(2);
    UnassignRequest r = a.unassigns.get(0);
    assertThat(r.getTargetsCount()).isZero();
    assertThat(r.getClusterId()).isEmpty();
    assertThatCode(() -> trusting(signer).checkUnassign(r, a.pod.id())).doesNotThrowAnyException();
  }

  @Test
  void aRefusedUnassignFailsWithThePodsStatus() {
    FakePodServer a = pod(1);
    a.failUnassign = true;
    Status s = failure(pods.unassign(a.pod.id(), List.of(1), 2, Duration.ofMillis(100), 1, Duration.ofSeconds(5)));
    assertThat(s.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(s.getDescription()).isEqualTo("injected");
  }

  @Test
  void anUnassignThatIsNotAnsweredFailsAtItsDeadline() {
    FakePodServer a = pod(1);
    a.silent = true;
    Status s = failure(pods.unassign(a.pod.id(), List.of(1), 2, Duration.ofMillis(100), 1, Duration.ofMillis(300)));
    assertThat(s.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(a.unassigns).hasSize(1);
  }

  @Test
  void aPushDeliversTheConfigSignedByTheManagersKey() throws Exception {
    FakePodServer a = pod(1);
    FakePodServer b = pod(2);
    ClusterConfig c = ClusterConfig.empty(4).toBuilder().clusterId(new ClusterId(1, 2)).build();
    pods.push(a.pod.id(), c, Duration.ofSeconds(5));
    pods.push(b.pod.id(), c, Duration.ofSeconds(5));
    await().atMost(Duration.ofSeconds(10)).until(() -> a.pushed.size() == 1 && b.pushed.size() == 1);
    assertThat(a.lastPushed()).isEqualTo(c);
    assertThat(b.lastPushed()).isEqualTo(c);
    ManagerTrust trust = trusting(signer);
    assertThat(trust.fromPeer(a.pushedBytes.get(0), "a push")).isEqualTo(c);
    assertThat(trust.fromPeer(b.pushedBytes.get(0), "a push")).isEqualTo(c);
    ClusterConfig next = c.toBuilder().claim(0, Claim.offline(1)).build();
    pods.push(a.pod.id(), next, Duration.ofSeconds(5));
    await().atMost(Duration.ofSeconds(10)).until(() -> a.pushed.size() == 2);
    assertThat(a.lastPushed()).as("a new config is encoded anew").isEqualTo(next);
    assertThat(trust.fromPeer(a.pushedBytes.get(1), "a push")).isEqualTo(next);
  }

  @Test
  void aPushToAPodThatIsNotThereIsDroppedQuietly() throws Exception {
    PodId nobody = new PodId(new PodAddress("127.0.0.1", freePort()), 1);
    assertThatCode(() -> pods.push(nobody, ClusterConfig.empty(1), Duration.ofMillis(200)))
        .doesNotThrowAnyException();
  }

  @Test
  void closedPodsRefuseEveryCallWithoutThrowing() throws Exception {
    FakePodServer a = pod(1);
    assertThat(within(pods.ping(a.pod.id(), Duration.ofSeconds(5)))).isTrue();
    pods.close();
    assertThat(within(pods.ping(a.pod.id(), Duration.ofSeconds(5)))).isFalse();
    CompletableFuture<Set<Integer>> u = pods.unassign(a.pod.id(), List.of(1), 2, Duration.ofMillis(100), 1,
        Duration.ofSeconds(5));
    assertThatThrownBy(() -> u.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("manager closed");
    assertThatCode(() -> pods.push(a.pod.id(), ClusterConfig.empty(1), Duration.ofSeconds(5)))
        .doesNotThrowAnyException();
    assertThat(a.pings.get()).as("nothing reached the pod after the close").isEqualTo(1);
    assertThat(a.unassigns).isEmpty();
    assertThat(a.pushed).isEmpty();
  }

  @Test
  void aCloseEndsTheCallsInFlightAtOnceNotAtTheirDeadline() throws Exception {
    FakePodServer a = pod(1);
    a.silent = true;
    CompletableFuture<Boolean> ping = pods.ping(a.pod.id(), Duration.ofSeconds(60));
    CompletableFuture<Set<Integer>> unassign = pods.unassign(a.pod.id(), List.of(1), 2, Duration.ofMillis(100), 1,
        Duration.ofSeconds(60));
    await().atMost(Duration.ofSeconds(10)).until(() -> a.pings.get() == 1 && a.unassigns.size() == 1);
    pods.close();
    assertThat(within(ping)).isFalse();
    assertThat(failure(unassign).getCode()).isIn(Status.Code.CANCELLED, Status.Code.UNAVAILABLE);
  }

  @Test
  void aPodWithAnotherVersionStillAnswersAsItself() throws Exception {
    FakePodServer a = pod(1);
    a.answerAs.set(new Pod(a.pod.id(), PodVersion.of("2.0")));
    assertThat(within(pods.ping(a.pod.id(), Duration.ofSeconds(5)))).isTrue();
  }

  /** A pod's trust in {@code key}, learned as from its manager's own connection. */
  private static ManagerTrust trusting(ConfigSigner key) {
    ManagerTrust t = new ManagerTrust();
    t.fromManager(key.bytes(ClusterConfig.empty(1)));
    return t;
  }
}

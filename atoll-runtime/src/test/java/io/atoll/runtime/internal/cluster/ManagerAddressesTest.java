package io.atoll.runtime.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.transport.grpc.LeaderHint;
import io.atoll.transport.grpc.Wire;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Which manager a pod's link moves to after a failure, on a virtual clock: a leader that was
 * killed is named by the standby until its store lease lapses, and the link must not bounce
 * between the two at every retry (the "leader-following flap").
 */
class ManagerAddressesTest {

  private static final PodAddress LEADER = new PodAddress("127.0.0.1", 7070);
  private static final PodAddress STANDBY = new PodAddress("127.0.0.1", 7071);
  private static final PodAddress NEW_LEADER = new PodAddress("127.0.0.1", 7072);

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final ManagerAddresses managers = new ManagerAddresses(List.of(LEADER, STANDBY), Wire::channel, now::get);

  @AfterEach
  void close() {
    managers.close();
  }

  private static StatusRuntimeException unreachable() {
    return Status.UNAVAILABLE.withDescription("io exception (Connection refused)").asRuntimeException();
  }

  private static StatusRuntimeException standbyNames(PodAddress leader, long term) {
    return LeaderHint.notLeader(Optional.of(leader), term);
  }

  private void advanceMillis(long ms) {
    now.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
  }

  @Test
  void aStandbyNamingTheKilledLeaderKeepsTheLinkAtTheStandbyInsteadOfBouncing() {
    assertThat(managers.failed(LEADER, unreachable())).isTrue(); // kill -9 of the leader
    assertThat(managers.current()).isEqualTo(STANDBY);
    int moves = 0;
    for (int retry = 0; retry < 8; retry++) { // retries over 800 ms, within the leader's store lease
      advanceMillis(100);
      if (managers.failed(managers.current(), managers.current().equals(STANDBY) ? standbyNames(LEADER, 4)
          : unreachable())) {
        moves++;
      }
    }
    assertThat(moves).as("moves while the standby names the dead leader").isZero();
    assertThat(managers.current()).isEqualTo(STANDBY);
  }

  @Test
  void theNamedLeaderIsTriedAgainOncePerDownPeriodSoAPausedLeaderIsFoundWhenItResumes() {
    managers.failed(LEADER, Status.DEADLINE_EXCEEDED.asRuntimeException()); // paused: no answer
    assertThat(managers.current()).isEqualTo(STANDBY);
    assertThat(managers.failed(STANDBY, standbyNames(LEADER, 4))).isFalse();
    advanceMillis(TimeUnit.NANOSECONDS.toMillis(ManagerAddresses.DOWN_NANOS));
    assertThat(managers.failed(STANDBY, standbyNames(LEADER, 4))).as("tried again after the down period").isTrue();
    assertThat(managers.current()).isEqualTo(LEADER);
    // still no answer: back to the standby, and the same term is not followed for another period
    assertThat(managers.failed(LEADER, unreachable())).isTrue();
    assertThat(managers.failed(STANDBY, standbyNames(LEADER, 4))).isFalse();
    assertThat(managers.current()).isEqualTo(STANDBY);
  }

  @Test
  void anErrorFromALiveLeaderDoesNotMarkItDownSoTheStandbyCanSendThePodBackAtOnce() {
    // the leader answered, with an error of its own (not "unreachable"): the link moves on, but a
    // standby naming that leader must be followed back at once, not after the down period
    assertThat(managers.failed(LEADER, Status.FAILED_PRECONDITION.withDescription("busy").asRuntimeException()))
        .isTrue();
    assertThat(managers.current()).isEqualTo(STANDBY);
    assertThat(managers.failed(STANDBY, standbyNames(LEADER, 4))).as("followed back at once").isTrue();
    assertThat(managers.current()).isEqualTo(LEADER);
  }

  @Test
  void aNewerTermOrAnotherLeaderIsFollowedAtOnce() {
    managers.failed(LEADER, unreachable());
    assertThat(managers.failed(STANDBY, standbyNames(NEW_LEADER, 5))).isTrue();
    assertThat(managers.current()).isEqualTo(NEW_LEADER);
    assertThat(managers.failed(NEW_LEADER, standbyNames(LEADER, 6))).as("the old address leads again, newer term")
        .isFalse(); // down without a known term: passed over for the down period
    advanceMillis(TimeUnit.NANOSECONDS.toMillis(ManagerAddresses.DOWN_NANOS));
    assertThat(managers.failed(NEW_LEADER, standbyNames(LEADER, 6))).isTrue();
    assertThat(managers.current()).isEqualTo(LEADER);
  }

  @Test
  void aLeaderFollowedUnderATermAndThenUnreachableIsFollowedAgainUnderANewerOne() {
    managers.failed(LEADER, standbyNames(NEW_LEADER, 5));
    assertThat(managers.current()).isEqualTo(NEW_LEADER);
    managers.failed(NEW_LEADER, unreachable());
    assertThat(managers.current()).isEqualTo(STANDBY);
    assertThat(managers.failed(STANDBY, standbyNames(NEW_LEADER, 5))).isFalse();
    assertThat(managers.failed(STANDBY, standbyNames(NEW_LEADER, 7))).as("restarted and leading again").isTrue();
  }

  @Test
  void aStandbyThatKnowsNoLeaderIsStayedWithWhenTheOtherAddressIsDown() {
    managers.failed(LEADER, unreachable());
    assertThat(managers.failed(STANDBY, LeaderHint.notLeader(Optional.empty(), 0))).isFalse();
    assertThat(managers.current()).isEqualTo(STANDBY);
  }

  @Test
  void withEveryAddressDownTheLinkStillGoesRoundThem() {
    managers.failed(LEADER, unreachable());
    assertThat(managers.failed(STANDBY, unreachable())).isTrue();
    assertThat(managers.current()).isEqualTo(LEADER);
  }

  @Test
  void aHintFromAnOlderStandbyWithoutTheTermTrailerIsStillFollowed() {
    io.grpc.Metadata trailers = new io.grpc.Metadata();
    trailers.put(LeaderHint.KEY, NEW_LEADER.toString());
    assertThat(managers.failed(LEADER, Status.UNAVAILABLE.asRuntimeException(trailers))).isTrue();
    assertThat(managers.current()).isEqualTo(NEW_LEADER);
  }
}

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
  void withEveryAddressDownTheLinkStillGoesRoundThemAtTheSwitchBackOffsPace() {
    managers.failed(LEADER, unreachable());
    assertThat(managers.failed(STANDBY, unreachable())).as("just moved: not at once").isFalse();
    advanceMillis(TimeUnit.NANOSECONDS.toMillis(ManagerAddresses.SWITCH_BACKOFF.initialNanos()));
    assertThat(managers.failed(STANDBY, unreachable())).isTrue();
    assertThat(managers.current()).isEqualTo(LEADER);
  }

  /**
   * The chaos run's kill-manager with a store: the leader (term 1) is killed, the standby names it
   * until its store lease lapses (3 s), frees its port while it starts leading (half a second of
   * refused connections, when no address answers), and leads under term 2; the killed one comes back
   * as a standby after 4 s, naming the new leader. Two callers (renewals and the config watch) report
   * every failure, each retrying every 100 ms. The link used to go round both addresses at every
   * report while neither answered.
   */
  @Test
  void afterTheLeadersKillTheLinkSettlesOnTheNewLeaderWithAFewSwitches() {
    long start = now.get();
    boolean settled = false;
    long switchesWhenSettled = -1;
    for (int tick = 0; tick < 100; tick++) { // 10 s
      long t = TimeUnit.NANOSECONDS.toMillis(now.get() - start);
      for (int caller = 0; caller < 2; caller++) {
        PodAddress at = managers.current();
        if (at.equals(STANDBY)) {
          if (t < 3000) {
            managers.failed(at, standbyNames(LEADER, 1));
          } else if (t < 3500) {
            managers.failed(at, unreachable()); // its standby server closed, the manager not yet listening
          } else {
            managers.answered(at); // it leads
            if (!settled) {
              settled = true;
              switchesWhenSettled = managers.switches();
            }
          }
        } else if (t < 4000) {
          managers.failed(at, unreachable()); // killed, and restarting
        } else {
          managers.failed(at, standbyNames(STANDBY, 2));
        }
      }
      advanceMillis(100);
    }
    assertThat(managers.current()).isEqualTo(STANDBY);
    assertThat(settled).isTrue();
    assertThat(managers.switches()).as("switches in 10 s").isLessThanOrEqualTo(5);
    assertThat(managers.switches()).as("switches after the new leader answered").isEqualTo(switchesWhenSettled);
  }

  @Test
  void aHintUnderAnOlderTermThanOneAlreadyNamedIsNotFollowed() {
    assertThat(managers.failed(LEADER, standbyNames(NEW_LEADER, 5))).isTrue();
    managers.answered(NEW_LEADER);
    advanceMillis(5000);
    assertThat(managers.failed(NEW_LEADER, standbyNames(LEADER, 4))).as("a standby that is behind").isFalse();
    assertThat(managers.current()).isEqualTo(NEW_LEADER);
  }

  @Test
  void aHintFromAnOlderStandbyWithoutTheTermTrailerIsStillFollowed() {
    io.grpc.Metadata trailers = new io.grpc.Metadata();
    trailers.put(LeaderHint.KEY, NEW_LEADER.toString());
    assertThat(managers.failed(LEADER, Status.UNAVAILABLE.asRuntimeException(trailers))).isTrue();
    assertThat(managers.current()).isEqualTo(NEW_LEADER);
  }

  @Test
  void aLoneManagersChannelThatAnsweredNothingForTheSilenceIsReplacedByAFreshOneAtMostOncePerSilence() {
    List<io.grpc.ManagedChannel> opened = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (ManagerAddresses lone = new ManagerAddresses(List.of(LEADER), a -> {
      io.grpc.ManagedChannel c = Wire.channel(a);
      opened.add(c);
      return c;
    }, now::get)) {
      long silence = TimeUnit.SECONDS.toNanos(1);
      advanceMillis(900);
      assertThat(lone.failed(LEADER, unreachable())).as("nowhere to move").isFalse();
      assertThat(lone.reopenIfSilent(LEADER, silence)).as("silent for 0.9 s only").isFalse();

      advanceMillis(100);
      assertThat(lone.reopenIfSilent(LEADER, silence)).isTrue();
      assertThat(opened).hasSize(2);
      assertThat(opened.get(0).isShutdown()).as("the silent channel is closed").isTrue();
      assertThat(lone.channel()).isSameAs(opened.get(1));
      assertThat(lone.current()).isEqualTo(LEADER);

      advanceMillis(500);
      assertThat(lone.reopenIfSilent(LEADER, silence)).as("the fresh channel gets its own silence").isFalse();
      lone.answered(LEADER);
      advanceMillis(900);
      assertThat(lone.reopenIfSilent(LEADER, silence)).as("answered 0.9 s ago").isFalse();
      assertThat(lone.reopenIfSilent(STANDBY, 0)).as("not the current manager").isFalse();
      advanceMillis(100);
      assertThat(lone.reopenIfSilent(LEADER, silence)).isTrue();
      assertThat(lone.reopens()).isEqualTo(2);
      assertThat(lone.switches()).isZero();
    }
  }

  @Test
  void aMoveToAnotherManagerStartsItsChannelsSilenceAfresh() {
    advanceMillis(5_000);
    assertThat(managers.failed(LEADER, unreachable())).isTrue();
    assertThat(managers.reopenIfSilent(STANDBY, TimeUnit.SECONDS.toNanos(1))).isFalse();
    advanceMillis(1_000);
    assertThat(managers.reopenIfSilent(STANDBY, TimeUnit.SECONDS.toNanos(1))).isTrue();
  }

  @Test
  void aStandbyThatNamesNoLeaderForTheSilenceGetsAFreshChannel() {
    try (ManagerAddresses lone = new ManagerAddresses(List.of(LEADER), Wire::channel, now::get)) {
      long silence = TimeUnit.SECONDS.toNanos(1);
      io.grpc.ManagedChannel first = lone.channel();
      advanceMillis(900);
      assertThat(lone.failedOrReopened(LEADER, LeaderHint.notLeader(Optional.empty(), 0), silence))
          .as("a takeover may be under way: no leader has been silent for the silence yet").isFalse();
      advanceMillis(100);
      assertThat(lone.failedOrReopened(LEADER, LeaderHint.notLeader(Optional.empty(), 0), silence))
          .as("still no leader named after the silence: a fresh connection").isTrue();
      assertThat(lone.reopens()).isEqualTo(1);
      assertThat(lone.channel()).isNotSameAs(first);
      assertThat(lone.current()).isEqualTo(LEADER);
    }
  }

  @Test
  void afterAFailureTheLinkMovesOrReplacesASilentChannelButAnAnswerKeepsIt() {
    try (ManagerAddresses lone = new ManagerAddresses(List.of(LEADER), Wire::channel, now::get)) {
      long silence = TimeUnit.SECONDS.toNanos(1);
      advanceMillis(1_000);
      io.grpc.ManagedChannel first = lone.channel();
      assertThat(lone.failedOrReopened(LEADER,
          Status.FAILED_PRECONDITION.withDescription("busy").asRuntimeException(), silence))
          .as("an error from a live manager is an answer").isFalse();
      assertThat(lone.reopens()).isZero();
      assertThat(lone.failedOrReopened(LEADER, Status.DEADLINE_EXCEEDED.asRuntimeException(), silence))
          .as("no answer on a channel silent for the silence").isTrue();
      assertThat(lone.reopens()).isEqualTo(1);
      assertThat(lone.channel()).isNotSameAs(first);
    }
    assertThat(managers.failedOrReopened(LEADER, unreachable(), TimeUnit.SECONDS.toNanos(1)))
        .as("another manager to move to").isTrue();
    assertThat(managers.current()).isEqualTo(STANDBY);
    assertThat(managers.reopens()).isZero();
  }
}

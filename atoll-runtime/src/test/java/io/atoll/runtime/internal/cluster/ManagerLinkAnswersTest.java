package io.atoll.runtime.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.transport.grpc.Wire;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;

/** How a pod reads the manager's answers to its Register. */
class ManagerLinkAnswersTest {

  static StatusRuntimeException answer(Status s, String description) {
    return s.withDescription(description).asRuntimeException();
  }

  @Test
  void pendingDeclarationsAreANotYetFromALiveManagerNotAManagerDown() {
    StatusRuntimeException pending = answer(Status.ABORTED, Wire.TYPES_PENDING + "2 live pods have not declared");
    assertThat(ManagerLink.isTypesPending(pending)).isTrue();
    assertThat(ManagerAddresses.unanswered(pending)).as("the leader is not marked down").isFalse();
    assertThat(ManagerLink.isTypesPending(answer(Status.ABORTED, "something else"))).isFalse();
    assertThat(ManagerLink.isTypesPending(answer(Status.UNAVAILABLE, Wire.TYPES_PENDING + "x"))).isFalse();
    assertThat(ManagerLink.isTypesPending(Status.ABORTED.asRuntimeException())).as("no description").isFalse();
  }

  @Test
  void aRenewalTheManagerLetTimeOutIsFollowedAtOnceSoThatOneIsInFlightWhenItResumes() {
    assertThat(ManagerLink.afterFailure(Status.Code.DEADLINE_EXCEEDED, false)).isEqualTo(ManagerLink.Retry.NOW);
    assertThat(ManagerLink.afterFailure(Status.Code.DEADLINE_EXCEEDED, true))
        .as("a fresh channel or another manager: with back-off").isEqualTo(ManagerLink.Retry.SOON);
    assertThat(ManagerLink.afterFailure(Status.Code.UNAVAILABLE, true)).isEqualTo(ManagerLink.Retry.SOON);
    assertThat(ManagerLink.afterFailure(Status.Code.UNAVAILABLE, false))
        .as("refused at once, no other manager: not a loop").isEqualTo(ManagerLink.Retry.NEXT_PERIOD);
    assertThat(ManagerLink.afterFailure(Status.Code.FAILED_PRECONDITION, false)).isEqualTo(ManagerLink.Retry.NEXT_PERIOD);
  }
}

package io.atoll.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.DeliveryException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a run's deposits are split into steady state and "around a kill", and the first acknowledgement. */
class OutcomesTest {

  static final long S = 1_000_000_000L;

  static DeliveryException failure(DeliveryException.Reason r) {
    return new DeliveryException(r, "test");
  }

  @Test
  void aDepositInFlightAtAKillOrSentSoonAfterCountsAsAroundTheKill() {
    Outcomes o = new Outcomes();
    long kill = 100 * S;
    o.record(10 * S, 11 * S, null); // long before: steady
    o.record(95 * S, 105 * S, failure(DeliveryException.Reason.TIMEOUT)); // in flight at the kill
    o.record(102 * S, 112 * S, failure(DeliveryException.Reason.TIMEOUT)); // sent 2 s after it
    o.record(99 * S, 99 * S + 1, null); // answered just before the kill: steady
    o.record(106 * S, 107 * S, failure(DeliveryException.Reason.OVERLOADED)); // sent 6 s after: steady
    o.record(120 * S, 130 * S, failure(DeliveryException.Reason.TIMEOUT)); // a steady-state timeout
    Outcomes.Split split = o.split(List.of(kill), 5 * S);
    assertThat(split.aroundKills()).isEqualTo(new Outcomes.Tally(2, 0, 0, 2, 0));
    assertThat(split.steady()).isEqualTo(new Outcomes.Tally(4, 2, 1, 1, 0));
    assertThat(split.steady().answered()).isEqualTo(0.75);
  }

  @Test
  void withoutKillsEverythingIsSteadyAndTheFirstAcknowledgementIsKept() {
    Outcomes o = new Outcomes();
    assertThat(o.firstAckMillisAfter(0)).isEqualTo(-1);
    o.record(1 * S, 2 * S, failure(DeliveryException.Reason.SHUT_DOWN));
    o.record(1 * S, 3 * S, null);
    o.record(1 * S, 4 * S, null);
    assertThat(o.firstAckMillisAfter(S)).isEqualTo(2_000);
    assertThat(o.split(List.of(), 5 * S).steady()).isEqualTo(new Outcomes.Tally(3, 2, 0, 0, 1));
    assertThat(new Outcomes.Tally(0, 0, 0, 0, 0).answered()).isEqualTo(1.0);
  }

  @Test
  void pastItsBoundItKeepsNoMoreAndCountsTheRestApart() {
    Outcomes o = new Outcomes(2);
    o.record(1 * S, 2 * S, null);
    o.record(1 * S, 2 * S, null);
    o.record(1 * S, 2 * S, failure(DeliveryException.Reason.TIMEOUT));
    assertThat(o.split(List.of(), 5 * S).steady()).isEqualTo(new Outcomes.Tally(2, 2, 0, 0, 0));
    assertThat(o.notKept()).isEqualTo(1);
  }

  @Test
  void theCalibrationHoldsWhenThreeSecondsAgreeWithinATenth() {
    assertThat(DemoRun.steady(List.of(1000.0, 950.0, 920.0))).isTrue();
    assertThat(DemoRun.steady(List.of(1000.0, 800.0, 990.0))).isFalse();
    assertThat(DemoRun.steady(List.of(0.0, 0.0, 0.0))).isFalse();
  }
}

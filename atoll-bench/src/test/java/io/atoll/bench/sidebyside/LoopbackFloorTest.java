package io.atoll.bench.sidebyside;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The three loopback floors measure real round trips over 127.0.0.1 (one second each, no warm-up). */
class LoopbackFloorTest {

  @Test
  void theBlockingAndTheSpinningTcpPingPongsAndTheGrpcUnaryCallEachGiveTheirRoundTrips() throws Exception {
    for (Map<String, Double> r : List.of(LoopbackFloor.tcp(0, 1), LoopbackFloor.tcpSpinning(0, 1),
        LoopbackFloor.grpc(0, 1))) {
      // A loose bound: on 2 busy cores the spinning ends may wait for each other's time slices.
      assertThat(r.get("samples")).as("round trips in a second").isGreaterThanOrEqualTo(10);
      assertThat(r.get("p50 us")).isPositive().isLessThanOrEqualTo(r.get("p99 us"));
    }
  }
}

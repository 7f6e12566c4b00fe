package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node's command metrics, counted over a real RESP connection. */
class KvMetricsTest {
  @TempDir
  Path dataDir;

  @Test
  void countsCommandsErrorsAndTheirLatencyAndOwnedSlots() throws Exception {
    SimpleMeterRegistry r = new SimpleMeterRegistry();
    KvMetrics metrics = new KvMetrics(r);
    try (KvServer server = KvServer.start(KvSettings.defaults(0, dataDir), metrics); Wire w = new Wire(server.port())) {
      metrics.bind(server);
      assertThat(r.get("atoll.kv.slots.owned").gauge().value()).isZero();
      assertThat(r.get("atoll.kv.keys.held").gauge().value()).isZero(); // no hand-off batch timed out
      assertThat(w.call("GET", "k")).startsWith("-CLUSTERDOWN"); // no slot has an owner yet
      assertThat(w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")).isEqualTo("+OK\r\n");
      assertThat(r.get("atoll.kv.slots.owned").gauge().value()).isEqualTo(16384);
      assertThat(w.call("SET", "k", "1")).isEqualTo("+OK\r\n");
      assertThat(w.call("FOO")).startsWith("-ERR unknown command");
      assertThat(r.get("atoll.kv.commands").tag("result", "ok").counter().count()).isEqualTo(2);
      assertThat(r.get("atoll.kv.commands").tag("result", "error").counter().count()).isEqualTo(2);
      assertThat(r.get("atoll.kv.command.latency").timer().count()).isEqualTo(4);
    }
  }
}

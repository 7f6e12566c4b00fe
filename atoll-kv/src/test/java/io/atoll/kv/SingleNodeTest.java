package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * One node owning every slot, started once per test class and emptied before each test, with a
 * raw RESP connection {@link #w} to it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SingleNodeTest {
  @TempDir
  static Path dataDir;

  KvServer server;
  Wire w;

  @BeforeAll
  void start() throws Exception {
    server = KvServer.start(KvSettings.defaults(0, dataDir));
    w = new Wire(server.port());
    assertThat(w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")).isEqualTo("+OK\r\n");
  }

  @AfterAll
  void stop() throws Exception {
    w.close();
    server.close();
  }

  @BeforeEach
  void flush() throws Exception {
    assertThat(w.call("FLUSHALL")).isEqualTo("+OK\r\n");
  }
}

package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code atoll chaos --kv} as its own process: a managed KV cluster with replicas under a verifying
 * Lettuce client while primaries and replicas are killed, nodes frozen, the manager killed, a node's
 * link to the manager dropped and a node joins and leaves; every key's history must be linearizable,
 * every key readable at the end, every fault recovered. {@code --duration 60s --seed 3} (about two
 * minutes of wall time).
 */
class KvChaosIT {

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

  @Test
  void seedThreeForSixtySecondsIsLinearizable() {
    try (ProcessCluster processes = new ProcessCluster(dir, Duration.ofSeconds(20))) {
      ManagedProcess chaos = processes.start(AtollProcesses.atoll("chaos-kv", List.of("chaos", "--kv", "--duration",
          "60s", "--seed", "3", "--dir", dir.resolve("run").toString())));
      OptionalInt code = chaos.awaitExit(Duration.ofMinutes(6));
      String log = chaos.logText();
      System.out.println(log); // the run's story and figures, in the build's output
      assertThat(code).as("chaos --kv exited within 6 minutes; its output:%n%s", log).isPresent();
      assertThat(code.getAsInt()).as("chaos --kv exit code; its output:%n%s", log).isZero();
      assertThat(log).contains("keys whose history no order explains: 0").contains("result: OK")
          .containsPattern("seed 3, [1-9]\\d* faults").containsPattern("kill-primary +[1-9]");
    }
  }
}

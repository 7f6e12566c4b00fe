package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code atoll chaos --duration 60s --seed 1} as its own process (256 MB heap, as are the manager
 * and the pods it starts): faults drawn from seed 1 under load must lose no acknowledged deposit
 * and never leave two activations of one account live at once. About 90 s of wall time.
 */
class ChaosIT {

  @TempDir
  Path dir;

  @Test
  void seedOneForSixtySecondsKeepsThePromise() {
    try (ProcessCluster processes = new ProcessCluster(dir, Duration.ofSeconds(20))) {
      ManagedProcess chaos = processes.start(AtollProcesses.atoll("chaos", List.of("chaos", "--duration", "60s",
          "--seed", "1", "--dir", dir.resolve("run").toString())));
      OptionalInt code = chaos.awaitExit(Duration.ofMinutes(5));
      String log = chaos.logText();
      System.out.println(log); // the run's story and figures, in the build's output
      assertThat(code).as("chaos exited within 5 minutes; its output:%n%s", log).isPresent();
      assertThat(code.getAsInt()).as("chaos exit code; its output:%n%s", log).isZero();
      assertThat(log).contains("lost                   0").contains("overlapping activations 0")
          .contains("result: OK").containsPattern("seed 1, [1-9]\\d* faults");
    }
  }
}

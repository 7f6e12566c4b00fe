package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code atoll chaos} as its own process (256 MB heap, as are the managers and the pods it
 * starts): faults under load must lose no acknowledged deposit and never leave two activations of
 * one account live at once. {@code --duration 60s --seed 1} (about 90 s of wall time), then one of
 * each kind it may not reach (the store's, the leader's, a link cut between two pods only, a slow
 * handler) on redis-server, bounded by {@code --count} (about 45 s).
 */
class ChaosIT {

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

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

  @Test
  void theLeaderKilledAndFrozenTheStoreStoppedALinkCutBetweenTwoPodsOnlyAndSlowHandlersKeepThePromise() {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/redis-server")), "redis-server installed");
    String log = chaos("store", "--store", "redis", "--count", "6", "--seed", "5", "--lease", "2s", "--lease-margin",
        "500ms", "--recovery", "500ms", "--faults",
        "kill-manager,pause-manager,pause-store,restart-store,drop-pod-pod,slow-handler");
    assertThat(log).contains("kill -9 the leading manager").contains("SIGSTOP the store").contains("kill -9 the store")
        .containsPattern("traffic between pod-\\d+ and pod-\\d+ only")
        .containsPattern("a deposit whose handler stalls \\d+ ms, asked with a timeout of \\d+ ms")
        .containsPattern("drop-pod-pod +1 ").containsPattern("slow-handler +1 ").containsPattern("restart-store +1 ")
        .contains("seed 5, 6 faults");
  }

  /** Runs {@code atoll chaos args} into its own directory; returns its output once it passed. */
  private String chaos(String name, String... args) {
    try (ProcessCluster processes = new ProcessCluster(dir, Duration.ofSeconds(20))) {
      List<String> command = new java.util.ArrayList<>(List.of("chaos", "--dir", dir.resolve(name).toString()));
      command.addAll(List.of(args));
      ManagedProcess chaos = processes.start(AtollProcesses.atoll("chaos-" + name, command));
      OptionalInt code = chaos.awaitExit(Duration.ofMinutes(4));
      String log = chaos.logText();
      System.out.println(log);
      assertThat(code).as("chaos exited within 4 minutes; its output:%n%s", log).isPresent();
      assertThat(code.getAsInt()).as("chaos exit code; its output:%n%s", log).isZero();
      assertThat(log).contains("lost                   0").contains("overlapping activations 0")
          .contains("result: OK");
      return log;
    }
  }
}

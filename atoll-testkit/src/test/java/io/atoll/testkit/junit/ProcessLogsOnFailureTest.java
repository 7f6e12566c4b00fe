package io.atoll.testkit.junit;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.atoll.testkit.process.ProcessSpec;
import io.atoll.testkit.process.Ticking;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report a failed process test prints: the end of each real process's log, dead ones too. */
class ProcessLogsOnFailureTest {

  @TempDir
  Path dir;

  @Test
  void printsTheEndOfEveryProcessLogRunningOrExited() throws Exception {
    Files.writeString(dir.resolve("notes.txt"), "not a log");
    try (ProcessCluster cluster = new ProcessCluster(dir, Duration.ofSeconds(2))) {
      ManagedProcess running = cluster.start(spec("running"));
      ManagedProcess failed = cluster.start(ProcessSpec.builder("failed", Ticking.class.getName()).heap("64m")
          .args("fail").build());
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> running.logText().contains("tick 3\n")
          && !failed.isAlive());

      String report = ProcessLogsOnFailure.report("aTest()", dir, 4096);

      assertThat(report).startsWith("---- aTest() failed").endsWith("---- end of the logs ----")
          .contains("---- running.log ----\n", "tick 3", "---- failed.log ----\n", "bad configuration")
          .doesNotContain("not a log");
    }
  }

  @Test
  void printsOnlyTheEndOfALongLogAndABoundedNumberOfLogs() throws Exception {
    Files.createDirectories(dir.resolve("a/b"));
    Files.writeString(dir.resolve("a/b/deep.log"), "x".repeat(100) + "the end");
    for (int i = 0; i < ProcessLogsOnFailure.MAX_LOGS + 2; i++) {
      Files.writeString(dir.resolve("p" + (char) ('a' + i) + ".log"), "log " + i);
    }
    String report = ProcessLogsOnFailure.report("aTest()", dir, 7);
    assertThat(report).contains("---- a/b/deep.log ----\nthe end\n").doesNotContain("xthe end")
        .contains("---- 3 more logs not printed ----");
    assertThat(report.lines().filter(l -> l.startsWith("---- p")).count()).isEqualTo(ProcessLogsOnFailure.MAX_LOGS - 1);
  }

  @Test
  void aRunningProcessWritesTheStacksOfItsThreadsVirtualOnesIncludedAndTheReportPrintsThem() throws Exception {
    try (ProcessCluster cluster = new ProcessCluster(dir, Duration.ofSeconds(2))) {
      ManagedProcess running = cluster.start(spec("running"));
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> running.logText().contains("tick 1\n"));
      Path dump = dir.resolve("running.threads");

      assertThat(running.threadDump(dump, Duration.ofSeconds(30))).isTrue();

      // Ticking ticks on its main thread, in TimeUnit.sleep
      assertThat(Files.readString(dump)).contains("\"main\"", "Ticking.main");
      assertThat(ProcessLogsOnFailure.report("aTest()", dir, 4096)).contains("---- running.threads ----\n");
      running.kill();
      running.awaitExit(Duration.ofSeconds(10));
      assertThat(running.threadDump(dir.resolve("dead.threads"), Duration.ofSeconds(5))).isFalse();
    }
  }

  private static ProcessSpec spec(String name) {
    return ProcessSpec.builder(name, Ticking.class.getName()).heap("64m").build();
  }
}

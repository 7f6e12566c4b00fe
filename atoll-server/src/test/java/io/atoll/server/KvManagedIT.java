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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Atoll KV managed by the shard manager, as real processes (256 MB heaps): {@code atoll kv-demo
 * --duration 30s} runs a manager and three {@code atoll kv --manager} nodes under a verifying
 * Lettuce client; a fourth node joins and must take its share of the slots with their keys, one
 * leaves gracefully (SIGTERM) and must hand over every slot, one is killed (kill -9) and every
 * slot must be served again within lease + 2 s. No acknowledged write may be lost except those of
 * the killed node's slots, and no read may be stale. About 50 s of wall time.
 */
class KvManagedIT {

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

  @Test
  void joinGracefulLeaveAndKillUnderLoadLoseNothingButTheKilledNodesKeys() {
    try (ProcessCluster processes = new ProcessCluster(dir, Duration.ofSeconds(20))) {
      ManagedProcess demo = processes.start(AtollProcesses.atoll("kv-demo", List.of("kv-demo", "--duration", "30s",
          "--keys", "5000", "--writers", "4", "--lease", "3s", "--dir", dir.resolve("run").toString())));
      OptionalInt code = demo.awaitExit(Duration.ofMinutes(3));
      String log = demo.logText();
      System.out.println(log); // the run's story and figures, in the build's output
      assertThat(code).as("kv-demo exited within 3 minutes; its output:%n%s", log).isPresent();
      assertThat(log).contains("acknowledged writes lost        0").contains("stale reads                     0 ")
          .contains("kv2 left gracefully             yes").contains("unreadable at the end           0")
          .doesNotContain("kv4 reached its share in        never");
      Matcher rehomed = Pattern.compile("slots served again after kill   (\\d+) ms").matcher(log);
      assertThat(rehomed.find()).as("the kill's re-homing time in:%n%s", log).isTrue();
      assertThat(Long.parseLong(rehomed.group(1))).as("ms until every slot was served again").isLessThanOrEqualTo(5000);
      assertThat(code.getAsInt()).as("kv-demo exit code; its output:%n%s", log).isZero();
      assertThat(log).contains("kv-demo: OK");
    }
  }
}

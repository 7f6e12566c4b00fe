package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.kvdemo.KvDemoRun;
import io.atoll.testkit.Await;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A managed KV node told it is dead while it leaves must still exit. The node is frozen (SIGSTOP)
 * until the manager declares it dead, then thawed and sent SIGTERM: its shutdown hook starts a
 * leave while its first renewal learns it is unknown. That answer used to call System.exit on the
 * gRPC I/O thread, which blocks for good once a shutdown is under way, and with it every call on
 * the channel, the hook's own unregistration included: the process never exited.
 */
class KvDeclaredDeadIT {

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

  @Test
  void aNodeDeclaredDeadWhileItLeavesExits() throws IOException {
    try (ProcessCluster processes = new ProcessCluster(dir, Duration.ofSeconds(10))) {
      ManagedProcess manager = processes.start(AtollProcesses.atoll("manager", List.of("manager", "--port", "0",
          "--data-dir", dir.resolve("manager").toString(), "--shards", "16384", "--lease", "1000ms",
          "--lease-margin", "200ms", "--ping-timeout", "1s", "--termination-timeout", "2s")));
      PodAddress at = manager.awaitAddress(Duration.ofSeconds(60));
      int port = KvDemoRun.freePorts(1)[0]; // the control port is port + 10000
      ManagedProcess node = processes.start(AtollProcesses.atoll("kv", List.of("kv", "--port",
          Integer.toString(port), "--manager", at.toString(),
          "--event-loops", "1", "--drain-timeout", "60s", "--data-dir", dir.resolve("kv").toString())));
      node.awaitLog(java.util.regex.Pattern.compile("listening on \\S+ \\(managed by the shard manager"), Duration.ofSeconds(60));

      node.pause();
      Await.until("the manager declaring the frozen node dead", Duration.ofSeconds(30),
          () -> manager.logText().contains("is dead: no lease renewal"));
      node.terminate(); // thawed, then SIGTERM: the leave and the renewal that finds it unknown race

      OptionalInt code = node.awaitExit(Duration.ofSeconds(30));
      assertThat(code).as("the node exited within 30 s of SIGTERM; its log:%n%s", node.logTail(4000)).isPresent();
      assertThat(node.logText()).as("exit code %s", code).contains("declared");
    }
  }
}

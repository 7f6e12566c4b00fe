package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.runtime.Sharding;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.ClusterChecks;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shard spaces from the command line, against real processes: {@code atoll manager --spaces
 * default=8,worker=4}, a pod of the default role and one started with {@code --role worker}.
 * Each pod must own exactly its space's shards, and {@code atoll status} must show them per space.
 */
class SpacesProcessTest {

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

  @Test
  void eachPodOwnsOnlyTheSpaceOfItsRoleAndStatusShowsIt() {
    try (ProcessCluster processes = new ProcessCluster(dir, Duration.ZERO)) {
      ManagedProcess manager = processes.start(AtollProcesses.atoll("manager", List.of("manager", "--port", "0",
          "--data-dir", dir.resolve("manager").toString(), "--spaces", "default=8,worker=4", "--lease", "10s",
          "--lease-margin", "1s", "--rebalance-interval", "2s", "--rebalance-retry", "1s", "--ping-timeout", "1s",
          "--termination-timeout", "2s")));
      PodAddress at = manager.awaitAddress(Duration.ofSeconds(60));
      assertThat(manager.logText()).contains("12 shards in spaces default=8,worker=4");
      PodAddress web = pod(processes, "pod-web", at, List.of()).awaitAddress(Duration.ofSeconds(60));
      ManagedProcess workerProcess = pod(processes, "pod-worker", at, List.of("--role", "worker"));
      PodAddress worker = workerProcess.awaitAddress(Duration.ofSeconds(60));
      assertThat(workerProcess.logText()).contains("roles worker");

      try (Sharding viewer = Sharding.builder().manager(at.toString()).clientOnly().start()) {
        ClusterChecks.awaitEveryShardOwned(viewer, 2, Duration.ofSeconds(60));
        ClusterConfig c = viewer.config();
        for (int pos = 0; pos < c.size(); pos++) {
          PodId owner = c.owner(pos);
          assertThat(owner.address()).as("owner of position " + pos).isEqualTo(pos < 8 ? web : worker);
        }
      }

      ManagedProcess status = processes.start(AtollProcesses.atoll("status", List.of("status", "--manager",
          at.toString(), "--timeout", "10s")));
      assertThat(status.awaitExit(Duration.ofSeconds(60))).as(status.logText()).isEqualTo(OptionalInt.of(0));
      String out = status.logText();
      assertThat(out).contains("cluster: 12 shards").contains("2 pods, 0 shards without a live owner")
          .contains("spaces: default=8 (shards 1..8) worker=4 (shards 9..12)");
      assertThat(row(out, web)).containsExactly("1.0", "default", "8", "8", "0");
      assertThat(row(out, worker)).containsExactly("1.0", "worker", "4", "0", "4");
    }
  }

  /**
   * A rolling update that adds a role: a manager started with {@code --spaces default=8
   * --new-space-shards 4}, a default pod, then a pod started with {@code --role batch}. The
   * manager appends the space, it lands on the batch pod, the default pod keeps every shard it
   * had; with the batch pod stopped, {@code atoll status} reports the space instead of dropping
   * it, and a manager restarted with the first {@code --spaces} keeps the grown layout.
   */
  @Test
  void aPodOfANewRoleGetsASpaceAppendedThatStatusReportsAndARestartKeeps() {
    try (ProcessCluster processes = new ProcessCluster(dir, Duration.ZERO)) {
      List<String> managerArgs = List.of("manager", "--port", "0", "--data-dir", dir.resolve("manager").toString(),
          "--spaces", "default=8", "--new-space-shards", "4", "--lease", "10s", "--lease-margin", "1s",
          "--rebalance-interval", "2s", "--rebalance-retry", "1s", "--ping-timeout", "1s", "--termination-timeout",
          "2s");
      ManagedProcess manager = processes.start(AtollProcesses.atoll("manager", managerArgs));
      PodAddress at = manager.awaitAddress(Duration.ofSeconds(60));
      PodAddress web = pod(processes, "pod-web", at, List.of()).awaitAddress(Duration.ofSeconds(60));
      try (Sharding viewer = Sharding.builder().manager(at.toString()).clientOnly().start()) {
        ClusterChecks.awaitEveryShardOwned(viewer, 1, Duration.ofSeconds(60));
        ClusterConfig before = viewer.config();
        ManagedProcess batchProcess = pod(processes, "pod-batch", at, List.of("--role", "batch"));
        PodAddress batch = batchProcess.awaitAddress(Duration.ofSeconds(60));
        manager.awaitLog(java.util.regex.Pattern.compile("space batch appended"), Duration.ofSeconds(30));
        io.atoll.testkit.Await.until("the batch space owned", Duration.ofSeconds(60), Duration.ofMillis(100),
            () -> viewer.config().size() == 12 && viewer.config().unownedCount() == 0);
        ClusterConfig c = viewer.config();
        assertThat(c.spaces()).isEqualTo(io.atoll.core.Spaces.parse("default=8,batch=4"));
        for (int pos = 0; pos < c.size(); pos++) {
          assertThat(c.owner(pos).address()).as("owner of position " + pos).isEqualTo(pos < 8 ? web : batch);
        }
        for (int pos = 0; pos < 8; pos++) {
          assertThat(c.claim(pos)).as("the default space's claims did not move").isEqualTo(before.claim(pos));
        }
        batchProcess.stop(Duration.ofSeconds(20)); // SIGTERM: it leaves (its exit code is the signal's)
        io.atoll.testkit.Await.until("the batch pod gone", Duration.ofSeconds(60), Duration.ofMillis(100),
            () -> viewer.config().activePods().size() == 1);
      }
      manager.awaitLog(java.util.regex.Pattern.compile("space batch: 4 shards, no live pod with role batch"),
          Duration.ofSeconds(30));
      ManagedProcess status = processes.start(AtollProcesses.atoll("status", List.of("status", "--manager",
          at.toString(), "--timeout", "10s")));
      assertThat(status.awaitExit(Duration.ofSeconds(60))).as(status.logText()).isEqualTo(OptionalInt.of(0));
      assertThat(status.logText()).contains("cluster: 12 shards")
          .contains("space batch: 4 shards, no live pod with role batch");

      manager.stop(Duration.ofSeconds(20));
      ManagedProcess again = processes.start(AtollProcesses.atoll("manager-again", managerArgs));
      again.awaitAddress(Duration.ofSeconds(60));
      assertThat(again.logText()).contains("holds the spaces default=8,batch=4, grown at run time from the configured"
          + " default=8").contains("12 shards in spaces default=8,batch=4");
    }
  }

  private static ManagedProcess pod(ProcessCluster processes, String name, PodAddress manager, List<String> extra) {
    List<String> args = new java.util.ArrayList<>(List.of("pod", "--manager", manager.toString(),
        "--termination-timeout", "2s"));
    args.addAll(extra);
    return processes.start(AtollProcesses.atoll(name, args));
  }

  /** The columns after the pod's id in its row of the status table. */
  private static List<String> row(String out, PodAddress pod) {
    for (String line : out.split("\\R")) {
      if (line.startsWith(pod + "#")) {
        String[] cols = line.trim().split("\\s+");
        return Arrays.asList(cols).subList(1, cols.length);
      }
    }
    throw new AssertionError("no row of " + pod + " in:\n" + out);
  }
}

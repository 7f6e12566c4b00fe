package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.runtime.Sharding;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.ClusterChecks;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code atoll rebalance} against real processes: a manager that rebalances only when asked (its
 * periodic rounds and retries are ten minutes apart), one pod that owns all 24 shards and two
 * that join while it is frozen, so that the rounds their joins start fail and 16 moves stay
 * planned. Frozen, the command shows the moves planned and none done, and gives up at its
 * deadline; thawed, it runs rounds of two moves until every shard is in place.
 */
class RebalanceIT {

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

  @Test
  void showsTheMovesPlannedAndDoneUntilEveryShardIsInPlaceOrTheDeadline() {
    try (ProcessCluster processes = new ProcessCluster(dir, Duration.ZERO)) {
      ManagedProcess manager = processes.start(AtollProcesses.atoll("manager", List.of("manager", "--port", "0",
          "--data-dir", dir.resolve("manager").toString(), "--shards", "24", "--lease", "60s", "--lease-margin", "3s",
          "--rebalance-interval", "10m", "--rebalance-retry", "10m", "--max-moves", "2", "--ping-timeout", "500ms",
          "--termination-timeout", "2s")));
      PodAddress at = manager.awaitAddress(Duration.ofSeconds(60));
      try (Sharding viewer = Sharding.builder().manager(at.toString()).clientOnly().start()) {
        ManagedProcess first = pod(processes, "pod-1", at);
        ClusterChecks.awaitEveryShardOwned(viewer, 1, Duration.ofSeconds(30));
        first.pause(); // the rounds the next joins start cannot ping it, so they move nothing
        pod(processes, "pod-2", at);
        pod(processes, "pod-3", at);
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> viewer.config().activePods().size() == 3);

        ManagedProcess stuck = processes.start(AtollProcesses.atoll("rebalance-frozen", List.of("rebalance",
            "--manager", at.toString(), "--timeout", "3s")));
        assertThat(stuck.awaitExit(Duration.ofSeconds(60))).isEqualTo(OptionalInt.of(1));
        assertThat(stuck.logText()).contains("rebalance: 0 of 16 shards moved, 16 to go (round 1")
            .contains("atoll rebalance: not in place after 3s: 0 of 16 shards moved, 16 to go");

        first.resume();
        ManagedProcess done = processes.start(AtollProcesses.atoll("rebalance", List.of("rebalance", "--manager",
            at.toString(), "--timeout", "60s")));
        assertThat(done.awaitExit(Duration.ofSeconds(90))).as(done.logText()).isEqualTo(OptionalInt.of(0));
        String out = done.logText();
        assertThat(out).containsPattern("rebalance: (done: \\d+ of \\d+ shards moved|nothing to move); every shard is"
            + " in place").contains("cluster: 24 shards").contains("3 pods");
        assertThat(viewer.config().ownedCounts().values()).containsOnly(8);
      }

      manager.kill();
      manager.awaitExit(Duration.ofSeconds(30));
      ManagedProcess gone = processes.start(AtollProcesses.atoll("rebalance-gone", List.of("rebalance",
          "--manager", at.toString(), "--timeout", "5s")));
      assertThat(gone.awaitExit(Duration.ofSeconds(60))).isEqualTo(OptionalInt.of(1));
      assertThat(gone.logText()).contains("atoll rebalance: the shard manager at " + at + " did not answer")
          .contains("is it running?");
    }
  }

  private static ManagedProcess pod(ProcessCluster processes, String name, PodAddress manager) {
    ManagedProcess p = processes.start(AtollProcesses.atoll(name, List.of("pod", "--manager", manager.toString(),
        "--termination-timeout", "2s")));
    p.awaitAddress(Duration.ofSeconds(60));
    return p;
  }
}

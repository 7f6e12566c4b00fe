package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.net.Ports;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three {@code atoll kv} processes formed into a cluster by the real {@code redis-cli --cluster
 * create}; one is killed with SIGKILL, seen as failed by the others, restarted with its data
 * directory, and rejoins with its node id, its slots and its keys (replayed from its append-only file).
 */
class KvProcessIT {
  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

  @Test
  void aKilledNodeRestartedWithItsDataDirRejoinsWithItsConfig() throws Exception {
    Assumptions.assumeTrue(RedisCliRun.installed(),
        "redis-cli is not installed on this machine: apt-get install redis-tools (CI's .ci/run installs it)");
    int[] ports = {Ports.free(), Ports.free(), Ports.free()};
    int[] bus = {Ports.free(), Ports.free(), Ports.free()};
    List<ManagedProcess> nodes = new ArrayList<>();
    try (ProcessCluster processes = new ProcessCluster(dir)) {
      for (int i = 0; i < 3; i++) {
        nodes.add(start(processes, i, ports, bus));
      }
      String out = RedisCliRun.run(null, "--cluster", "create", "127.0.0.1:" + ports[0], "127.0.0.1:" + ports[1],
          "127.0.0.1:" + ports[2], "--cluster-yes");
      assertThat(out).contains("[OK] All 16384 slots covered.");
      StringBuilder sets = new StringBuilder();
      for (int i = 0; i < 300; i++) {
        sets.append("SET p:").append(i).append(' ').append(i).append('\n');
      }
      RedisCliRun.run(sets.toString(), "-c", "-p", String.valueOf(ports[0]));
      String id2 = RedisCliRun.run(null, "-p", String.valueOf(ports[2]), "CLUSTER", "MYID").trim();
      String mine2 = myLine(ports[2]);
      long keysOn0 = Long.parseLong(RedisCliRun.run(null, "-p", String.valueOf(ports[0]), "DBSIZE").trim());
      long keysOn2 = Long.parseLong(RedisCliRun.run(null, "-p", String.valueOf(ports[2]), "DBSIZE").trim());
      assertThat(keysOn2).isPositive();

      nodes.get(2).kill();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        assertThat(RedisCliRun.run(null, "-p", String.valueOf(ports[0]), "CLUSTER", "NODES")).contains(id2 + " ")
            .containsPattern(id2 + " \\S+ master,fail ");
        assertThat(RedisCliRun.run(null, "-p", String.valueOf(ports[0]), "CLUSTER", "INFO")).contains("cluster_state:fail");
      });
      assertThat(RedisCliRun.run(null, "-p", String.valueOf(ports[0]), "GET", "p:1")).startsWith("CLUSTERDOWN");

      nodes.set(2, start(processes, 2, ports, bus));
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        assertThat(RedisCliRun.run(null, "-p", String.valueOf(ports[0]), "CLUSTER", "INFO")).contains("cluster_state:ok");
        assertThat(RedisCliRun.run(null, "--cluster", "check", "127.0.0.1:" + ports[1]))
            .contains("[OK] All nodes agree about slots configuration.").contains("[OK] All 16384 slots covered.");
      });
      assertThat(RedisCliRun.run(null, "-p", String.valueOf(ports[2]), "CLUSTER", "MYID").trim()).isEqualTo(id2);
      assertThat(myLine(ports[2]).replaceAll(" \\d+ \\d+ ", " ")).isEqualTo(mine2.replaceAll(" \\d+ \\d+ ", " "));
      assertThat(Long.parseLong(RedisCliRun.run(null, "-p", String.valueOf(ports[2]), "DBSIZE").trim())).as("keys replayed")
          .isEqualTo(keysOn2);
      StringBuilder gets = new StringBuilder();
      StringBuilder expected = new StringBuilder();
      for (int i = 0; i < 300; i++) {
        gets.append("GET p:").append(i).append('\n');
        expected.append(i).append('\n');
      }
      assertThat(RedisCliRun.run(gets.toString(), "-c", "-p", String.valueOf(ports[0])).replaceAll("(?m)^-> Redirected.*\n", ""))
          .isEqualTo(expected.toString());
      assertThat(Long.parseLong(RedisCliRun.run(null, "-p", String.valueOf(ports[0]), "DBSIZE").trim())).isEqualTo(keysOn0);
    }
  }

  private ManagedProcess start(ProcessCluster processes, int i, int[] ports, int[] bus) {
    ManagedProcess c = processes.start(AtollProcesses.atoll("kv-" + i + "-" + System.nanoTime(),
        List.of("kv", "--port", String.valueOf(ports[i]), "--bus-port", String.valueOf(bus[i]),
            "--data-dir", dir.resolve("kv" + i).toString(), "--event-loops", "2",
            "--cluster-node-timeout", "2000")));
    c.awaitAddress(Duration.ofSeconds(60));
    return c;
  }

  private static String myLine(int port) throws Exception {
    return RedisCliRun.run(null, "-p", String.valueOf(port), "CLUSTER", "NODES").lines()
        .filter(l -> l.contains("myself")).findFirst().orElseThrow();
  }
}

package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.net.TcpRelay;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP endpoint of real {@code atoll manager}, {@code atoll pod} and {@code atoll kv} processes,
 * read with the JDK's HTTP client: Prometheus text with Atoll's metrics, health probes, the cluster
 * as JSON; a pod cut from the manager past its lease is not ready while fenced, and ready again
 * after it rejoins.
 */
class HttpProbesIT {

  static final Pattern HTTP = Pattern.compile("http on (\\S+:\\d+)");

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir, () -> this.processes);
  ProcessCluster processes;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @AfterEach
  void stop() {
    if (processes != null) {
      processes.close();
    }
  }

  record Got(int status, String body) {}

  Got get(String hostPort, String path) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + hostPort + path))
        .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    return new Got(r.statusCode(), r.body());
  }

  ManagedProcess start(String name, List<String> args) {
    return processes.start(AtollProcesses.atoll(name, args));
  }

  @Test
  void managerAndPodServeMetricsHealthAndClusterAndAFencedPodIsNotReady() throws Exception {
    processes = new ProcessCluster(dir);
    ManagedProcess manager = start("manager", List.of("manager", "--port", "0", "--data-dir",
        dir.resolve("manager").toString(), "--shards", "30", "--lease", "2s", "--lease-margin", "1s",
        "--ping-timeout", "1s", "--termination-timeout", "1s", "--http-port", "0"));
    PodAddress managerAddress = manager.awaitAddress(Duration.ofSeconds(60));
    String managerHttp = manager.awaitLog(HTTP, Duration.ofSeconds(10));

    try (TcpRelay relay = TcpRelay.to(managerAddress.port())) {
      ManagedProcess pod = start("pod", List.of("pod", "--manager", relay.address(), "--http-port", "0",
          "--version", "1.2"));
      pod.awaitAddress(Duration.ofSeconds(60));
      String podHttp = pod.awaitLog(HTTP, Duration.ofSeconds(10));

      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> get(podHttp, "/health/ready").status() == 200);
      assertThat(get(podHttp, "/health/ready").body()).startsWith("ready: lease held, 30 shards active");
      assertThat(get(podHttp, "/health/live").status()).isEqualTo(200);

      Got podMetrics = get(podHttp, "/metrics");
      assertThat(podMetrics.status()).isEqualTo(200);
      assertThat(podMetrics.body()).contains("atoll_messages_sent_total", "atoll_messages_failed_total{reason=\"TIMEOUT\"}",
          "atoll_ask_latency_seconds_bucket", "atoll_messages_buffered", "atoll_shards_served 30.0",
          "atoll_pod_lease_held 1.0", "atoll_messages_notowner_retries_total", "atoll_pod_fencings_total 0.0",
          "jvm_memory_used_bytes");

      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> get(managerHttp, "/metrics").body()
          .contains("atoll_manager_lease_renewals_total{result=\"granted\"}"));
      String managerMetrics = get(managerHttp, "/metrics").body();
      assertThat(managerMetrics).contains("atoll_manager_shards{pod=", "atoll_manager_pods_active 1.0",
          "atoll_manager_rebalance_rounds_total{result=\"moved\"}", "atoll_manager_rebalance_duration_seconds_count",
          "atoll_manager_epoch");
      assertThat(get(managerHttp, "/health/ready").status()).isEqualTo(200);
      String cluster = get(managerHttp, "/cluster").body();
      assertThat(cluster).startsWith("{\"role\":\"manager\"").contains("\"leader\":\"" + managerAddress + "\"",
          "\"version\":\"1.2\"", "\"shards\":30", "\"owners\":[0,0,");
      assertThat(get(podHttp, "/cluster").body()).contains("\"role\":\"pod\"", "\"holdsLease\":true");
      assertThat(get(managerHttp, "/nope").status()).isEqualTo(404);

      // Cut the pod from the manager (connections open, bytes lost): its lease runs out, it fences.
      relay.mode(TcpRelay.Mode.DROP);
      Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> get(podHttp, "/health/ready").status() == 503);
      assertThat(get(podHttp, "/health/ready").body()).contains("fenced");
      assertThat(get(podHttp, "/health/live").status()).isEqualTo(200);
      assertThat(get(podHttp, "/metrics").body()).contains("atoll_pod_lease_held 0.0");
      Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> get(managerHttp, "/metrics").body()
          .contains("atoll_manager_pods_gone_total{cause=\"died\"} 1.0"));

      // Reconnected, it joins again as a new incarnation and is ready once its shards are active.
      relay.mode(TcpRelay.Mode.PASS);
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> get(podHttp, "/health/ready").status() == 200);
      assertThat(get(podHttp, "/metrics").body()).doesNotContain("atoll_pod_fencings_total 0.0");
    }
  }

  @Test
  void aKvNodeServesCommandMetricsAndIsReadyOnlyWhenItsClusterIsOk() throws Exception {
    processes = new ProcessCluster(dir);
    ManagedProcess kv = start("kv", List.of("kv", "--port", "0", "--data-dir", dir.resolve("kv").toString(),
        "--http-port", "0"));
    PodAddress address = kv.awaitAddress(Duration.ofSeconds(60));
    String kvHttp = kv.awaitLog(HTTP, Duration.ofSeconds(10));
    Got notReady = get(kvHttp, "/health/ready");
    assertThat(notReady.status()).isEqualTo(503);
    assertThat(notReady.body()).contains("cluster_state is fail");
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", address.port())) {
      s.getOutputStream().write("CLUSTER ADDSLOTSRANGE 0 16383\r\nSET k v\r\n".getBytes());
      assertThat(new String(s.getInputStream().readNBytes(10))).isEqualTo("+OK\r\n+OK\r\n");
    }
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> get(kvHttp, "/health/ready").status() == 200);
    assertThat(get(kvHttp, "/metrics").body()).contains("atoll_kv_commands_total{result=\"ok\"} 2.0",
        "atoll_kv_command_latency_seconds_bucket", "atoll_kv_slots_owned 16384.0");
    assertThat(get(kvHttp, "/cluster").body()).contains("\"role\":\"kv\"", "\"slotsOwned\":16384");
  }
}

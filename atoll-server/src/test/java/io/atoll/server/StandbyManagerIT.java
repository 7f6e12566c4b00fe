package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.ServerProcess;
import io.atoll.manager.ManagerState;
import io.atoll.runtime.Sharding;
import io.atoll.server.demo.Account;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two {@code atoll manager} processes on one store, for each store: one leads, the other stands
 * by (listening); after {@code kill -9} of the leader the standby leads within 2 × the lease, under
 * a greater term, from the state the leader saved, and the pod (given both addresses) follows it.
 */
class StandbyManagerIT {

  private static final Duration LEASE = Duration.ofSeconds(3);

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

  private ManagedProcess manager(ProcessCluster processes, String name, String store) {
    return processes.start(AtollProcesses.atoll(name, List.of("manager", "--standby", "--port", "0", "--store", store,
        "--data-dir", dir.resolve("manager").toString(), "--shards", "30", "--lease", LEASE.toSeconds() + "s",
        "--lease-margin", "1s", "--rebalance-interval", "2s", "--rebalance-retry", "500ms")));
  }

  private static ManagerState state(AssignmentStore store) {
    return ManagerState.decode(store.load().orElseThrow().data());
  }

  @ParameterizedTest
  @ValueSource(strings = {"file", "redis", "etcd"})
  void killingTheLeaderHandsTheStoreToTheStandbyWithinTwoLeases(String kind) throws Exception {
    List<AutoCloseable> closing = new ArrayList<>();
    ProcessCluster processes = new ProcessCluster(dir, Duration.ZERO);
    Sharding pod = null;
    try {
      String spec = switch (kind) {
        case "redis" -> {
          ServerProcess s = ServerProcess.redis(dir.resolve("redis"));
          closing.add(s);
          yield "redis://127.0.0.1:" + s.port();
        }
        case "etcd" -> {
          ServerProcess s = ServerProcess.etcd(dir.resolve("etcd"));
          closing.add(s);
          yield "etcd://127.0.0.1:" + s.port();
        }
        default -> "file";
      };
      AssignmentStore store = StoreSpec.parse(spec, dir.resolve("manager")).open();
      closing.add(store);

      ManagedProcess leader = manager(processes, "manager-a", spec);
      PodAddress address = leader.awaitAddress(Duration.ofSeconds(60));
      ManagedProcess standby = manager(processes, "manager-b", spec);
      String standbyAt = standby.awaitLog(Pattern.compile("standing by on (\\S+): .*another manager leads"),
          Duration.ofSeconds(60));
      assertThat(standby.addressIfUp()).isEmpty();

      pod = Sharding.builder().manager(address + "," + standbyAt).register(Account.TYPE, Account.factory(null))
          .start();
      Sharding p = pod;
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> p.servedShards().size() == 30);
      ManagerState before = state(store);
      assertThat(store.leader().orElseThrow().term()).isEqualTo(before.term());

      long killed = System.nanoTime();
      leader.kill();
      PodAddress next = standby.awaitAddress(LEASE.multipliedBy(2).plusSeconds(5));
      Duration takeover = Duration.ofNanos(System.nanoTime() - killed);
      assertThat(takeover).as("kill -9 of the leader to the standby's start").isLessThan(LEASE.multipliedBy(2));
      assertThat(next).isNotEqualTo(address);

      ManagerState after = state(store);
      assertThat(after.term()).isGreaterThan(before.term());
      assertThat(after.config().isActive(pod.podId())).isTrue();
      for (int shard = 0; shard < 30; shard++) {
        assertThat(after.config().owner(shard)).as("shard %d", shard).isEqualTo(pod.podId());
      }
      assertThat(store.leader().orElseThrow().term()).isEqualTo(after.term());
      assertThat(next.toString()).isEqualTo(standbyAt);
      // The pod follows the new leader: it renews there and keeps its shards.
      Sharding following = pod;
      Awaitility.await().during(LEASE.multipliedBy(2)).atMost(LEASE.multipliedBy(4))
          .until(() -> following.holdsLease() && following.servedShards().size() == 30);
      System.out.println("standby took over (" + kind + ") in " + takeover.toMillis() + " ms");
    } finally {
      if (pod != null) {
        Thread.ofVirtual().start(pod::close);
      }
      processes.close();
      for (AutoCloseable c : closing.reversed()) {
        c.close();
      }
    }
  }

  /**
   * One {@code atoll manager} process leads (term 1), is deposed while frozen past its store lease
   * (another takes term 2) and stands by, then leads again when that one is killed (term 3): its
   * HTTP endpoint serves the manager it leads with now, and the store names the leader by its
   * advertised address.
   */
  @org.junit.jupiter.api.Test
  void theHttpEndpointFollowsTheTermTheProcessLeadsWithNow() throws Exception {
    try (ServerProcess redis = ServerProcess.redis(dir.resolve("redis"));
        ProcessCluster processes = new ProcessCluster(dir, Duration.ZERO);
        AssignmentStore store = StoreSpec.parse("redis://127.0.0.1:" + redis.port(), dir).open()) {
      String spec = "redis://127.0.0.1:" + redis.port();
      List<String> args = List.of("manager", "--port", "0", "--store", spec, "--shards", "4", "--lease", "1s",
          "--lease-margin", "1s", "--store-lease", "2s", "--advertise", "localhost");
      ManagedProcess a = processes.start(AtollProcesses.atoll("manager-a", concat(args, "--http-port", "0")));
      PodAddress first = a.awaitAddress(Duration.ofSeconds(60));
      assertThat(store.leader().orElseThrow().holder()).as("named by its advertised address")
          .isEqualTo("localhost:" + first.port());
      String http = a.awaitLog(Pattern.compile("http on (\\S+:\\d+)"), Duration.ofSeconds(10));
      java.net.http.HttpClient client = java.net.http.HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(5)).build();
      assertThat(get(client, http, "/cluster").body()).contains("\"term\":1");

      ManagedProcess b = processes.start(AtollProcesses.atoll("manager-b", concat(args, "--http-port", "0")));
      b.awaitLog(Pattern.compile("standing by on"), Duration.ofSeconds(60));
      // A process that starts as a standby serves HTTP before it ever leads, naming the leader.
      String bHttp = b.awaitLog(Pattern.compile("http on (\\S+:\\d+)"), Duration.ofSeconds(10));
      assertThat(get(client, bHttp, "/health/live").statusCode()).isEqualTo(200);
      java.net.http.HttpResponse<String> standing = get(client, bHttp, "/health/ready");
      assertThat(standing.statusCode()).isEqualTo(503);
      assertThat(standing.body()).contains("standing by").contains("the leader is localhost:" + first.port()
          + " (term 1)");
      java.net.http.HttpResponse<String> cluster = get(client, bHttp, "/cluster");
      assertThat(cluster.statusCode()).isEqualTo(503);
      assertThat(cluster.body()).contains("\"standby\":true").contains("\"leader\":\"localhost:" + first.port() + "\"")
          .contains("\"term\":1");
      a.pause(); // past its store lease: b takes term 2
      try {
        b.awaitLog(Pattern.compile("listening on \\S+ \\(term 2"), Duration.ofSeconds(30));
      } finally {
        a.resume();
      }
      assertThat(get(client, bHttp, "/cluster").body()).as("the same endpoint, now of the leader").contains("\"term\":2")
          .doesNotContain("standby");
      a.awaitLog(Pattern.compile("deposed; standing by again"), Duration.ofSeconds(30));
      Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        java.net.http.HttpResponse<String> ready = get(client, http, "/health/ready");
        assertThat(ready.statusCode()).isEqualTo(503);
        assertThat(ready.body()).contains("standing by").contains("(term 2)");
      });
      b.kill();
      a.awaitLog(Pattern.compile("listening on \\S+ \\(term 3"), Duration.ofSeconds(30));
      assertThat(get(client, http, "/cluster").body()).as("the manager of the term it leads with now")
          .contains("\"term\":3");
      assertThat(get(client, http, "/health/ready").statusCode()).isEqualTo(200);
    }
  }

  private static List<String> concat(List<String> args, String... more) {
    List<String> all = new ArrayList<>(args);
    all.addAll(List.of(more));
    return all;
  }

  private static java.net.http.HttpResponse<String> get(java.net.http.HttpClient client, String address, String path)
      throws Exception {
    return client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://" + address + path))
        .timeout(Duration.ofSeconds(10)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
  }
}

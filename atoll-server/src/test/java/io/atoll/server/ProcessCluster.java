package io.atoll.server;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodStatus;
import io.atoll.runtime.Sharding;
import io.atoll.server.demo.AccountDb;
import io.atoll.server.demo.Child;
import io.atoll.server.demo.Ledger;
import io.atoll.server.demo.Load;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.h2.tools.Server;

/**
 * A cluster of real processes for tests: a shard manager and pods of the demo service started
 * from the packaged jar, the accounts database (H2 over TCP) and a client in this JVM. Everything
 * on 127.0.0.1, ephemeral ports, small heaps.
 */
final class ProcessCluster implements AutoCloseable {

  final Path dir;
  final Duration lease;
  final Server db;
  final String url;
  Child manager;
  PodAddress managerAddress;
  final List<Child> pods = new ArrayList<>();
  Sharding client;
  private int podCount;

  ProcessCluster(Path dir, Duration lease) throws Exception {
    this.dir = dir;
    this.lease = lease;
    System.setProperty("h2.bindAddress", "127.0.0.1");
    db = Server.createTcpServer("-tcpPort", "0", "-ifNotExists", "-baseDir", dir.resolve("db").toString()).start();
    url = "jdbc:h2:tcp://127.0.0.1:" + db.getPort() + "/accounts";
    AccountDb.createSchema(url);
  }

  void startManager(int port) throws IOException {
    manager = Child.start("manager-" + System.nanoTime(), dir, List.of("manager", "--port", Integer.toString(port),
        "--data-dir", dir.resolve("manager").toString(), "--shards", "60", "--lease", lease.toMillis() + "ms",
        "--lease-margin", "1s", "--rebalance-interval", "5s", "--rebalance-retry", "1s", "--ping-timeout", "1s",
        "--termination-timeout", "2s"));
    managerAddress = manager.awaitAddress(Duration.ofSeconds(60));
  }

  Child startPod() throws IOException {
    Child p = Child.start("pod-" + (++podCount), dir, List.of("pod", "--manager", managerAddress.toString(),
        "--db", url, "--termination-timeout", "2s", "--send-timeout", "10s"));
    p.awaitAddress(Duration.ofSeconds(60));
    pods.add(p);
    return p;
  }

  Sharding client() {
    if (client == null) {
      client = Sharding.builder().manager(managerAddress.toString()).clientOnly()
          .sendTimeout(Duration.ofSeconds(10)).askTimeout(Duration.ofSeconds(10)).start();
    }
    return client;
  }

  /** Waits until {@code pods} active pods own every shard, as the client sees it. */
  void awaitOwned(int activePods, Duration timeout) {
    Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(100)).until(() -> {
      ClusterConfig c = client().config();
      if (c.activePods().size() != activePods) {
        return false;
      }
      for (int pos = 0; pos < c.size(); pos++) {
        PodEntry e = c.ownerEntry(pos);
        if (e == null || e.status() != PodStatus.ACTIVE) {
          return false;
        }
      }
      return true;
    });
  }

  Load load(Ledger ledger) {
    return new Load(client(), ledger, 300, 32, 1).start();
  }

  @Override
  public void close() {
    if (client != null) {
      client.close();
    }
    for (Child p : pods) {
      p.kill();
    }
    if (manager != null) {
      manager.kill();
    }
    db.stop();
  }
}

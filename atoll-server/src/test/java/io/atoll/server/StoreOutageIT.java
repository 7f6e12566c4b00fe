package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.manager.ManagerState;
import io.atoll.runtime.Sharding;
import io.atoll.server.demo.Account;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.demo.StoreServer;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store stops for 30 s (SIGSTOP of a real {@code redis-server}) under an {@code atoll manager}
 * process with a 45 s store lease and a 3 s pod lease, and a pod asks to join meanwhile: the
 * manager cannot save it (its saves and their read-back time out, off its loop), yet the two pods
 * keep their leases and serve every shard throughout (the leader keeps granting while its store
 * lease is surely live); the manager retries with back-off and resumes under the same term when the
 * store answers again (the saves it sent during the outage run then: its own, not a rival's), the
 * new pod gets its share, and the stored state reads back whole.
 */
class StoreOutageIT {

  private static final Duration OUTAGE = Duration.ofSeconds(30);

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

  @Test
  void podsServeThroughAThirtySecondStoreOutageAndTheManagerResumes() throws Exception {
    StoreServer.binary("redis-server", "redis-server");
    try (StoreServer redis = StoreServer.start("redis", dir.resolve("redis"));
        ProcessCluster processes = new ProcessCluster(dir, Duration.ZERO);
        AssignmentStore store = StoreSpec.parse(redis.uri(), dir.resolve("unused")).open()) {
      ManagedProcess manager = processes.start(AtollProcesses.atoll("manager", List.of("manager", "--port", "0",
          "--store", redis.uri(), "--shards", "30", "--lease", "3s", "--lease-margin", "1s", "--store-lease", "45s",
          "--rebalance-interval", "2s", "--rebalance-retry", "500ms")));
      PodAddress address = manager.awaitAddress(Duration.ofSeconds(60));
      try (Sharding a = pod(address); Sharding b = pod(address)) {
        // Settled before the outage: a shard still being handed over waits for the store, by design.
        Awaitility.await().atMost(Duration.ofSeconds(30))
            .until(() -> a.servedShards().size() == 15 && b.servedShards().size() == 15);
        long term = ManagerState.decode(store.load().orElseThrow().data()).term();

        redis.pause();
        CompletableFuture<Sharding> joining = CompletableFuture.supplyAsync(() -> pod(address, Duration.ofSeconds(120)));
        try {
          try {
            // Ten pod leases without the store while a pod asks to join: every shard stays served.
            Awaitility.await().during(OUTAGE.minusSeconds(2)).atMost(OUTAGE).until(() -> a.holdsLease()
                && b.holdsLease() && a.servedShards().size() + b.servedShards().size() == 30);
            assertThat(joining).as("a join waits for the store").isNotDone();
          } finally {
            redis.resume();
          }

          // The manager resumes: the pod that asked joins and gets its share, saved under the same term.
          Sharding c = joining.get(90, TimeUnit.SECONDS);
          Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> c.servedShards().size() == 10
              && a.servedShards().size() + b.servedShards().size() + c.servedShards().size() == 30);
          ManagerState after = ManagerState.decode(store.load().orElseThrow().data());
          assertThat(after.term()).as("the same leader, resumed").isEqualTo(term);
          assertThat(after.config().activePods()).hasSize(3);
          assertThat(after.config().unownedCount()).isZero();
          assertThat(manager.isAlive()).isTrue();
          assertThat(manager.logText()).contains("renewing the store lease failed").contains("renewed again")
              .doesNotContain("deposed");
        } finally {
          joining.thenAccept(Sharding::close); // now, or when it starts after a failure
        }
      }
    }
  }

  private static Sharding pod(PodAddress manager) {
    return pod(manager, Duration.ofSeconds(30));
  }

  private static Sharding pod(PodAddress manager, Duration startTimeout) {
    return Sharding.builder().manager(manager.toString()).startTimeout(startTimeout)
        .register(Account.TYPE, Account.factory(null)).start();
  }
}

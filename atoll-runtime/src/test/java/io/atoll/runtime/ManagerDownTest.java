package io.atoll.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pods keep serving the shards they hold while the manager is down; a restarted one resumes. */
class ManagerDownTest {

  @TempDir
  Path dir;
  TestCluster cluster;

  @BeforeEach
  void start() {
    cluster = new TestCluster(dir, TestCluster.fast(20));
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void podsServeKnownShardsWithTheManagerDownAndARestartedManagerResumes() throws Exception {
    Sharding a = cluster.addPod();
    Sharding b = cluster.addPod();
    cluster.awaitStable(Duration.ofSeconds(10));
    int port = cluster.manager.address().port();
    long term = cluster.manager.term();
    cluster.manager.close();
    // Well past a lease (1.5 s) plus margin, pods still hold their leases and serve.
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
    int round = 0;
    while (System.nanoTime() < until) {
      for (int i = 0; i < 20; i++) {
        EntityRef<Counter.Msg> ref = (i % 2 == 0 ? a : b).entity(Counter.TYPE, "md-" + i);
        ref.tell(new Counter.Add(1)).toCompletableFuture().get(5, TimeUnit.SECONDS);
      }
      round++;
      assertThat(a.holdsLease()).isTrue();
      assertThat(b.holdsLease()).isTrue();
    }
    for (int i = 0; i < 20; i++) {
      assertThat(a.entity(Counter.TYPE, "md-" + i).<Long>ask(Counter.Get::new).toCompletableFuture()
          .get(5, TimeUnit.SECONDS)).isEqualTo(round);
    }
    cluster.startManager(port);
    assertThat(cluster.manager.term()).isEqualTo(term + 1);
    // The restarted manager knows both pods; a third joins and gets its share.
    Sharding c = cluster.addPod();
    cluster.awaitStable(Duration.ofSeconds(15));
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> c.servedShards().size() >= 6);
    assertThat(a.holdsLease() && b.holdsLease() && c.holdsLease()).isTrue();
  }
}

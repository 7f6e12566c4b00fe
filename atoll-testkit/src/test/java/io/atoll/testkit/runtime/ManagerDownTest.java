package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Pods keep serving the shards they hold while the manager is down; a restarted one resumes. */
@AtollCluster(shards = 20, podTemplate = Counter.Pods.class)
class ManagerDownTest {

  @Test
  void podsServeKnownShardsWithTheManagerDownAndARestartedManagerResumes(LocalCluster cluster) throws Exception {
    Sharding a = cluster.addPod();
    Sharding b = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(10));
    int port = cluster.managerAddress().port();
    long term = cluster.manager().term();
    cluster.stopManager();
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
    assertThat(cluster.manager().term()).isEqualTo(term + 1);
    // The restarted manager knows both pods; a third joins and gets its share.
    Sharding c = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(15));
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> c.servedShards().size() >= 6);
    assertThat(a.holdsLease() && b.holdsLease() && c.holdsLease()).isTrue();
  }
}

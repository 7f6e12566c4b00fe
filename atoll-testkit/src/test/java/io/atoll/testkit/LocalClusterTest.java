package io.atoll.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.runtime.Sharding;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The in-JVM cluster on its own: settling, pods leaving, the manager stopping and restarting. */
class LocalClusterTest {

  @Test
  void podsSettleALeavingPodsShardsMoveAndARestartedManagerTakesTheNextTerm() {
    try (LocalCluster cluster = LocalCluster.builder().shards(12).start()) {
      Sharding a = cluster.addPod();
      Sharding b = cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(20));
      assertThat(a.servedShards().size() + b.servedShards().size()).isEqualTo(12);
      cluster.stopPod(a);
      cluster.awaitSettled(Duration.ofSeconds(20));
      assertThat(b.servedShards()).hasSize(12);
      assertThat(cluster.pods()).containsExactly(b);

      int port = cluster.managerAddress().port();
      long term = cluster.manager().term();
      assertThatThrownBy(() -> cluster.startManager(0)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("expected: stopped");
      cluster.stopManager();
      assertThatThrownBy(cluster::manager).hasMessageContaining("the shard manager is stopped");
      cluster.startManager(port);
      assertThat(cluster.manager().term()).isEqualTo(term + 1);
      assertThat(cluster.isSettled()).isTrue();
    }
  }

  @Test
  void aGivenDirectoryIsKeptAndATemporaryOneIsDeleted(@org.junit.jupiter.api.io.TempDir Path dir) {
    LocalCluster kept = LocalCluster.builder().shards(4).dir(dir).start();
    kept.close();
    assertThat(dir.resolve("manager")).exists();
    assertThat(kept.isClosed()).isTrue();
    kept.close(); // idempotent
    LocalCluster temporary = LocalCluster.builder().shards(4).start();
    Path made = temporary.dir();
    assertThat(made.resolve("manager")).exists();
    temporary.close();
    assertThat(made).doesNotExist();
  }

  @Test
  void aVirtualTickerMovesEveryMembersClockOnlyForward() {
    VirtualTicker t = new VirtualTicker();
    long before = t.nanoTime();
    t.advance(Duration.ofSeconds(30));
    assertThat(t.nanoTime() - before).isGreaterThanOrEqualTo(Duration.ofSeconds(30).toNanos());
    assertThat(t.advanced()).isEqualTo(Duration.ofSeconds(30));
    assertThatThrownBy(() -> t.advance(Duration.ofSeconds(-1))).hasMessageContaining("expected: >= 0");
    try (LocalCluster cluster = LocalCluster.builder().shards(4).ticker(t).start()) {
      Sharding pod = cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(20));
      assertThat(pod.holdsLease()).isTrue();
    }
  }

  @Test
  void waitingTimesOutSayingWhat() {
    assertThatThrownBy(() -> Await.until("the sky falling", Duration.ofMillis(50), () -> false))
        .isInstanceOf(Await.ConditionTimeoutException.class).hasMessage("the sky falling did not happen within 50 ms");
    assertThatThrownBy(() -> LocalCluster.builder().shards(0)).hasMessageContaining("expected: 1..");
  }
}

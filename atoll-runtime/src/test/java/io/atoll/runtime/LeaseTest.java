package io.atoll.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Leases: a pod cut off from a manager that is alive for others fences itself before its shards move. */
class LeaseTest {

  @TempDir
  Path dir;

  /** Shard starts and stops of every pod, in one order; flags a shard served by two pods. */
  static final class Timeline {
    final List<String> violations = new ArrayList<>();
    final Map<Integer, Set<String>> serving = new HashMap<>();

    ShardingObserver observer(String pod, AtomicBoolean fenced) {
      return new ShardingObserver() {
        @Override
        public void shardActivated(int shard, long epoch) {
          synchronized (Timeline.this) {
            Set<String> s = serving.computeIfAbsent(shard, k -> new HashSet<>());
            if (!s.isEmpty() && !s.contains(pod)) {
              violations.add("shard " + shard + " started on " + pod + " while served by " + s);
            }
            s.add(pod);
          }
        }

        @Override
        public void shardReleased(int shard) {
          synchronized (Timeline.this) {
            serving.getOrDefault(shard, new HashSet<>()).remove(pod);
          }
        }

        @Override
        public void fenced() {
          fenced.set(true);
        }
      };
    }
  }

  @Test
  void aPodThatTheLiveManagerRefusesFencesItselfAndItsShardsMoveOnlyAfterwards() throws Exception {
    Timeline timeline = new Timeline();
    AtomicBoolean aFenced = new AtomicBoolean();
    try (TestCluster cluster = new TestCluster(dir, TestCluster.fast(20))) {
      TcpProxy proxy = new TcpProxy(cluster.manager.address().port());
      // Pod a reaches the manager only through the proxy; pod b directly.
      Sharding a = cluster.addPod(x -> x.manager("127.0.0.1:" + proxy.port()).observer(timeline.observer("a", aFenced)));
      Sharding b = cluster.addPod(x -> x.observer(timeline.observer("b", new AtomicBoolean())));
      cluster.awaitStable(Duration.ofSeconds(10));
      PodId aId = a.podId();
      proxy.close(); // the manager now refuses a, and only a
      Awaitility.await().atMost(Duration.ofSeconds(15)).until(() ->
          cluster.manager.config().pod(aId).map(e -> e.status() == PodStatus.GONE).orElse(false));
      assertThat(aFenced).as("pod a fenced itself").isTrue();
      cluster.awaitStable(Duration.ofSeconds(15));
      assertThat(b.servedShards()).hasSize(20);
      synchronized (timeline) {
        assertThat(timeline.violations).isEmpty();
      }
    }
  }
}

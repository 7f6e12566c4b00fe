package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.manager.ManagerState;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.server.demo.Account;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shard manager is killed (kill -9) at random points of rebalances, again and again. After
 * every restart its store must be readable and newer than before, and across the whole run no
 * shard may ever have been served by two pods at once, as the pods themselves report it.
 */
class ManagerCrashIT {

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);
  int managers;

  /** Every pod's shard starts and stops, in one order for the whole JVM. */
  static final class Timeline {
    private final List<String> violations = new ArrayList<>();
    private final Map<Integer, Set<String>> serving = new HashMap<>();
    private int events;

    synchronized void started(String pod, int shard) {
      events++;
      Set<String> s = serving.computeIfAbsent(shard, k -> new HashSet<>());
      if (!s.isEmpty() && !s.contains(pod)) {
        violations.add("shard " + shard + " started on " + pod + " while served by " + s);
      }
      s.add(pod);
    }

    synchronized void stopped(String pod, int shard) {
      events++;
      serving.getOrDefault(shard, new HashSet<>()).remove(pod);
    }

    synchronized List<String> violations() {
      return List.copyOf(violations);
    }

    synchronized int events() {
      return events;
    }
  }

  private Sharding pod(PodAddress manager, Timeline timeline, String name) {
    return Sharding.builder().manager(manager.toString())
        .register(Account.TYPE, Account.factory(null))
        .terminationTimeout(Duration.ofSeconds(1))
        .observer(new ShardingObserver() {
          @Override
          public void shardActivated(int shard, long epoch) {
            timeline.started(name, shard);
          }

          @Override
          public void shardReleased(int shard) {
            timeline.stopped(name, shard);
          }
        })
        .start();
  }

  private ManagedProcess manager(ProcessCluster processes, int port) {
    ManagedProcess m = processes.start(AtollProcesses.atoll("manager-" + (++managers), List.of("manager", "--port",
        Integer.toString(port),
        "--data-dir", dir.resolve("manager").toString(), "--shards", "60", "--lease", "3s", "--lease-margin", "1s",
        "--max-moves", "4", "--rebalance-interval", "2s", "--rebalance-retry", "500ms", "--ping-timeout", "1s",
        "--termination-timeout", "1s")));
    m.awaitAddress(Duration.ofSeconds(60));
    return m;
  }

  @Test
  void killingTheManagerMidRebalanceNeverGivesAShardTwoServersAndItsStoreStaysReadable() throws Exception {
    Timeline timeline = new Timeline();
    ProcessCluster processes = new ProcessCluster(dir, Duration.ZERO);
    ManagedProcess manager = manager(processes, 0);
    PodAddress address = manager.awaitAddress(Duration.ofSeconds(5));
    List<Sharding> pods = new ArrayList<>();
    Random random = new Random(20261122);
    long lastTerm = 0;
    long lastEpoch = 0;
    int name = 0;
    try {
      pods.add(pod(address, timeline, "p" + (++name)));
      pods.add(pod(address, timeline, "p" + (++name)));
      for (int round = 0; round < 8; round++) {
        // Trigger a rebalance: a pod joins, or one leaves gracefully (small rounds: 4 moves).
        if (pods.size() < 4 && (pods.size() < 3 || random.nextBoolean())) {
          pods.add(pod(address, timeline, "p" + (++name)));
        } else {
          Sharding leaving = pods.remove(random.nextInt(pods.size()));
          Thread.ofVirtual().start(leaving::close);
        }
        Thread.sleep(random.nextInt(400)); // picks the random moment of the fault; not a synchronization
        manager.kill();
        assertThat(manager.awaitExit(Duration.ofSeconds(10))).isPresent();
        // The store is whole and newer than what the last term saw.
        AssignmentStore.Stored stored = FileAssignmentStore.read(dir.resolve("manager")).orElseThrow();
        ManagerState state = ManagerState.decode(stored.data());
        assertThat(state.term()).isGreaterThan(lastTerm);
        assertThat(state.config().epoch()).isGreaterThanOrEqualTo(lastEpoch);
        lastTerm = state.term();
        lastEpoch = state.config().epoch();
        manager = manager(processes, address.port());
      }
      // After the storm, the cluster settles: every shard served by exactly one live pod.
      Awaitility.await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(100)).until(() -> {
        int served = 0;
        for (Sharding p : pods) {
          served += p.servedShards().size();
        }
        return served == 60;
      });
      assertThat(timeline.violations()).isEmpty();
      assertThat(timeline.events()).isGreaterThan(60);
      for (Sharding p : pods) {
        assertThat(p.entity(Account.TYPE, "after-" + p.podId().address().port())
            .<Long>ask(io.atoll.server.demo.AccountMsg.Balance::new).toCompletableFuture().get(10, TimeUnit.SECONDS))
            .isZero();
      }
    } finally {
      for (Sharding p : pods) {
        Thread.ofVirtual().start(p::close);
      }
      processes.close();
    }
  }
}

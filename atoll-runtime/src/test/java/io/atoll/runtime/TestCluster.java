package io.atoll.runtime;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodStatus;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.store.file.FileAssignmentStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.awaitility.Awaitility;

/**
 * A real cluster in one JVM: a shard manager with a file store, and pods, all talking gRPC on
 * loopback ephemeral ports.
 */
final class TestCluster implements AutoCloseable {

  final Path dir;
  final ManagerSettings settings;
  ShardManager manager;
  final List<Sharding> pods = new ArrayList<>();

  TestCluster(Path dir, ManagerSettings settings) {
    this.dir = dir;
    this.settings = settings;
    startManager(0);
  }

  static ManagerSettings fast(int shards) {
    return ManagerSettings.defaults()
        .withNumberOfShards(shards)
        .withLease(Duration.ofMillis(1500), Duration.ofMillis(500))
        .withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(2))
        .withRebalanceIntervals(Duration.ofSeconds(5), Duration.ofMillis(500));
  }

  void startManager(int port) {
    manager = ShardManager.start(settings, FileAssignmentStore.open(dir.resolve("manager")), "127.0.0.1", port);
  }

  String managerAddress() {
    return manager.address().toString();
  }

  Sharding.Builder podBuilder() {
    return Sharding.builder().manager(managerAddress()).register(Counter.TYPE, ctx -> new Counter())
        .terminationTimeout(Duration.ofSeconds(2))
        .askTimeout(Duration.ofSeconds(5)).sendTimeout(Duration.ofSeconds(5));
  }

  Sharding addPod() {
    return addPod(b -> b);
  }

  Sharding addPod(UnaryOperator<Sharding.Builder> custom) {
    Sharding s = custom.apply(podBuilder()).start();
    pods.add(s);
    return s;
  }

  /** Waits until every shard is owned by an active pod and each pod serves exactly what it owns. */
  void awaitStable(Duration timeout) {
    Awaitility.await().atMost(timeout).until(this::stable);
  }

  boolean stable() {
    ClusterConfig c = manager.config();
    for (int pos = 0; pos < c.size(); pos++) {
      PodEntry e = c.ownerEntry(pos);
      if (e == null || e.status() != PodStatus.ACTIVE) {
        return false;
      }
    }
    int served = 0;
    for (Sharding p : pods) {
      if (!c.pod(p.podId()).map(e -> e.status() == PodStatus.ACTIVE).orElse(false)) {
        continue;
      }
      List<Integer> owned = c.positionsByOwner().getOrDefault(p.podId(), List.of()).stream().map(i -> i + 1).toList();
      if (!p.servedShards().equals(owned)) {
        return false;
      }
      served += owned.size();
    }
    return served == c.size();
  }

  @Override
  public void close() {
    for (Sharding p : pods) {
      try {
        p.close();
      } catch (RuntimeException e) {
        // closing anyway
      }
    }
    if (manager != null) {
      manager.close();
    }
  }
}

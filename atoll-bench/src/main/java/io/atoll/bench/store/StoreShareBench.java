package io.atoll.bench.store;

import io.atoll.bench.cluster.BenchCounter;
import io.atoll.core.ClusterConfig;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.runtime.Sharding;
import io.atoll.store.etcd.EtcdAssignmentStore;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.store.redis.RedisAssignmentStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The store's share of a rebalance: a manager on the given store and two pods in this JVM; a third
 * pod joins and later leaves, again and again. For each rebalance (from the pod's registration, or
 * from its close, to a balanced config) it measures the wall time and the time spent in the store's saves,
 * and prints the median of each and of their ratio.
 *
 * <pre>
 * java -cp atoll-bench/target/benchmarks.jar io.atoll.bench.store.StoreShareBench \
 *     --store file:/tmp/x | etcd://127.0.0.1:2379/bench | redis://127.0.0.1:6379?prefix=bench [--runs 7] [--shards 300]
 * </pre>
 */
public final class StoreShareBench {

  private StoreShareBench() {}

  static AssignmentStore open(String spec) {
    if (spec.startsWith("file:")) {
      return FileAssignmentStore.open(Path.of(spec.substring(5)));
    }
    if (spec.startsWith("etcd")) {
      return EtcdAssignmentStore.open(spec);
    }
    if (spec.startsWith("redis")) {
      return RedisAssignmentStore.open(spec);
    }
    throw new IllegalArgumentException("--store: '" + spec + "' (expected: file:<dir>, etcd://..., redis://...)");
  }

  private static boolean balanced(ClusterConfig c, int pods) {
    if (c.activePods().size() != pods || c.unownedCount() > 0) {
      return false;
    }
    var counts = c.ownedCounts();
    int min = Integer.MAX_VALUE;
    int max = 0;
    int sum = 0;
    for (var p : c.activePods()) {
      int n = counts.getOrDefault(p.id(), 0);
      min = Math.min(min, n);
      max = Math.max(max, n);
      sum += n;
    }
    return sum == c.size() && max - min <= 1; // every shard on an active pod, evenly
  }

  private static long[] awaitBalanced(ShardManager m, MeteredStore store, int pods, long t0, long s0) {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!balanced(m.config(), pods)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not balanced over " + pods + " pods within 60 s");
      }
      LockSupport.parkNanos(1_000_000); // polling the manager's config for the end of the rebalance
    }
    return new long[] {System.nanoTime() - t0, store.saveNanos() - s0};
  }

  private static double median(List<Double> xs) {
    double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
  }

  /**
   * Runs the measurement and prints its medians.
   *
   * @param args {@code --store SPEC [--runs N] [--shards N]}
   */
  public static void main(String[] args) throws Exception {
    String spec = null;
    int runs = 7;
    int shards = 300;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--store" -> spec = args[++i];
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--shards" -> shards = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]
            + " (expected: --store SPEC [--runs N] [--shards N])");
      }
    }
    if (spec == null) {
      throw new IllegalArgumentException("--store is required (file:<dir>, etcd://..., redis://...)");
    }
    if (spec.startsWith("file:")) {
      Files.createDirectories(Path.of(spec.substring(5)));
    }
    MeteredStore store = new MeteredStore(open(spec));
    ManagerSettings settings = ManagerSettings.defaults().withNumberOfShards(shards)
        .withRebalanceIntervals(Duration.ofMinutes(10), Duration.ofMillis(200));
    ShardManager manager = ShardManager.start(settings, store, "127.0.0.1", 0);
    List<Sharding> pods = new ArrayList<>();
    List<Double> wall = new ArrayList<>();
    List<Double> inStore = new ArrayList<>();
    List<Double> share = new ArrayList<>();
    long savesBefore = 0;
    long rebalances = 0;
    try {
      for (int i = 0; i < 2; i++) {
        pods.add(pod(manager));
      }
      awaitBalanced(manager, store, 2, System.nanoTime(), store.saveNanos());
      savesBefore = store.saves();
      for (int run = 0; run < runs + 1; run++) {
        Sharding third = pod(manager); // returns once registered: the rebalance it asked for follows
        long t0 = System.nanoTime();
        long s0 = store.saveNanos();
        long[] join = awaitBalanced(manager, store, 3, t0, s0);
        t0 = System.nanoTime();
        s0 = store.saveNanos();
        third.close();
        long[] leave = awaitBalanced(manager, store, 2, t0, s0);
        if (run == 0) {
          continue; // warm-up
        }
        for (long[] r : List.of(join, leave)) {
          wall.add(r[0] / 1e6);
          inStore.add(r[1] / 1e6);
          share.add(100.0 * r[1] / r[0]);
          rebalances++;
        }
      }
      System.out.printf("store %s: %d rebalances (a pod joins or leaves, %d shards, 2<->3 pods), %d saves;"
          + " median wall %.1f ms, median in store saves %.1f ms, median share %.1f %%%n", spec, rebalances, shards,
          store.saves() - savesBefore, median(wall), median(inStore), median(share));
      System.out.println("  wall ms:  " + Arrays.toString(wall.stream().mapToLong(Math::round).toArray()));
      System.out.println("  store ms: " + Arrays.toString(inStore.stream().mapToLong(Math::round).toArray()));
    } finally {
      for (Sharding p : pods) {
        p.close();
      }
      manager.close();
    }
  }

  private static Sharding pod(ShardManager manager) {
    return Sharding.builder().manager(manager.address().toString()).register(BenchCounter.TYPE, ctx -> new BenchCounter())
        .start();
  }
}

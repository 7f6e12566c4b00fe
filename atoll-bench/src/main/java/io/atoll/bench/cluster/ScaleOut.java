package io.atoll.bench.cluster;

import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.Await;
import io.atoll.testkit.ClusterChecks;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How remote throughput grows with the pods: for 1, 2, ... {@code maxPods} pod JVMs in turn, each
 * a fresh cluster (300 shards spread over the pods, {@code counters} counters, a client pod in this
 * JVM), asks with 64 and with 256 in flight and confirmed tells as remote-tell sends them; per
 * pod count the rate and its ratio to one pod. On a machine with fewer cores than processes this
 * measures what the extra hops and processes cost, not how far Atoll scales. Not thread-safe; not
 * API.
 */
final class ScaleOut {

  /** The loads measured per pod count, in order: asks with 64 and with 256 in flight, confirmed tells. */
  static final List<String> LOADS = List.of("ask64", "ask256", "tell");

  private final Loads loads;
  private final int counters;
  private final int maxPods;
  private final String podHeap;

  /**
   * @param loads the measured seconds and warm-up of each load
   * @param counters the counters the client sends to, round-robin
   * @param maxPods the most pods measured, from 1
   * @param podHeap each pod JVM's heap, as {@code -Xmx} takes it
   */
  ScaleOut(Loads loads, int counters, int maxPods, String podHeap) {
    if (counters < 1 || maxPods < 1 || maxPods > 8) {
      throw new IllegalArgumentException("counters " + counters + ", pods " + maxPods
          + " (expected: counters >= 1, pods 1 to 8)");
    }
    this.loads = loads;
    this.counters = counters;
    this.maxPods = maxPods;
    this.podHeap = podHeap;
  }

  /**
   * The figures: per load of {@link #LOADS} and pod count N, {@code <load> N pod(s) msg/s}, and for
   * N > 1 {@code <load> N/1}, its ratio to one pod; then {@code failed}, the asks that failed over
   * all pod counts.
   */
  Map<String, Double> run() throws Exception {
    Map<String, Double> rates = new LinkedHashMap<>();
    Map<String, Double> one = new LinkedHashMap<>();
    double failed = 0;
    for (int pods = 1; pods <= maxPods; pods++) {
      Map<String, Double> byLoad = new LinkedHashMap<>();
      failed += measure(pods, byLoad);
      String n = pods + (pods == 1 ? " pod" : " pods");
      for (String load : LOADS) {
        double rate = byLoad.get(load);
        rates.put(load + " " + n + " msg/s", rate);
        if (pods == 1) {
          one.put(load, rate);
        } else {
          rates.put(load + " " + pods + "/1", ratio(rate, one.get(load)));
        }
      }
    }
    rates.put("failed", failed);
    return rates;
  }

  /** Puts each load's rate against {@code pods} pods into {@code byLoad}; returns the asks that failed. */
  private double measure(int pods, Map<String, Double> byLoad) throws Exception {
    double failed = 0;
    try (BenchCluster c = new BenchCluster()) {
      Sharding client = c.remote(pods, podHeap);
      // Pods that start together register one after another: every shard is owned well before
      // the later ones hold their share.
      Await.until("300 shards spread evenly over " + pods + " pods", Duration.ofSeconds(60),
          () -> ClusterChecks.balanced(client.config(), pods));
      List<EntityRef<BenchCounter.Msg>> refs = Loads.refs(client, counters);
      int hosting = Loads.onePerPod(client.config(), refs).size();
      if (hosting != pods) {
        throw new IllegalStateException("the " + counters + " counters live on " + hosting + " of " + pods
            + " pods (expected: spread over all of them)");
      }
      // Fresh pod JVMs compile their hot path during the first seconds of load: warm them up
      // once, unmeasured, so that the first load measured is not the one that pays for it.
      new Loads(0, Math.max(1, loads.warmup())).throughput(refs, 256, true);
      for (String load : LOADS) {
        Map<String, Double> m = switch (load) {
          case "ask64" -> loads.throughput(refs, 64, true);
          case "ask256" -> loads.throughput(refs, 256, true);
          default -> loads.confirmedTells(client, refs, false);
        };
        failed += m.get("failed");
        byLoad.put(load, m.get("msg/s"));
      }
    }
    return failed;
  }

  private static double ratio(double n, double one) {
    return one > 0 ? n / one : Double.NaN;
  }
}

package io.atoll.bench.cluster;

import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How remote throughput grows with the pods: for 1, 2, ... {@code maxPods} pod JVMs in turn, each
 * a fresh cluster (300 shards spread over the pods, {@code counters} counters, a client pod in this
 * JVM), asks with 64 in flight and confirmed tells as remote-tell sends them; per pod count the
 * rate and its ratio to one pod. On a machine with fewer cores than processes this measures what
 * the extra hops and processes cost, not how far Atoll scales. Not thread-safe; not API.
 */
final class ScaleOut {

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
   * The figures, keys {@code ask N pods msg/s}, {@code tell N pods msg/s}, {@code ask N/1},
   * {@code tell N/1} and {@code failed} (asks that failed, over all pod counts).
   */
  Map<String, Double> run() throws Exception {
    Map<String, Double> r = new LinkedHashMap<>();
    double failed = 0;
    double ask1 = 0;
    double tell1 = 0;
    for (int pods = 1; pods <= maxPods; pods++) {
      Map<String, Double> ask;
      Map<String, Double> tell;
      try (BenchCluster c = new BenchCluster()) {
        Sharding client = c.remote(pods, podHeap);
        List<EntityRef<BenchCounter.Msg>> refs = Loads.refs(client, counters);
        int hosting = Loads.onePerPod(client.config(), refs).size();
        if (hosting != pods) {
          throw new IllegalStateException("the " + counters + " counters live on " + hosting + " of " + pods
              + " pods (expected: spread over all of them)");
        }
        ask = loads.throughput(refs, 64, true);
        tell = loads.confirmedTells(client, refs, false);
      }
      failed += ask.get("failed");
      double a = ask.get("msg/s");
      double t = tell.get("msg/s");
      if (pods == 1) {
        ask1 = a;
        tell1 = t;
      }
      String n = pods + (pods == 1 ? " pod" : " pods");
      r.put("ask " + n + " msg/s", a);
      r.put("tell " + n + " msg/s", t);
      if (pods > 1) {
        r.put("ask " + pods + "/1", ratio(a, ask1));
        r.put("tell " + pods + "/1", ratio(t, tell1));
      }
    }
    r.put("failed", failed);
    return r;
  }

  private static double ratio(double n, double one) {
    return one > 0 ? n / one : Double.NaN;
  }
}

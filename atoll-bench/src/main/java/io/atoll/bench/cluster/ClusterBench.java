package io.atoll.bench.cluster;

import io.atoll.bench.sidebyside.BenchArgs;
import io.atoll.bench.sidebyside.Results;
import io.atoll.core.ClusterConfig;
import io.atoll.core.ShardHasher;
import io.atoll.manager.ManagerSettings;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.ClusterChecks;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cluster load generator: the figures of docs/benchmarks.md that need real pods. A shard
 * manager runs in this JVM; "remote" scenarios put the counters in other JVMs ({@link BenchPod})
 * and send from a client pod here, over gRPC on loopback; "local" ones host the counters here.
 * Each scenario runs {@code --runs} times (fresh processes each time) and reports the median.
 *
 * <pre>
 * java -cp atoll-bench/target/benchmarks.jar io.atoll.bench.cluster.ClusterBench [scenario ...]
 *      [--runs 3] [--seconds 10] [--warmup 5] [--idle 200000]
 * </pre>
 *
 * Scenarios: remote-ask-64, remote-ask-1, remote-ask-1-vt, remote-tell, remote-tell-acked,
 * local-ask-64, local-ask-1, local-ask-1-vt, local-tell, local-tell-acked, idle-heap, join,
 * first-message ("-vt": the caller is a virtual thread), local-tell-own-threads and
 * local-ask-64-own-threads (the counters hosted as a type is by default, each with a thread of its
 * own, where the others declare inline local sends: {@link BenchCounter#TYPE}),
 * local-tell-shared-drains, local-ask-64-shared-drains and local-ask-1-shared-drains (on the pod's
 * shared drains only), and the scale figures idle-million, join-large and scale-out (not run by
 * default: they take minutes and gigabytes). The tell
 * scenarios ignore each tell's future and confirm the handled count in batches, as the Pekko peer
 * must; "-acked" waits for every tell's acknowledgement instead (8192 in flight). A remote scenario
 * with "-tls" appended runs every connection as mutual TLS (certificates made for the run); name
 * both, alternating, to compare them in one run. Public for the command line; not API.
 */
public final class ClusterBench {

  /** The heap of each pod JVM of join-large and scale-out: three of them fit beside other work. */
  static final String SCALE_POD_HEAP = "512m";

  private final Loads loads;
  private final BenchCluster cluster;

  ClusterBench(Loads loads, BenchCluster cluster) {
    this.loads = loads;
    this.cluster = cluster;
  }

  /** Runs the scenarios named on the command line (all but the scale figures by default). */
  public static void main(String[] args) throws Exception {
    BenchArgs a = BenchArgs.parse(args, List.of("remote-ask-64", "remote-ask-1", "remote-ask-1-vt", "remote-tell",
        "local-ask-64", "local-ask-1", "local-ask-1-vt", "local-tell", "idle-heap", "join", "first-message"));
    System.out.printf("%s, %d cores, JDK %s, max heap %d MiB; %d run(s) of %d s after %d s warm-up%n",
        System.getProperty("os.name"), Runtime.getRuntime().availableProcessors(), Runtime.version(),
        Runtime.getRuntime().maxMemory() >> 20, a.runs(), a.seconds(), a.warmup());
    Loads loads = new Loads(a.warmup(), a.seconds());
    for (String s : a.scenarios()) {
      List<Map<String, Double>> results = new ArrayList<>();
      for (int r = 0; r < a.runs(); r++) {
        results.add(run(s, loads, a.idle()));
        System.out.printf("  %s run %d: %s%n", s, r + 1, Results.format(results.get(results.size() - 1)));
      }
      Map<String, Double> m = Results.median(results);
      System.out.printf("%s median: %s%n", s, Results.format(m));
      Results.emit(s, m);
    }
    System.exit(0);
  }

  /** One run of {@code scenario}, in fresh processes. */
  static Map<String, Double> run(String scenario, Loads loads, int idle) throws Exception {
    if (scenario.equals("scale-out")) {
      return new ScaleOut(loads, 1000, 3, SCALE_POD_HEAP).run();
    }
    try (BenchCluster c = new BenchCluster()) {
      if (scenario.startsWith("remote-") && scenario.endsWith("-tls")) {
        c.useTls();
        scenario = scenario.substring(0, scenario.length() - "-tls".length());
      }
      return new ClusterBench(loads, c).measure(scenario, idle);
    }
  }

  private Map<String, Double> measure(String scenario, int idle) throws Exception {
    return switch (scenario) {
      case "remote-ask-64" -> loads.throughput(Loads.refs(remote(), 1000), 64, true);
      case "remote-ask-1" -> loads.latency(Loads.refs(remote(), 1000));
      case "remote-tell" -> confirmedTells(remote(), false);
      case "remote-tell-acked" -> loads.throughput(Loads.refs(remote(), 1000), 8192, false);
      case "local-ask-64" -> loads.throughput(Loads.refs(cluster.local(), 1000), 64, true);
      case "local-ask-1" -> loads.latency(Loads.refs(cluster.local(), 1000));
      case "local-ask-1-vt" -> onVirtualThread(() -> loads.latency(Loads.refs(cluster.local(), 1000)));
      case "remote-ask-1-vt" -> onVirtualThread(() -> loads.latency(Loads.refs(remote(), 1000)));
      case "local-tell" -> confirmedTells(cluster.local(), true);
      case "local-tell-own-threads" -> confirmedTells(cluster.local(BenchCounter.OWN_THREADS), true);
      case "local-tell-shared-drains" -> confirmedTells(cluster.local(BenchCounter.SHARED_DRAINS), true);
      case "local-ask-64-shared-drains" -> loads.throughput(Loads.refs(cluster.local(BenchCounter.SHARED_DRAINS), 1000),
          64, true);
      case "local-ask-1-shared-drains" -> loads.latency(Loads.refs(cluster.local(BenchCounter.SHARED_DRAINS), 1000));
      case "local-ask-64-own-threads" -> loads.throughput(Loads.refs(cluster.local(BenchCounter.OWN_THREADS), 1000), 64,
          true);
      case "local-tell-acked" -> loads.throughput(Loads.refs(cluster.local(), 1000), 8192, false);
      case "idle-heap" -> idleHeap(idle);
      case "idle-million" -> idleHeap(1_000_000);
      case "join" -> join(300, 10_000, BenchCluster.POD_HEAP);
      case "join-large" -> join(3000, 100_000, SCALE_POD_HEAP);
      case "first-message" -> firstMessage();
      default -> throw new IllegalArgumentException("scenario: " + scenario
          + " (expected: remote-ask-64, remote-ask-1, remote-tell, local-ask-64, local-ask-1, local-tell, idle-heap,"
          + " join, first-message, idle-million, join-large, scale-out, local-tell-own-threads, local-ask-64-own-threads,"
          + " local-tell-shared-drains, local-ask-64-shared-drains, local-ask-1-shared-drains)");
    };
  }

  private Sharding remote() {
    return cluster.remote(1, BenchCluster.POD_HEAP);
  }

  private Map<String, Double> confirmedTells(Sharding s, boolean local) throws Exception {
    return loads.confirmedTells(s, Loads.refs(s, 1000), local);
  }

  /** Runs a measurement on a virtual thread, as a caller in a virtual-thread service would. */
  private static Map<String, Double> onVirtualThread(Callable<Map<String, Double>> m) throws Exception {
    CompletableFuture<Map<String, Double>> r = new CompletableFuture<>();
    Thread.ofVirtual().start(() -> {
      try {
        r.complete(m.call());
      } catch (Exception e) {
        r.completeExceptionally(e);
      }
    });
    return r.get();
  }

  /**
   * {@code n} idle counters in one pod in this JVM: the heap each retains (growth of the used heap,
   * read after {@code System.gc()}, divided by {@code n}), how fast they were activated (one
   * acknowledged tell each, 4096 in flight, ids {@code idle-N}), the used heap after, this JVM's
   * maximum heap, and the activations that failed.
   */
  Map<String, Double> idleHeap(int n) throws Exception {
    Sharding pod = cluster.local();
    BenchCounter.Inc inc = new BenchCounter.Inc(1);
    Loads.activate(1000, 64, i -> pod.entity(BenchCounter.TYPE, "c-" + i).tell(inc).toCompletableFuture());
    long before = usedAfterGc();
    long t0 = System.nanoTime();
    long failed = Loads.activate(n, 4096,
        i -> pod.entity(BenchCounter.TYPE, "idle-" + i).tell(inc).toCompletableFuture());
    double activationSeconds = (System.nanoTime() - t0) / 1e9;
    long after = usedAfterGc();
    if (pod.activeEntities() < n - failed) {
      throw new IllegalStateException("only " + pod.activeEntities() + " entities live (expected: " + (n - failed)
          + ")");
    }
    Map<String, Double> r = new LinkedHashMap<>();
    r.put("bytes/entity", (after - before) / (double) n);
    r.put("activations/s", n / activationSeconds);
    r.put("used heap MiB", after / (double) (1 << 20));
    r.put("max heap MiB", Runtime.getRuntime().maxMemory() / (double) (1 << 20));
    r.put("failed", (double) failed);
    return r;
  }

  private static long usedAfterGc() throws InterruptedException {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      TimeUnit.MILLISECONDS.sleep(100); // lets the collector finish before reading the heap
      used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  /**
   * A third pod joins two ({@code shards} shards, {@code entities} live counters, acknowledged
   * tells flowing from a client, 256 in flight): seconds from its registration until the shards are
   * spread evenly (every pod a third, give or take one), and the messages that failed of all sent
   * meanwhile. Each pod JVM gets {@code podHeap}. Gives up after 3 minutes.
   */
  Map<String, Double> join(int shards, int entities, String podHeap) throws Exception {
    cluster.startManager(shards);
    cluster.startPods(2, podHeap);
    Sharding client = cluster.client(2);
    List<EntityRef<BenchCounter.Msg>> refs = Loads.refs(client, entities);
    BenchCounter.Inc inc = new BenchCounter.Inc(1);
    long notActivated = Loads.activate(entities, 1024, i -> refs.get(i).tell(inc).toCompletableFuture());
    if (notActivated > 0) {
      throw new IllegalStateException(notActivated + " of " + entities
          + " activations failed before the join (expected: none)");
    }
    AtomicLong failed = new AtomicLong();
    AtomicLong done = new AtomicLong();
    Semaphore permits = new Semaphore(256);
    Thread load = Thread.ofPlatform().start(() -> {
      int i = 0;
      try {
        while (!Thread.currentThread().isInterrupted()) {
          permits.acquire();
          refs.get(i).tell(inc).whenComplete((v, e) -> {
            if (e != null) {
              failed.incrementAndGet();
            }
            done.incrementAndGet();
            permits.release();
          });
          i = i + 1 == refs.size() ? 0 : i + 1;
        }
      } catch (InterruptedException e) {
        // stop
      }
    });
    TimeUnit.SECONDS.sleep(2); // steady load before the join
    cluster.startPod(podHeap);
    long joined = -1;
    long balanced = -1;
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (System.nanoTime() < deadline) {
      ClusterConfig c = cluster.manager().config();
      if (joined < 0 && c.activePods().size() == 3) {
        joined = System.nanoTime();
      }
      if (joined >= 0 && ClusterChecks.balanced(c, 3)) {
        balanced = System.nanoTime();
        break;
      }
      TimeUnit.MILLISECONDS.sleep(5); // polling the manager's config
    }
    load.interrupt();
    load.join();
    if (!permits.tryAcquire(256, 60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("tells unanswered 60 s after the load stopped (expected: each answered or "
          + "failed by its 30 s timeout)");
    }
    if (balanced < 0) {
      throw new IllegalStateException("not balanced 3 minutes after the third pod " + (joined < 0
          ? "started (it never registered)" : "registered") + "; shards per pod: "
          + cluster.manager().config().ownedCounts().values());
    }
    Map<String, Double> r = new LinkedHashMap<>();
    r.put("balanced after s", (balanced - joined) / 1e9);
    r.put("failed", (double) failed.get());
    r.put("messages", (double) done.get());
    return r;
  }

  /**
   * Latency of the first message to a shard nobody has used yet (the shard is assigned, its pod
   * has never hosted an entity of it): 1000 shards, 200 of them used to warm up, the other 800
   * measured once each.
   */
  private Map<String, Double> firstMessage() throws Exception {
    cluster.startManager(ManagerSettings.defaults().withNumberOfShards(1000));
    cluster.startPods(1, BenchCluster.POD_HEAP);
    Sharding client = cluster.client(1);
    String[] byShard = new String[1001];
    for (int i = 0, found = 0; found < 1000; i++) {
      String id = "f-" + i;
      int shard = ShardHasher.DEFAULT.shardOf(id, 1000);
      if (byShard[shard] == null) {
        byShard[shard] = id;
        found++;
      }
    }
    for (int round = 0; round < 50; round++) {
      for (int shard = 1; shard <= 200; shard++) {
        client.entity(BenchCounter.TYPE, byShard[shard] + "-" + round).<Long>ask(BenchCounter.Get::new)
            .toCompletableFuture().get();
      }
    }
    long[] samples = new long[800];
    for (int shard = 201; shard <= 1000; shard++) {
      long t0 = System.nanoTime();
      client.entity(BenchCounter.TYPE, byShard[shard]).<Long>ask(BenchCounter.Get::new).toCompletableFuture().get();
      samples[shard - 201] = System.nanoTime() - t0;
    }
    return Results.percentiles(samples);
  }
}

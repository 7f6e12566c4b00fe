package io.atoll.bench.pekko;

import io.atoll.bench.sidebyside.BenchArgs;
import io.atoll.bench.sidebyside.ConfirmedTells;
import io.atoll.bench.sidebyside.Results;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.atoll.testkit.process.ProcessSpec;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * The Pekko peer of {@link io.atoll.bench.cluster.ClusterBench}: the same workloads against Pekko
 * Cluster Sharding, same shapes and windows. "Remote": the counters live in a second JVM
 * ({@link PekkoPod}, {@code -Xmx1g}) and this JVM sends from a client node (a sharding proxy);
 * "local": this JVM is the only node.
 *
 * <p>Tells: Pekko's tell has no acknowledgement, so both load generators count the tells the
 * counters handled and confirm them in batches, with at most 8192 unconfirmed
 * ({@link ConfirmedTells}, the same code for Atoll). The figure is handled messages per second.
 *
 * <pre>
 * java -cp atoll-bench/target/benchmarks.jar io.atoll.bench.pekko.PekkoBench [scenario ...]
 *      [--runs 1] [--seconds 10] [--warmup 5] [--idle 200000]
 * </pre>
 *
 * Scenarios: remote-ask-64, remote-ask-1, remote-tell, local-ask-64, local-ask-1, local-ask-1-vt,
 * local-tell, idle-heap, join. Public for the command line; not API.
 */
public final class PekkoBench {

  private static final int SHARDS = 300;
  private static final Duration ASK_TIMEOUT = Duration.ofSeconds(30);

  private final BenchArgs args;
  private final Path dir;
  private final ProcessCluster processes;
  private final List<PekkoNode> nodes = new ArrayList<>();

  private PekkoBench(BenchArgs args) throws IOException {
    this.args = args;
    this.dir = Files.createTempDirectory("pekko-bench");
    this.processes = new ProcessCluster(dir);
  }

  /** Runs the scenarios named on the command line. */
  public static void main(String[] argv) throws Exception {
    BenchArgs a = BenchArgs.parse(argv, List.of("remote-ask-64", "remote-ask-1", "remote-tell", "local-ask-64",
        "local-ask-1", "local-ask-1-vt", "local-tell", "idle-heap", "join"));
    System.out.printf("Pekko peer: %d cores, JDK %s; %d run(s) of %d s after %d s warm-up%n",
        Runtime.getRuntime().availableProcessors(), Runtime.version(), a.runs(), a.seconds(), a.warmup());
    for (String s : a.scenarios()) {
      List<Map<String, Double>> results = new ArrayList<>();
      for (int r = 0; r < a.runs(); r++) {
        PekkoBench b = new PekkoBench(a);
        try {
          results.add(b.run(s));
        } finally {
          b.close();
        }
        System.out.printf("  %s run %d: %s%n", s, r + 1, Results.format(results.get(results.size() - 1)));
      }
      Map<String, Double> m = Results.median(results);
      System.out.printf("%s median: %s%n", s, Results.format(m));
      Results.emit(s, m);
    }
    System.exit(0);
  }

  private Map<String, Double> run(String scenario) throws Exception {
    return switch (scenario) {
      case "remote-ask-64" -> askThroughput(remote(), 64);
      case "remote-ask-1" -> latency(remote());
      case "remote-tell" -> tellThroughput(remote(), 8192, false);
      case "local-ask-64" -> askThroughput(local(), 64);
      case "local-ask-1" -> latency(local());
      case "local-ask-1-vt" -> onVirtualThread(() -> latency(local()));
      case "local-tell" -> tellThroughput(local(), 8192, true);
      case "idle-heap" -> idleHeap(args.idle());
      case "join" -> join();
      default -> throw new IllegalArgumentException("scenario: " + scenario + " (expected: remote-ask-64, "
          + "remote-ask-1, remote-tell, local-ask-64, local-ask-1, local-ask-1-vt, local-tell, idle-heap, join)");
    };
  }

  // ---- set-ups

  private PekkoNode local() throws Exception {
    PekkoNode n = PekkoNode.start("pod", SHARDS, null);
    nodes.add(n);
    awaitAnswer(n);
    return n;
  }

  private PekkoNode remote() throws Exception {
    PekkoNode client = client();
    startPods(client, 1);
    awaitAnswer(client);
    return client;
  }

  private PekkoNode client() {
    PekkoNode client = PekkoNode.start("client", SHARDS, null);
    nodes.add(client);
    return client;
  }

  private List<ManagedProcess> startPods(PekkoNode seed, int n) {
    List<ManagedProcess> started = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      started.add(startPod(seed));
    }
    for (ManagedProcess p : started) {
      p.awaitAddress(Duration.ofSeconds(60));
    }
    return started;
  }

  private ManagedProcess startPod(PekkoNode seed) {
    String seedAddress = seed.address().host().get() + ":" + seed.address().port().get();
    // The same JVM settings as Atoll's bench pods: a 1 GB heap, default collector and compilers.
    return processes.start(ProcessSpec.builder("pekko-pod-" + processes.processes().size(), PekkoPod.class.getName())
        .heap("1g").quickStart(false).args(seedAddress).build());
  }

  /** Waits until a counter answers (its shard allocated, the pod reachable). */
  private static void awaitAnswer(PekkoNode n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        ref(n, "c-0").ask(PekkoCounter.Get::new, Duration.ofSeconds(2)).toCompletableFuture().get();
        return;
      } catch (Exception e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("no counter answered within 60 s", e);
        }
        TimeUnit.MILLISECONDS.sleep(100); // a retry pause while the cluster forms, not a synchronization
      }
    }
  }

  private static EntityRef<PekkoCounter.Msg> ref(PekkoNode n, String id) {
    return n.sharding().entityRefFor(PekkoCounter.TYPE, id);
  }

  private static List<EntityRef<PekkoCounter.Msg>> refs(PekkoNode n, int count) {
    List<EntityRef<PekkoCounter.Msg>> refs = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      refs.add(ref(n, "c-" + i));
    }
    return refs;
  }

  // ---- measurements

  /** Asks per second with {@code window} in flight over 1000 counters, as Atoll's loop. */
  private Map<String, Double> askThroughput(PekkoNode n, int window) throws Exception {
    List<EntityRef<PekkoCounter.Msg>> refs = refs(n, 1000);
    AtomicLong done = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    Semaphore permits = new Semaphore(window);
    long start = System.nanoTime();
    long measureFrom = start + TimeUnit.SECONDS.toNanos(args.warmup());
    long end = measureFrom + TimeUnit.SECONDS.toNanos(args.seconds());
    long atMeasureStart = -1;
    int i = 0;
    while (true) {
      long now = System.nanoTime();
      if (atMeasureStart < 0 && now >= measureFrom) {
        atMeasureStart = done.get();
      }
      if (now >= end) {
        break;
      }
      permits.acquire();
      refs.get(i).ask(PekkoCounter.Get::new, ASK_TIMEOUT).whenComplete((v, e) -> {
        if (e != null) {
          failed.incrementAndGet();
        }
        done.incrementAndGet();
        permits.release();
      });
      i = i + 1 == refs.size() ? 0 : i + 1;
    }
    long measured = done.get() - atMeasureStart;
    permits.acquire(window);
    Map<String, Double> r = new LinkedHashMap<>();
    r.put("msg/s", measured / (double) args.seconds());
    r.put("failed", (double) failed.get());
    return r;
  }

  /** Handled tells per second with at most {@code window} unconfirmed: see {@link ConfirmedTells}. */
  private Map<String, Double> tellThroughput(PekkoNode n, int window, boolean local) throws Exception {
    List<EntityRef<PekkoCounter.Msg>> refs = refs(n, 1000);
    PekkoCounter.Inc inc = new PekkoCounter.Inc(1);
    return ConfirmedTells.run(i -> refs.get(i).tell(inc), refs.size(), window, args.warmup(), args.seconds(),
        local ? PekkoCounter.HANDLED::sum : null, () -> askHandled(refs.get(0)));
  }

  private static CompletableFuture<Long> askHandled(EntityRef<PekkoCounter.Msg> confirmer) {
    return confirmer.ask(PekkoCounter.Handled::new, ASK_TIMEOUT).thenApply(PekkoCounter.Value::value)
        .toCompletableFuture();
  }

  /** Ask latency with one in flight: p50 and p99 in microseconds. */
  private Map<String, Double> latency(PekkoNode n) throws Exception {
    List<EntityRef<PekkoCounter.Msg>> refs = refs(n, 1000);
    long start = System.nanoTime();
    long measureFrom = start + TimeUnit.SECONDS.toNanos(args.warmup());
    long end = measureFrom + TimeUnit.SECONDS.toNanos(args.seconds());
    long[] samples = new long[1 << 22];
    int count = 0;
    int i = 0;
    while (true) {
      long t0 = System.nanoTime();
      if (t0 >= end || count == samples.length) {
        break;
      }
      refs.get(i).ask(PekkoCounter.Get::new, ASK_TIMEOUT).toCompletableFuture().get(10, TimeUnit.SECONDS);
      long t1 = System.nanoTime();
      if (t0 >= measureFrom) {
        samples[count++] = t1 - t0;
      }
      i = i + 1 == refs.size() ? 0 : i + 1;
    }
    return Results.percentiles(java.util.Arrays.copyOf(samples, count));
  }

  private static Map<String, Double> onVirtualThread(java.util.concurrent.Callable<Map<String, Double>> m)
      throws Exception {
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

  /** Heap per idle counter: bytes retained per counter after {@code count} were activated. */
  private Map<String, Double> idleHeap(int count) throws Exception {
    PekkoNode n = local();
    for (EntityRef<PekkoCounter.Msg> r : refs(n, 1000)) {
      r.ask(PekkoCounter.Get::new, ASK_TIMEOUT).toCompletableFuture().get();
    }
    long before = usedAfterGc();
    long base = PekkoCounter.HANDLED.sum();
    PekkoCounter.Inc inc = new PekkoCounter.Inc(1);
    for (int i = 0; i < count; i++) {
      while (i - (PekkoCounter.HANDLED.sum() - base) >= 4096) {
        Thread.onSpinWait();
      }
      ref(n, "idle-" + i).tell(inc);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (PekkoCounter.HANDLED.sum() - base < count) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("only " + (PekkoCounter.HANDLED.sum() - base) + " of " + count + " handled");
      }
      TimeUnit.MILLISECONDS.sleep(10); // polling the count
    }
    long after = usedAfterGc();
    Map<String, Double> r = new LinkedHashMap<>();
    r.put("bytes/entity", (after - before) / (double) count);
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
   * A third pod joins two (300 shards, 10,000 live counters, asks flowing, 256 in flight): seconds
   * from its membership being up until every pod holds 100 shards, and the asks that failed
   * meanwhile (an ask fails when no answer comes within 30 s, the timeout Atoll's run uses).
   */
  private Map<String, Double> join() throws Exception {
    PekkoNode client = client();
    List<ManagedProcess> pods = new ArrayList<>(startPods(client, 2));
    awaitAnswer(client);
    List<EntityRef<PekkoCounter.Msg>> refs = refs(client, 10_000);
    List<CompletableFuture<PekkoCounter.Value>> warm = new ArrayList<>();
    for (EntityRef<PekkoCounter.Msg> r : refs) {
      warm.add(r.ask(PekkoCounter.Get::new, ASK_TIMEOUT).toCompletableFuture());
    }
    CompletableFuture.allOf(warm.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    AtomicLong failed = new AtomicLong();
    AtomicLong done = new AtomicLong();
    Semaphore permits = new Semaphore(256);
    Thread load = Thread.ofPlatform().start(() -> {
      int i = 0;
      try {
        while (!Thread.currentThread().isInterrupted()) {
          permits.acquire();
          refs.get(i).ask(PekkoCounter.Get::new, ASK_TIMEOUT).whenComplete((v, e) -> {
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
    ManagedProcess third = startPod(client);
    pods.add(third);
    Cluster cluster = Cluster.get(client.system());
    long joined = -1;
    long balanced = -1;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
    long nextReport = 0;
    while (System.nanoTime() < deadline) {
      if (joined < 0 && podsUp(cluster) == 3) {
        joined = System.nanoTime();
      }
      if (joined >= 0) {
        List<Integer> shards = shardsPerRegion(client, pods);
        if (System.nanoTime() > nextReport) {
          System.out.printf("  join: shards per region %s, %,d asks done, %,d failed%n", shards, done.get(), failed.get());
          nextReport = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        }
        if (shards.size() == 3 && shards.stream().allMatch(n -> n == SHARDS / 3)) {
          balanced = System.nanoTime();
          break;
        }
      }
      TimeUnit.MILLISECONDS.sleep(50); // polling the cluster's state
    }
    load.interrupt();
    load.join();
    permits.acquire(256);
    if (balanced < 0) {
      throw new IllegalStateException("never balanced within 180 s");
    }
    Map<String, Double> r = new LinkedHashMap<>();
    r.put("balanced after s", (balanced - joined) / 1e9);
    r.put("failed", (double) failed.get());
    r.put("messages", (double) done.get());
    return r;
  }

  private static int podsUp(Cluster cluster) {
    int up = 0;
    for (org.apache.pekko.cluster.Member m : cluster.state().getMembers()) {
      if (m.status() == MemberStatus.up() && m.hasRole("pod")) {
        up++;
      }
    }
    return up;
  }

  /** The shards each pod's region holds (asked of each region; -1 while one does not answer). */
  private static List<Integer> shardsPerRegion(PekkoNode client, List<ManagedProcess> pods) {
    org.apache.pekko.actor.ActorSystem classic = org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(client.system());
    List<Integer> out = new ArrayList<>();
    for (ManagedProcess p : pods) {
      java.util.Optional<io.atoll.core.PodAddress> a = p.addressIfUp();
      if (a.isEmpty()) {
        out.add(-1);
        continue;
      }
      String path = "pekko://" + PekkoNode.SYSTEM + "@" + a.get().host() + ":" + a.get().port() + "/system/sharding/" + PekkoCounter.TYPE.name();
      try {
        Object state = org.apache.pekko.pattern.Patterns.ask(classic.actorSelection(path),
            ShardRegion.getShardRegionStateInstance(), Duration.ofSeconds(5)).toCompletableFuture().get();
        out.add(((ShardRegion.CurrentShardRegionState) state).getShards().size());
      } catch (Exception e) {
        out.add(-1);
      }
    }
    return out;
  }

  private void close() {
    for (PekkoNode n : nodes) {
      n.close();
    }
    processes.close(); // SIGTERM, then SIGKILL for what still runs after 10 s
  }
}

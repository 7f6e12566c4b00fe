package io.atoll.bench.cluster;

import io.atoll.bench.sidebyside.BenchArgs;
import io.atoll.bench.sidebyside.ConfirmedTells;
import io.atoll.bench.sidebyside.Results;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.ManagerObserver;
import io.atoll.manager.ManagerSecurity;
import io.atoll.testkit.tls.DevCa;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.atoll.core.ClusterConfig;
import io.atoll.core.ShardHasher;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.testkit.ClusterChecks;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.atoll.testkit.process.ProcessSpec;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The cluster load generator: the figures of docs/benchmarks.md that need real pods. A shard
 * manager runs in this JVM; "remote" scenarios put the counters in a second JVM ({@link BenchPod})
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
 * first-message ("-vt": the caller is a virtual thread). The tell scenarios ignore each tell's
 * future and confirm the handled count in batches, as the Pekko peer must; "-acked" waits for
 * every tell's acknowledgement instead (8192 in flight). A remote scenario with "-tls" appended
 * runs every connection as mutual TLS (certificates made for the run); name both, alternating, to
 * compare them in one run. Public for the command line; not API.
 */
public final class ClusterBench {

  private final int seconds;
  private final int warmup;
  private final int idle;
  private final Path dir;
  private final ProcessCluster processes;
  private final List<Sharding> shardings = new ArrayList<>();
  private ShardManager manager;
  private Path certs;

  private ClusterBench(int seconds, int warmup, int idle) throws IOException {
    this.seconds = seconds;
    this.warmup = warmup;
    this.idle = idle;
    this.dir = Files.createTempDirectory("atoll-bench");
    this.processes = new ProcessCluster(dir);
  }

  /** Runs the scenarios named on the command line (all by default). */
  public static void main(String[] args) throws Exception {
    BenchArgs a = BenchArgs.parse(args, List.of("remote-ask-64", "remote-ask-1", "remote-ask-1-vt", "remote-tell",
        "local-ask-64", "local-ask-1", "local-ask-1-vt", "local-tell", "idle-heap", "join", "first-message"));
    System.out.printf("%s, %d cores, JDK %s; %d run(s) of %d s after %d s warm-up%n",
        System.getProperty("os.name"), Runtime.getRuntime().availableProcessors(), Runtime.version(), a.runs(),
        a.seconds(), a.warmup());
    for (String s : a.scenarios()) {
      List<Map<String, Double>> results = new ArrayList<>();
      for (int r = 0; r < a.runs(); r++) {
        ClusterBench b = new ClusterBench(a.seconds(), a.warmup(), a.idle());
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
    if (scenario.startsWith("remote-") && scenario.endsWith("-tls")) {
      certs = dir.resolve("certs");
      DevCa ca = DevCa.create("bench", Duration.ofDays(1));
      ca.writeCa(certs);
      ca.issue(Role.MANAGER, "manager", List.of()).write(certs, "manager");
      ca.issue(Role.POD, "pod", List.of()).write(certs, "pod");
      ca.issue(Role.POD, "client", List.of()).write(certs, "client");
      scenario = scenario.substring(0, scenario.length() - "-tls".length());
    }
    return switch (scenario) {
      case "remote-ask-64" -> throughput(remote(1), 64, true);
      case "remote-ask-1" -> latency(remote(1));
      case "remote-tell" -> confirmedTells(remote(1), false);
      case "remote-tell-acked" -> throughput(remote(1), 8192, false);
      case "local-ask-64" -> throughput(local(), 64, true);
      case "local-ask-1" -> latency(local());
      case "local-ask-1-vt" -> onVirtualThread(() -> latency(local()));
      case "remote-ask-1-vt" -> onVirtualThread(() -> latency(remote(1)));
      case "local-tell" -> confirmedTells(local(), true);
      case "local-tell-acked" -> throughput(local(), 8192, false);
      case "idle-heap" -> idleHeap(idle);
      case "join" -> join();
      case "first-message" -> firstMessage();
      default -> throw new IllegalArgumentException("scenario: " + scenario
          + " (expected: remote-ask-64, remote-ask-1, remote-tell, local-ask-64, local-ask-1, local-tell, idle-heap,"
          + " join, first-message)");
    };
  }

  // ---- set-ups

  private void startManager(int shards) {
    ManagerSettings s = ManagerSettings.defaults().withNumberOfShards(shards)
        .withRebalanceIntervals(Duration.ofSeconds(20), Duration.ofSeconds(1));
    manager = certs == null
        ? ShardManager.start(s, FileAssignmentStore.open(dir.resolve("manager")), "127.0.0.1", 0)
        : ShardManager.start(s, FileAssignmentStore.open(dir.resolve("manager")), PodHealth.LEASE_ONLY, "127.0.0.1", 0,
            io.atoll.core.Ticker.SYSTEM, new java.util.Random(), ManagerObserver.NONE,
            new ManagerSecurity(security("manager"), ConfigSigner.generate()));
  }

  private WireSecurity security(String name) {
    return WireSecurity.tls(certs.resolve("ca.pem"), certs.resolve(name + ".pem"), certs.resolve(name + ".key"));
  }

  private void startPods(int n) {
    List<ManagedProcess> started = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      started.add(startPod());
    }
    for (ManagedProcess p : started) {
      p.awaitAddress(Duration.ofSeconds(60));
    }
  }

  private ManagedProcess startPod() {
    // A pod measured at full speed: a 1 GB heap and the JVM's default collector and compilers.
    ProcessSpec.Builder spec = ProcessSpec.builder("pod-" + processes.processes().size(), BenchPod.class.getName())
        .heap("1g").quickStart(false).args(certs == null ? List.of(manager.address().toString())
            : List.of(manager.address().toString(), certs.resolve("ca.pem").toString(),
                certs.resolve("pod.pem").toString(), certs.resolve("pod.key").toString()));
    String extra = System.getProperty("bench.podJvmArgs", "");
    if (!extra.isBlank()) {
      spec.jvmOptions(List.of(extra.trim().split("\\s+"))); // e.g. a flight recording of the pod
    }
    return processes.start(spec.build());
  }

  private Sharding remote(int pods) throws Exception {
    startManager(300);
    startPods(pods);
    Sharding.Builder b = Sharding.builder();
    if (certs != null) {
      b.security(security("client"));
    }
    Sharding client = b.manager(manager.address().toString()).clientOnly()
        .askTimeout(Duration.ofSeconds(30)).sendTimeout(Duration.ofSeconds(30)).start();
    shardings.add(client);
    awaitOwned(client, pods);
    return client;
  }

  private Sharding local() throws Exception {
    startManager(300);
    Sharding pod = Sharding.builder().manager(manager.address().toString())
        .register(BenchCounter.TYPE, ctx -> new BenchCounter())
        .askTimeout(Duration.ofSeconds(30)).sendTimeout(Duration.ofSeconds(30)).start();
    shardings.add(pod);
    awaitOwned(pod, 1);
    return pod;
  }

  private static void awaitOwned(Sharding s, int pods) {
    ClusterChecks.awaitEveryShardOwned(s, pods, Duration.ofSeconds(30));
  }

  private static List<EntityRef<BenchCounter.Msg>> refs(Sharding s, int n) {
    List<EntityRef<BenchCounter.Msg>> refs = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      refs.add(s.entity(BenchCounter.TYPE, "c-" + i));
    }
    return refs;
  }

  // ---- measurements

  /** Messages per second with {@code window} in flight, asks or tells, over 1000 counters. */
  private Map<String, Double> throughput(Sharding s, int window, boolean ask) throws Exception {
    List<EntityRef<BenchCounter.Msg>> refs = refs(s, 1000);
    AtomicLong done = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    Semaphore permits = new Semaphore(window);
    BenchCounter.Inc inc = new BenchCounter.Inc(1);
    Function<Integer, CompletableFuture<?>> send = ask
        ? i -> refs.get(i).<Long>ask(BenchCounter.Get::new).toCompletableFuture()
        : i -> refs.get(i).tell(inc).toCompletableFuture();
    long start = System.nanoTime();
    long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
    long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
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
      send.apply(i).whenComplete((v, e) -> {
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
    r.put("msg/s", measured / (double) seconds);
    r.put("failed", (double) failed.get());
    return r;
  }

  /**
   * Handled tells per second, the futures ignored and the handled count confirmed in batches,
   * 8192 unconfirmed at most: the shape of the Pekko peer's tell load ({@link ConfirmedTells}).
   */
  private Map<String, Double> confirmedTells(Sharding s, boolean local) throws Exception {
    List<EntityRef<BenchCounter.Msg>> refs = refs(s, 1000);
    BenchCounter.Inc inc = new BenchCounter.Inc(1);
    EntityRef<BenchCounter.Msg> counter = refs.get(0);
    return ConfirmedTells.run(i -> refs.get(i).tell(inc), refs.size(), 8192, warmup, seconds,
        local ? BenchCounter.HANDLED::sum : null,
        () -> counter.<Long>ask(BenchCounter.Handled::new).toCompletableFuture());
  }

  /** Runs a measurement on a virtual thread, as a caller in a virtual-thread service would. */
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

  /** Ask latency with one in flight: p50 and p99 in microseconds. */
  private Map<String, Double> latency(Sharding s) throws Exception {
    List<EntityRef<BenchCounter.Msg>> refs = refs(s, 1000);
    long start = System.nanoTime();
    long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
    long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
    long[] samples = new long[1 << 22];
    int n = 0;
    int i = 0;
    while (true) {
      long t0 = System.nanoTime();
      if (t0 >= end || n == samples.length) {
        break;
      }
      refs.get(i).<Long>ask(BenchCounter.Get::new).toCompletableFuture().get(10, TimeUnit.SECONDS);
      long t1 = System.nanoTime();
      if (t0 >= measureFrom) {
        samples[n++] = t1 - t0;
      }
      i = i + 1 == refs.size() ? 0 : i + 1;
    }
    return Results.percentiles(Arrays.copyOf(samples, n));
  }

  /** Heap per idle entity: bytes retained per counter after {@code n} were activated and went idle. */
  private Map<String, Double> idleHeap(int n) throws Exception {
    Sharding pod = local();
    List<EntityRef<BenchCounter.Msg>> warm = refs(pod, 1000);
    for (EntityRef<BenchCounter.Msg> r : warm) {
      r.tell(new BenchCounter.Inc(1)).toCompletableFuture().get();
    }
    long before = usedAfterGc();
    List<CompletableFuture<Void>> all = new ArrayList<>();
    Semaphore permits = new Semaphore(4096);
    for (int i = 0; i < n; i++) {
      permits.acquire();
      all.add(pod.entity(BenchCounter.TYPE, "idle-" + i).tell(new BenchCounter.Inc(1)).toCompletableFuture()
          .whenComplete((v, e) -> permits.release()));
    }
    CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    all = null;
    long after = usedAfterGc();
    if (pod.activeEntities() < n) {
      throw new IllegalStateException("only " + pod.activeEntities() + " entities live (expected: " + n + ")");
    }
    Map<String, Double> r = new LinkedHashMap<>();
    r.put("bytes/entity", (after - before) / (double) n);
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
   * A third pod joins two (300 shards, 10,000 live counters, tells flowing): seconds from its
   * registration until every pod holds 100 shards, and the messages that failed meanwhile.
   */
  private Map<String, Double> join() throws Exception {
    startManager(300);
    startPods(2);
    Sharding client = Sharding.builder().manager(manager.address().toString()).clientOnly()
        .askTimeout(Duration.ofSeconds(30)).sendTimeout(Duration.ofSeconds(30)).start();
    shardings.add(client);
    awaitOwned(client, 2);
    List<EntityRef<BenchCounter.Msg>> refs = refs(client, 10_000);
    for (EntityRef<BenchCounter.Msg> r : refs) {
      r.tell(new BenchCounter.Inc(1)).toCompletableFuture().get();
    }
    AtomicLong failed = new AtomicLong();
    AtomicLong done = new AtomicLong();
    Semaphore permits = new Semaphore(256);
    Thread load = Thread.ofPlatform().start(() -> {
      int i = 0;
      try {
        while (!Thread.currentThread().isInterrupted()) {
          permits.acquire();
          refs.get(i).tell(new BenchCounter.Inc(1)).whenComplete((v, e) -> {
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
    startPod();
    long joined = -1;
    long balanced = -1;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (System.nanoTime() < deadline) {
      ClusterConfig c = manager.config();
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
    permits.acquire(256);
    if (balanced < 0) {
      throw new IllegalStateException("never balanced");
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
    ManagerSettings s = ManagerSettings.defaults().withNumberOfShards(1000);
    manager = ShardManager.start(s, FileAssignmentStore.open(dir.resolve("manager")), "127.0.0.1", 0);
    startPods(1);
    Sharding client = Sharding.builder().manager(manager.address().toString()).clientOnly().start();
    shardings.add(client);
    awaitOwned(client, 1);
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

  // ---- plumbing

  private void close() {
    for (Sharding s : shardings) {
      s.close();
    }
    processes.close(); // SIGTERM, then SIGKILL for what still runs after 10 s
    if (manager != null) {
      manager.close();
    }
  }
}

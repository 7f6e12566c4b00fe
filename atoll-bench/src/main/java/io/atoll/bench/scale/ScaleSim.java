package io.atoll.bench.scale;

import io.atoll.bench.sidebyside.Results;
import io.atoll.bench.store.MeteredStore;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Ticker;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.testkit.ClusterChecks;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The scale simulator: a real shard manager (in this JVM, on the file store, over gRPC on
 * loopback) and {@code pods} simulated pods ({@link SimPod}), through three scenarios in a row:
 * <ol>
 *   <li>{@code cold-start}: every pod registers at once; until the shards are balanced and every pod
 *       holds that config;
 *   <li>{@code kill-10pct}: a tenth of the pods die at once; until every shard is owned by a live pod,
 *       then balanced;
 *   <li>{@code join}: {@code joiners} new pods register at once; until balanced.
 * </ol>
 * Each reports (as {@code RESULT} lines): its times, the manager's rounds (how many, shards moved,
 * the loop's CPU in the largest round), the store's saves (how many, bytes, the largest), the config's
 * size, how long each config took to reach every pod (median and largest), and the config bytes each
 * pod received per config change.
 *
 * <pre>
 * java -cp atoll-bench/target/benchmarks.jar io.atoll.bench.scale.ScaleSim --pods 1000 --shards 65536
 * </pre>
 */
public final class ScaleSim {

  /**
   * What to simulate.
   *
   * @param pods pods at the start
   * @param shards shards (at most the manager's 65,536)
   * @param joiners pods that join in the last scenario
   * @param lease the pods' lease
   * @param limits the manager's moves per round
   * @param timeout how long one scenario may take
   */
  public record Options(int pods, int shards, int joiners, Duration lease, RebalanceLimits limits, Duration timeout) {}

  private final Options o;
  private final PrintStream out;

  public ScaleSim(Options o, PrintStream out) {
    this.o = o;
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    int pods = 1000;
    int shards = 65_536;
    int joiners = 100;
    double fraction = 0.1;
    int maxMoves = Integer.MAX_VALUE;
    long leaseMs = 10_000;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--pods" -> pods = Integer.parseInt(args[i + 1]);
        case "--shards" -> shards = Integer.parseInt(args[i + 1]);
        case "--joiners" -> joiners = Integer.parseInt(args[i + 1]);
        case "--max-moves" -> maxMoves = Integer.parseInt(args[i + 1]);
        case "--max-moves-fraction" -> fraction = Double.parseDouble(args[i + 1]);
        case "--lease-ms" -> leaseMs = Long.parseLong(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i] + " (expected: --pods, --shards,"
            + " --joiners, --max-moves, --max-moves-fraction, --lease-ms)");
      }
    }
    Map<String, Map<String, Double>> results = new ScaleSim(new Options(pods, shards, joiners,
        Duration.ofMillis(leaseMs), new RebalanceLimits(maxMoves, fraction), Duration.ofMinutes(10)), System.out).run();
    results.forEach(Results::emit);
  }

  /** Runs the three scenarios; their figures by scenario name. */
  public Map<String, Map<String, Double>> run() throws Exception {
    Path dir = Files.createTempDirectory("atoll-scale-sim");
    MeteredStore store = new MeteredStore(FileAssignmentStore.open(dir));
    ManagerSettings defaults = ManagerSettings.defaults();
    ManagerSettings settings = defaults.withNumberOfShards(o.shards())
        .withLease(o.lease(), Duration.ofMillis(Math.max(500, o.lease().toMillis() / 5)))
        .withRebalanceIntervals(Duration.ofSeconds(1), Duration.ofSeconds(1))
        .withAllocation(o.limits(), defaults.strategy());
    Map<String, Map<String, Double>> results = new LinkedHashMap<>();
    Random random = new Random(1);
    SimFleet fleet = null;
    ShardManager manager = null;
    List<SimPod> pods = new ArrayList<>();
    ExecutorService registrars = Executors.newFixedThreadPool(16);
    try {
      // The fleet needs the manager's address, the manager the fleet's observer: the observer first.
      SimFleet.Rounds rounds = new SimFleet.Rounds();
      manager = ShardManager.start(settings, store, PodHealth.LEASE_ONLY, "127.0.0.1", 0, Ticker.SYSTEM,
          new Random(2), rounds);
      fleet = new SimFleet(manager.address(), o.lease(), o.pods() + o.joiners(), rounds);
      out.printf("scale simulation: a shard manager with %,d shards (moves per round: %s), %,d pods, then %,d"
          + " killed, then %,d joining; lease %d ms%n", o.shards(), o.limits(), o.pods(), o.pods() / 10, o.joiners(),
          o.lease().toMillis());

      // 1. Cold start.
      Mark m = mark(fleet, store, pods);
      List<SimPod> starting = newPods(fleet, random, o.pods());
      long t0 = System.nanoTime();
      registerAll(registrars, starting);
      double registered = seconds(t0);
      pods.addAll(starting);
      ShardManager mg = manager;
      double balanced = await(t0, () -> ClusterChecks.balanced(mg.config(), o.pods()));
      Map<String, Double> cold = figures(fleet, store, m, pods, t0, mg.config());
      cold.put("registered_s", registered);
      cold.put("balanced_s", balanced);
      results.put("cold-start", cold);
      say("cold-start", cold);

      // 2. A tenth of the pods die at once.
      m = mark(fleet, store, pods);
      int dying = o.pods() / 10;
      List<SimPod> victims = new ArrayList<>(pods.subList(0, dying));
      t0 = System.nanoTime();
      victims.forEach(SimPod::kill);
      pods.removeAll(victims);
      int live = pods.size();
      double servedAgain = await(t0, () -> ClusterChecks.everyShardOwnedByALivePod(mg.config(), live));
      double rebalanced = await(t0, () -> ClusterChecks.balanced(mg.config(), live));
      Map<String, Double> kill = figures(fleet, store, m, pods, t0, mg.config());
      kill.put("served_again_s", servedAgain);
      kill.put("balanced_s", rebalanced);
      results.put("kill-10pct", kill);
      say("kill-10pct", kill);

      // 3. Pods join at once.
      m = mark(fleet, store, pods);
      List<SimPod> joining = newPods(fleet, random, o.joiners());
      t0 = System.nanoTime();
      registerAll(registrars, joining);
      pods.addAll(joining);
      int all = pods.size();
      double joinBalanced = await(t0, () -> ClusterChecks.balanced(mg.config(), all));
      Map<String, Double> join = figures(fleet, store, m, pods, t0, mg.config());
      join.put("balanced_s", joinBalanced);
      join.put("declared_dead", (double) fleet.unknownPods());
      results.put("join", join);
      say("join", join);
      return results;
    } finally {
      registrars.shutdownNow();
      for (SimPod p : pods) {
        p.kill();
      }
      if (manager != null) {
        manager.close();
      }
      if (fleet != null) {
        fleet.close();
      }
    }
  }

  /** Where the counters stood when a scenario began. */
  private record Mark(long epoch, int rounds, long[] store, Map<SimPod, Long> podBytes) {}

  /** {@code n} new simulated pods of {@code fleet}, not registered yet. */
  private static List<SimPod> newPods(SimFleet fleet, Random random, int n) {
    List<SimPod> pods = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      pods.add(new SimPod(fleet, random));
    }
    return pods;
  }

  private static Mark mark(SimFleet fleet, MeteredStore store, List<SimPod> pods) {
    Map<SimPod, Long> bytes = new java.util.HashMap<>();
    for (SimPod p : pods) {
      bytes.put(p, p.configBytes());
    }
    return new Mark(fleet.lastInstalled(), fleet.rounds().finished.size(), store.totals(), bytes);
  }

  private static void registerAll(ExecutorService registrars, List<SimPod> pods) throws Exception {
    List<Future<?>> done = new ArrayList<>();
    for (SimPod p : pods) {
      done.add(registrars.submit(p::register));
    }
    for (Future<?> f : done) {
      f.get(2, TimeUnit.MINUTES);
    }
  }

  /** Waits until {@code condition}, up to the scenario timeout; seconds since {@code t0}. */
  private double await(long t0, BooleanSupplier condition) {
    long deadline = t0 + o.timeout().toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("not reached within " + o.timeout().toSeconds() + " s");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // polling the manager's config
    }
    return seconds(t0);
  }

  private static double seconds(long t0) {
    return (System.nanoTime() - t0) / 1e9;
  }

  /** The figures of a scenario that began at {@code m} and {@code t0} and ended with {@code last}. */
  private Map<String, Double> figures(SimFleet fleet, MeteredStore store, Mark m, List<SimPod> pods, long t0,
      ClusterConfig last) {
    long lastEpoch = last.epoch();
    double allHold = await(t0, () -> pods.stream().allMatch(p -> p.epoch() >= lastEpoch));
    Map<String, Double> f = new LinkedHashMap<>();
    f.put("every_pod_holds_it_s", allHold);
    List<long[]> rounds;
    synchronized (fleet.rounds().finished) {
      rounds = new ArrayList<>(fleet.rounds().finished.subList(m.rounds(), fleet.rounds().finished.size()));
    }
    f.put("rounds", (double) rounds.size());
    f.put("moved", (double) rounds.stream().mapToLong(r -> r[0]).sum());
    long[] largest = rounds.stream().max(Comparator.comparingLong(r -> r[0])).orElse(new long[] {0, 0, 0});
    f.put("largest_round_moved", (double) largest[0]);
    f.put("largest_round_loop_cpu_ms", largest[2] / 1e6);
    f.put("largest_round_wall_ms", largest[1] / 1e6);
    f.put("max_round_loop_cpu_ms", rounds.stream().mapToLong(r -> r[2]).max().orElse(0) / 1e6);
    long[] s = store.totals();
    f.put("saves", (double) (s[0] - m.store()[0]));
    f.put("saved_MB", (s[1] - m.store()[1]) / 1e6);
    f.put("save_ms_total", (s[2] - m.store()[2]) / 1e6);
    f.put("config_bytes", (double) fleet.sizeOf(lastEpoch));
    long changes = Math.max(1, lastEpoch - Math.max(0, m.epoch()));
    f.put("config_changes", (double) changes);
    List<Double> spread = fleet.spreadMillis(m.epoch() + 1, lastEpoch, pods.size());
    spread.sort(null);
    f.put("reach_every_pod_p50_ms", spread.isEmpty() ? -1 : spread.get(spread.size() / 2));
    f.put("reach_every_pod_max_ms", spread.isEmpty() ? -1 : spread.get(spread.size() - 1));
    long bytes = 0;
    for (SimPod p : pods) {
      bytes += p.configBytes() - m.podBytes().getOrDefault(p, 0L);
    }
    f.put("bytes_per_pod_per_change", (double) bytes / pods.size() / changes);
    return f;
  }

  private void say(String scenario, Map<String, Double> f) {
    StringBuilder b = new StringBuilder(scenario).append(':');
    f.forEach((k, v) -> b.append(' ').append(k).append('=').append(v == Math.rint(v) ? String.format("%.0f", v)
        : String.format("%.3f", v)));
    out.println(b);
    out.flush();
  }
}

package io.atoll.server.chaos;

import io.atoll.core.PodAddress;
import io.atoll.server.chaos.KvChaosCluster.Seat;
import io.atoll.testkit.Await;
import io.atoll.testkit.history.Linearizability;
import io.atoll.testkit.history.Linearizability.Verdict;
import io.atoll.testkit.history.Linearizability.Violation;
import io.atoll.testkit.history.Operation;
import io.atoll.testkit.history.RedisKey;
import io.atoll.testkit.history.RedisKey.Command;
import io.atoll.testkit.net.TcpRelay;
import io.atoll.testkit.process.ProcessCluster;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * {@code atoll chaos --kv}: a managed Atoll KV cluster (a shard manager with one replica per
 * primary, four {@code atoll kv --manager} nodes) under a verifying Lettuce cluster client while
 * faults are injected one at a time, in an order drawn from a seed, each followed by recovery. At the
 * end every key is read once more and each key's recorded history is checked for linearizability
 * ({@link Linearizability}, against {@link RedisKey}): an acknowledged write lost, a stale read, a
 * read of a value never written, an increment counted twice, all show as a history no order of the
 * operations explains.
 *
 * <p>The client runs at most once: Lettuce's auto-reconnect, which sends again the commands a broken
 * connection left unanswered, is off, so that one operation takes effect at most once, as the check
 * assumes. A write without an answer may still take effect, later or never; the check allows both.
 */
public final class KvChaosRun {

  /**
   * What to run.
   *
   * @param duration no fault starts after this much load
   * @param seed the seed of the fault order, the victims and the fault lengths
   * @param keys keys the load spreads over (half registers, half counters)
   * @param rate operations per second
   * @param clients client threads
   * @param lease the nodes' lease
   * @param margin the manager's lease margin
   * @param recovery how long the load runs undisturbed after a fault has recovered
   * @param recoveryTimeout how long to wait for a fault to recover before going on
   * @param kinds the fault kinds to draw from
   * @param count no fault starts after this many (0: no limit but the duration)
   * @param dir where logs and data go
   */
  public record Options(Duration duration, long seed, int keys, int rate, int clients, Duration lease,
      Duration margin, Duration recovery, Duration recoveryTimeout, List<KvFault> kinds, int count, Path dir) {}

  private static final int NODES = 4;
  private static final long CHECK_STEPS = 50_000_000L;

  private final Options o;
  private final PrintStream out;
  private final long start = System.nanoTime();
  private int harnessErrors;

  public KvChaosRun(Options options, PrintStream out) {
    this.o = options;
    this.out = out;
  }

  private void say(String what) {
    out.printf("[%6.1fs] %s%n", (System.nanoTime() - start) / 1e9, what);
    out.flush();
  }

  /** Runs; returns 0 if every key's history is linearizable and every key could be read at the end, else 1. */
  public int run() throws Exception {
    Files.createDirectories(o.dir());
    out.println("atoll chaos --kv --seed " + o.seed() + ": a shard manager with one replica per primary and "
        + NODES + " Atoll KV nodes on 127.0.0.1, " + o.rate() + " op/s over " + o.keys() + " keys, faults one at a"
        + " time for " + o.duration().toSeconds() + " s" + (o.count() > 0 ? " or " + o.count() + " faults" : "")
        + ";");
    out.println("            logs and data in " + o.dir());
    try (ProcessCluster processes = new ProcessCluster(o.dir(), Duration.ofSeconds(10));
        KvChaosCluster cluster = new KvChaosCluster(processes, o.dir(), o.lease(), o.margin())) {
      return processes.withShutdownHook(() -> run(cluster));
    }
  }

  private int run(KvChaosCluster cluster) throws Exception {
    Random random = new Random(o.seed());
    PodAddress manager = cluster.startManager();
    say("shard manager up on " + manager + " (lease " + o.lease().toMillis() + " ms, margin " + o.margin().toMillis()
        + " ms, one replica per primary)");
    for (int i = 1; i <= NODES; i++) {
      cluster.addSeat("n" + i);
    }
    for (Seat s : cluster.seats()) {
      cluster.awaitRegistered(s);
    }
    Await.until("two nodes owning every slot between them, each with a replica online", Duration.ofSeconds(120),
        () -> cluster.whole() && cluster.seatsWhere(true).size() == NODES / 2);
    say(NODES + " nodes up: " + cluster.seatsWhere(true) + " own the slots, " + cluster.seatsWhere(false)
        + " replicate them");
    RedisClusterClient client = RedisClusterClient.create(cluster.seeds());
    client.setOptions(ClusterClientOptions.builder().autoReconnect(false).maxRedirects(10)
        .validateClusterNodeMembership(false)
        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().enablePeriodicRefresh(Duration.ofMillis(500))
            .enableAllAdaptiveRefreshTriggers().adaptiveRefreshTriggersTimeout(Duration.ofMillis(200)).build())
        .build());
    KvChaosLoad load = null;
    try {
      load = new KvChaosLoad(() -> {
        StatefulRedisClusterConnection<String, String> c = client.connect();
        c.setTimeout(Duration.ofSeconds(2));
        return c;
      }, o.keys(), o.clients(), o.rate(), o.seed()).start();
      KvChaosLoad running = load;
      long t0 = System.nanoTime();
      Await.until("a first answer", Duration.ofSeconds(30), () -> running.answered() > 0);
      say("load started: first answer after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
      FaultStats<KvFault> stats = new FaultStats<>(KvFault.class, KvFault::label);
      FaultPlan<KvFault> plan = new FaultPlan<>(o.kinds(), random);
      long loadStart = System.nanoTime();
      int n = 0;
      load.takeLongestOutageMillis();
      long answered = load.answered();
      long unanswered = load.unanswered();
      long renewals = load.renewals();
      while (System.nanoTime() - loadStart < o.duration().toNanos() && (o.count() == 0 || n < o.count())) {
        KvFault kind = plan.next();
        String done;
        try {
          done = inject(kind, cluster, random, n + 1);
        } catch (RuntimeException e) {
          done = "the harness failed: " + e; // counted as a fault that did not recover
          harnessErrors++;
        }
        if (done == null) {
          TimeUnit.SECONDS.sleep(1); // no victim in that role now: not injected; the next kind after a pause
          continue;
        }
        say("#" + (++n) + " " + kind.label() + ": " + done);
        long recovery = recover(cluster);
        say(recovery >= 0 ? "  recovered in " + recovery + " ms: " + cluster.seatsWhere(true) + " own the slots"
            : "  NOT recovered within " + o.recoveryTimeout().toSeconds() + " s");
        TimeUnit.MILLISECONDS.sleep(o.recovery().toMillis()); // undisturbed load before the next fault
        long outage = load.takeLongestOutageMillis();
        stats.add(kind, outage, recovery);
        say(String.format("  longest a key went unanswered %d ms | answered %,d (+%,d) | unanswered %,d (+%,d)",
            outage, load.answered(), load.answered() - answered, load.unanswered(), load.unanswered() - unanswered)
            + (load.unanswered() > unanswered ? " " + load.takeCauses() : "")
            + (load.renewals() > renewals ? " | client connection replaced " + (load.renewals() - renewals) + "x" : ""));
        answered = load.answered();
        unanswered = load.unanswered();
        renewals = load.renewals();
      }
      say("faults over; load stopping");
      boolean stopped = load.stop();
      if (!stopped) {
        say("a client thread is still waiting after 30 s: its operation is not in the history");
      }
      long recovery = recover(cluster);
      say(recovery >= 0 ? "cluster whole" : "cluster NOT whole within " + o.recoveryTimeout().toSeconds() + " s");
      List<String> unread = load.readAll(System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
      stats.print(out);
      boolean ok = check(load.history(), unread, stats.unrecovered() + (recovery < 0 ? 1 : 0)) && stopped
          && harnessErrors == 0;
      if (harnessErrors > 0) {
        out.println("faults the harness failed to inject or undo: " + harnessErrors + " (see above)");
      }
      out.println("seed " + o.seed() + ", " + stats.total() + " faults" + (stats.unrecovered() > 0
          ? ", " + stats.unrecovered() + " of them did not recover within " + o.recoveryTimeout().toSeconds() + " s"
          : "") + " in " + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - loadStart) + " s");
      return ok ? 0 : 1;
    } finally {
      if (load != null) {
        load.stop();
        load.close();
      }
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
  }

  /** Injects one fault and waits out its length; what was done, or null if it had no victim. */
  private String inject(KvFault kind, KvChaosCluster cluster, Random random, int n) throws InterruptedException {
    long lease = o.lease().toMillis();
    switch (kind) {
      case KILL_PRIMARY, KILL_REPLICA -> {
        List<Seat> candidates = cluster.seatsWhere(kind == KvFault.KILL_PRIMARY);
        if (candidates.isEmpty()) {
          return null;
        }
        Seat s = candidates.get(random.nextInt(candidates.size()));
        long down = (long) (random.nextDouble() * lease * (kind == KvFault.KILL_PRIMARY ? 2 : 1));
        s.process.kill();
        s.process.awaitExit(Duration.ofSeconds(30));
        TimeUnit.MILLISECONDS.sleep(down); // the fault's length: how long the node stays down
        cluster.start(s);
        cluster.awaitRegistered(s);
        return "killed " + s + " (kill -9), started again on its data after " + down + " ms";
      }
      case PAUSE_NODE -> {
        List<Seat> seats = cluster.seats();
        Seat s = seats.get(random.nextInt(seats.size()));
        long pause = lease + o.margin().toMillis() + lease / 6 + (long) (random.nextDouble() * lease * 2 / 3);
        s.process.pause();
        TimeUnit.MILLISECONDS.sleep(pause); // the fault's length
        s.process.resume();
        return "froze " + s + " (SIGSTOP) for " + pause + " ms";
      }
      case KILL_MANAGER -> {
        long down = (long) (random.nextDouble() * lease);
        cluster.killManager();
        TimeUnit.MILLISECONDS.sleep(down); // the fault's length
        cluster.startManager();
        return "killed the manager (kill -9), started again on its port and data after " + down + " ms";
      }
      case DROP_NODE_MANAGER -> {
        List<Seat> seats = cluster.seats();
        Seat s = seats.get(random.nextInt(seats.size()));
        TcpRelay.Mode mode = random.nextBoolean() ? TcpRelay.Mode.DROP : TcpRelay.Mode.STALL;
        long length = lease / 2 + (long) (random.nextDouble() * (lease + o.margin().toMillis()));
        s.toManager.mode(mode);
        TimeUnit.MILLISECONDS.sleep(length); // the fault's length
        s.toManager.release();
        return (mode == TcpRelay.Mode.DROP ? "black-holed" : "stalled") + " " + s + "'s connections to the manager"
            + " for " + length + " ms";
      }
      case JOIN_LEAVE -> {
        Seat s;
        try {
          s = cluster.addSeat("j" + n);
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException("no free port for a fifth node", e);
        }
        cluster.awaitRegistered(s);
        boolean placed = true;
        try {
          Await.until(s + " given slots or a primary", Duration.ofSeconds(30), () -> {
            KvChaosCluster.NodeState st = cluster.state(s);
            return st.owned() > 0 || st.replica();
          });
        } catch (Await.ConditionTimeoutException e) {
          placed = false;
        }
        KvChaosCluster.NodeState st = cluster.state(s);
        s.process.terminate();
        boolean left = s.process.awaitExit(Duration.ofSeconds(150)).isPresent();
        if (!left) {
          s.process.killWithDescendants();
          s.process.awaitExit(Duration.ofSeconds(30));
        }
        cluster.removeSeat(s);
        if (!left) {
          harnessErrors++;
        }
        return s + " joined" + (placed ? (st.replica() ? " as a replica" : " and took " + st.owned() + " slots")
            : " (not placed within 30 s)") + (left ? ", then left gracefully (SIGTERM)"
            : ", then got SIGTERM and had not left after 150 s: killed (counted as a harness failure)");
      }
      default -> throw new IllegalStateException(kind.label());
    }
  }

  /** Waits until the cluster is whole again; how long, or -1. */
  private long recover(KvChaosCluster cluster) {
    long t0 = System.nanoTime();
    try {
      Await.until("every slot owned by a live node with a replica online", o.recoveryTimeout(), Duration.ofMillis(250),
          () -> {
        List<String> started = cluster.restartExited();
        if (!started.isEmpty()) {
          say("  exited, started again: " + String.join(", ", started));
        }
        return cluster.whole();
      });
      return (System.nanoTime() - t0) / 1_000_000;
    } catch (Await.ConditionTimeoutException e) {
      return -1;
    } catch (RuntimeException e) {
      say("  the harness failed while waiting for recovery: " + e);
      harnessErrors++;
      return -1;
    }
  }

  /** Checks every key's history; prints the verdict; whether all is well. */
  private boolean check(Map<String, List<Operation<Command, String>>> history, List<String> unread,
      int unrecovered) {
    long ops = 0;
    long pending = 0;
    int violations = 0;
    List<String> undecided = new ArrayList<>();
    long t0 = System.nanoTime();
    out.println();
    out.println("== linearizability, per key ==");
    for (Map.Entry<String, List<Operation<Command, String>>> e : history.entrySet()) {
      List<Operation<Command, String>> h = e.getValue();
      ops += h.size();
      pending += h.stream().filter(Operation::pending).count();
      Verdict<Command, String> v = Linearizability.check(new RedisKey(), RedisKey.prune(h), CHECK_STEPS);
      if (v instanceof Violation<Command, String> bad) {
        violations++;
        if (violations <= 5) {
          out.println("NOT LINEARIZABLE: " + e.getKey() + ": no order explains " + bad.stuck());
          List<Operation<Command, String>> tail = bad.longest().subList(Math.max(0, bad.longest().size() - 8),
              bad.longest().size());
          out.println("  the longest order found ends with " + tail);
          out.println("  the key's operations are in " + o.dir().resolve("history-" + e.getKey().replace(':', '-')
              + ".txt"));
          write(e.getKey(), h);
        }
      } else if (v instanceof Linearizability.Undecided<Command, String>) {
        undecided.add(e.getKey());
      }
    }
    out.printf("%,d operations on %d keys (%,d writes without an answer: taken as landing late or never), checked in"
        + " %d ms%n", ops, history.size(), pending, (System.nanoTime() - t0) / 1_000_000);
    out.println("keys whose history no order explains: " + violations);
    out.println("keys the check could not decide within " + CHECK_STEPS + " steps: " + undecided.size()
        + (undecided.isEmpty() ? "" : " " + undecided));
    out.println("keys that could not be read at the end: " + unread.size() + (unread.isEmpty() ? "" : " " + unread));
    out.println("faults after which the cluster was not whole again within " + o.recoveryTimeout().toSeconds()
        + " s: " + unrecovered);
    boolean ok = violations == 0 && undecided.isEmpty() && unread.isEmpty() && unrecovered == 0;
    out.println(ok ? "result: OK (every key linearizable: no acknowledged write lost, no stale read; every fault"
        + " recovered)" : "result: FAILED");
    out.println("Guarantee checked: each key's operations, as this client saw them, in one order consistent with real"
        + " time (one clock: this JVM's).");
    return ok;
  }

  private void write(String key, List<Operation<Command, String>> h) {
    StringBuilder b = new StringBuilder();
    for (Operation<Command, String> op : h) {
      b.append(op).append('\n');
    }
    try {
      Files.writeString(o.dir().resolve("history-" + key.replace(':', '-') + ".txt"), b);
    } catch (java.io.IOException e) {
      out.println("  (could not write it: " + e.getMessage() + ")");
    }
  }
}

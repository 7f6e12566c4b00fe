package io.atoll.server.chaos;

import io.atoll.core.PodAddress;
import io.atoll.core.ShardHasher;
import io.atoll.runtime.Sharding;
import io.atoll.server.demo.Account;
import io.atoll.server.demo.AccountMsg;
import io.atoll.server.demo.AccountsDatabase;
import io.atoll.server.demo.ActivationLog;
import io.atoll.server.demo.Audit;
import io.atoll.server.demo.Ledger;
import io.atoll.server.demo.Load;
import io.atoll.server.demo.PodNames;
import io.atoll.server.demo.RunReport;
import io.atoll.server.demo.StoreServer;
import io.atoll.testkit.Await;
import io.atoll.testkit.ClusterChecks;
import io.atoll.testkit.process.ProcessCluster;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code atoll chaos}: the demo's service (a manager, pods, the accounts database, the load's own
 * ledger) under steady load while faults are injected one at a time, in an order drawn from a seed,
 * each followed by recovery. It ends with the demo's audit, the activation log's check for two
 * activations of one account live at once, and per fault kind the count and the longest time a
 * shard went without an acknowledged deposit.
 */
public final class ChaosRun {

  /** Op ids of slow deposits: far above the load's. */
  private static final long SLOW_OPS = 1L << 48;

  /**
   * What to run.
   *
   * @param duration no fault starts after this much load
   * @param seed the seed of the fault order, the victims and the fault lengths
   * @param pods pods at all times (between faults)
   * @param accounts accounts the load spreads over
   * @param rate deposits and balance checks per second
   * @param concurrency messages in flight at most
   * @param shards number of shards
   * @param lease the pods' lease
   * @param recovery how long the load runs undisturbed after a fault has recovered
   * @param kinds the fault kinds to draw from
   * @param dir where logs, the manager's state and the database go
   * @param margin the managers' lease margin
   * @param recoveryTimeout how long to wait for a fault to recover before going on (it counts as not
   *     recovered): with the fault's own length, what bounds the time of one fault
   * @param count no fault starts after this many (0: no limit but the duration)
   * @param store {@code redis} or {@code etcd}: a store server, and a leader and a standby manager on it;
   *     null for one manager on files
   */
  public record Options(Duration duration, long seed, int pods, int accounts, int rate, int concurrency, int shards,
      Duration lease, Duration recovery, List<FaultKind> kinds, Path dir, Duration margin, Duration recoveryTimeout,
      int count, String store) {}

  private final Options o;
  private final PrintStream out;
  private final long start = System.nanoTime();

  public ChaosRun(Options options, PrintStream out) {
    this.o = options;
    this.out = out;
  }

  private void say(String what) {
    out.printf("[%6.1fs] %s%n", (System.nanoTime() - start) / 1e9, what);
    out.flush();
  }

  /** Runs; returns 0 if nothing acknowledged was lost and no two activations overlapped, else 1. */
  public int run() throws Exception {
    Files.createDirectories(o.dir());
    out.println("atoll chaos --seed " + o.seed() + ": " + (o.store() == null ? "a shard manager"
        : "a leading and a standby shard manager on " + o.store()) + " and " + o.pods() + " pods of the bank-account"
        + " service on 127.0.0.1, " + o.rate() + " msg/s, faults one at a time for " + o.duration().toSeconds()
        + " s" + (o.count() > 0 ? " or " + o.count() + " faults" : "") + ";");
    out.println("            logs and data in " + o.dir());
    PodNames names = new PodNames();
    FreezeLog freezes = new FreezeLog();
    try (AccountsDatabase db = AccountsDatabase.start(o.dir().resolve("db"));
        StoreServer store = o.store() == null ? null : StoreServer.start(o.store(), o.dir().resolve(o.store()));
        ProcessCluster processes = new ProcessCluster(o.dir(), Duration.ofSeconds(10));
        ChaosCluster cluster = new ChaosCluster(processes, o.dir(), db.url(), o.shards(), o.lease(), o.margin(), store,
            names, freezes)) {
      return processes.withShutdownHook(() -> run(db, cluster, names, freezes));
    }
  }

  private int run(AccountsDatabase db, ChaosCluster cluster, PodNames names, FreezeLog freezes) throws Exception {
    Random random = new Random(o.seed());
    List<PodAddress> managers = cluster.startManagers();
    say((managers.size() == 1 ? "shard manager up on " + managers.getFirst() : "shard managers up on " + managers
        + " (the first leads, the second stands by), store " + cluster.store().uri()) + " (lease "
        + o.lease().toMillis() + " ms, margin " + o.margin().toMillis() + " ms)");
    FaultInjector faults;
    try (Sharding client = Sharding.builder().managers(managers).clientOnly().sendTimeout(Duration.ofSeconds(10))
        .askTimeout(Duration.ofSeconds(10)).start()) {
      Ledger ledger = new Ledger();
      Availability availability = new Availability(ShardHasher.DEFAULT, o.shards());
      AtomicLong slowOps = new AtomicLong(SLOW_OPS);
      FaultInjector.SlowDeposits slow = (stall, ask) -> {
        String account = "acct-" + random.nextInt(o.accounts());
        long op = slowOps.getAndIncrement();
        ledger.sent();
        long sentAt = System.nanoTime();
        availability.sent(account, sentAt);
        return client.entity(Account.TYPE, account).<Boolean>ask(r -> new AccountMsg.SlowDeposit(op, 1, stall, r), ask)
            .handle((v, e) -> {
              availability.ended(account, sentAt, e == null);
              if (e == null) {
                ledger.acked(op, account, 1);
                return "the slow deposit to " + account + " was acknowledged within its timeout";
              }
              ledger.failed(op, e);
              Throwable c = e.getCause() != null ? e.getCause() : e;
              return "the ask of the slow deposit to " + account + " ended: " + c.getMessage();
            }).toCompletableFuture();
      };
      faults = new FaultInjector(cluster, random, o.lease(), o.margin(), client::config, slow, this::say);
      for (int i = 0; i < o.pods(); i++) {
        cluster.startPod(faults.version());
      }
      for (ChaosCluster.Pod p : cluster.pods()) {
        cluster.awaitUp(p);
      }
      ClusterChecks.awaitEveryShardOwned(client, o.pods(), Duration.ofSeconds(90));
      // The baseline is the measure's floor without faults: not the first rebalance, nor cold JVMs.
      Await.until("shards balanced over " + o.pods() + " pods", Duration.ofSeconds(90),
          () -> ClusterChecks.balanced(client.config(), o.pods()));
      say(o.pods() + " pods up; " + names.shardsLine(client.config()));
      Load load = new Load(client, ledger, o.accounts(), o.concurrency(), 1, o.rate(), availability).start();
      FaultStats<FaultKind> stats = new FaultStats<>(FaultKind.class, FaultKind::label);
      long warm = warmUp(ledger);
      availability.begin();
      TimeUnit.MILLISECONDS.sleep(Math.max(3_000, o.recovery().toMillis())); // the baseline's length
      long baseline = availability.end();
      stats.baseline(baseline);
      say("load started: " + o.rate() + " msg/s, acknowledged at that rate after " + warm + " ms (cold JVMs, every"
          + " account activating); baseline (no fault): longest a shard kept a deposit waiting without acknowledging"
          + " any " + baseline + " ms");
      FaultPlan<FaultKind> plan = new FaultPlan<>(o.kinds(), random);
      long loadStart = System.nanoTime();
      int n = 0;
      long acked = ledger.ackedCount();
      long failed = ledger.failedCount();
      while (System.nanoTime() - loadStart < o.duration().toNanos() && (o.count() == 0 || n < o.count())) {
        FaultKind kind = plan.next();
        say("#" + (++n) + " " + kind.label());
        availability.begin();
        faults.inject(kind);
        long recovery = recover(client, cluster);
        say(recovery >= 0 ? "  recovered in " + recovery + " ms: " + names.shardsLine(client.config())
            : "  NOT recovered within " + o.recoveryTimeout().toSeconds() + " s: " + names.shardsLine(client.config()));
        TimeUnit.MILLISECONDS.sleep(o.recovery().toMillis()); // undisturbed load before the next fault
        Availability.Longest longest = availability.endWindow();
        stats.add(kind, longest.millis(), recovery);
        say(String.format("  longest unavailable %s | acked %,d (+%,d) | unacked %,d (+%,d)", longest,
            ledger.ackedCount(), ledger.ackedCount() - acked, ledger.failedCount(), ledger.failedCount() - failed));
        acked = ledger.ackedCount();
        failed = ledger.failedCount();
      }
      say("load stopping; waiting for what is in flight");
      load.stop(15_000);
      ActivationLog.Result log = ActivationLog.check(db.url(), freezes);
      Audit audit = Audit.of(ledger, db.url(), log);
      stats.print(out);
      boolean ok = new RunReport(out).print(audit, ledger, log, o.dir().toString());
      out.println("seed " + o.seed() + ", " + stats.total() + " faults" + (stats.unrecovered() > 0
          ? ", " + stats.unrecovered() + " of them did not recover within " + o.recoveryTimeout().toSeconds() + " s"
          : "") + " in " + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - loadStart) + " s");
      return ok ? 0 : 1;
    }
  }

  /**
   * Waits, up to 30 s, until the load is acknowledged at 90 % of its rate for two seconds running:
   * the baseline is then the measure's floor in steady state, not a cold start. Returns how long.
   */
  private long warmUp(Ledger ledger) throws InterruptedException {
    long t0 = System.nanoTime();
    int good = 0;
    long acked = ledger.ackedCount();
    while (good < 2 && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30)) {
      TimeUnit.SECONDS.sleep(1); // one second's acknowledgements, counted
      long now = ledger.ackedCount();
      good = now - acked >= o.rate() * 9L / 10 ? good + 1 : 0;
      acked = now;
    }
    return (System.nanoTime() - t0) / 1_000_000;
  }

  /**
   * Waits until a manager leads and every shard is owned by one of the pods, all active; returns
   * how long, or -1.
   */
  private long recover(Sharding client, ChaosCluster cluster) {
    long t0 = System.nanoTime();
    try {
      Await.until("a leading manager, every shard owned by " + o.pods() + " active pods", o.recoveryTimeout(),
          () -> cluster.someLeads() && ClusterChecks.everyShardOwnedByALivePod(client.config(), o.pods()));
      return (System.nanoTime() - t0) / 1_000_000;
    } catch (Await.ConditionTimeoutException e) {
      return -1;
    }
  }
}

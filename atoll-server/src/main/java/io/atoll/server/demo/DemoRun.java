package io.atoll.server.demo;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.metrics.PodMetrics;
import io.atoll.server.http.Probes;
import io.atoll.server.http.Reporter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.atoll.testkit.ClusterChecks;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The main job: a shard manager and pods of the bank-account service as separate processes on
 * loopback, a shared database, and a client putting steady load on them while the demo adds a pod,
 * stops one gracefully and kills another with SIGKILL. It ends by auditing its own ledger against
 * the database.
 *
 * <p>With a store ({@code file}, {@code redis}, {@code etcd}; the servers are started on free
 * loopback ports if installed) it runs two managers on it, a leader and a standby, gives every
 * process both addresses, and first kills the leading manager with SIGKILL: the standby takes
 * over once the store lease lapses, and the pod added next must get shards from it.
 */
public final class DemoRun {

  /**
   * What to run.
   *
   * @param duration how long the load runs
   * @param keepRunning run until interrupted instead
   * @param pods pods at the start
   * @param accounts accounts the load spreads over
   * @param concurrency messages in flight at most
   * @param rate messages per second (0: as many as {@code concurrency} allows)
   * @param lease the pods' lease
   * @param shards number of shards
   * @param dir where logs, the manager's state and the database go
   * @param store null for one manager on files; else {@code file}, {@code redis} or {@code etcd}
   *     for two managers on that store, and the fault "kill the leading manager"
   * @param secure whether every connection is mutual TLS, with certificates made in {@code dir/certs}
   */
  public record Options(Duration duration, boolean keepRunning, int pods, int accounts, int concurrency,
      int rate, Duration lease, int shards, Path dir, String store, boolean secure) {

    /** One manager on files, plaintext. */
    public Options(Duration duration, boolean keepRunning, int pods, int accounts, int concurrency, int rate,
        Duration lease, int shards, Path dir) {
      this(duration, keepRunning, pods, accounts, concurrency, rate, lease, shards, dir, null, false);
    }
  }

  /** {@link Options#rate()} that asks for a calibration first: the load runs at {@link #SHARE} of what it finds. */
  public static final int CALIBRATE = -1;
  /** The share of the calibrated rate the load runs at: room for the faults, the second load and a joining JVM. */
  static final double SHARE = 0.3;
  /** Messages in flight while calibrating. */
  static final int PROBE_CONCURRENCY = 200;
  /** The longest calibration, in seconds. */
  static final int PROBE_SECONDS = 12;
  /** A deposit in flight at a kill -9, or sent this long after one, counts as "around the kill". */
  static final long AFTER_KILL_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final Options o;
  /** When each kill -9 of an accounts pod (or of the leading manager) was done. */
  private final List<Long> kills = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final PrintStream out;
  private final long start = System.nanoTime();
  private final PodNames names = new PodNames();
  private volatile boolean interrupted;
  /** The standby manager (store mode), and the leader it replaces. */
  private ManagedProcess standbyManager;
  private ManagedProcess leadingManager;
  /**
   * How long a store run goes on past its duration while the pod added after the takeover has no
   * shard yet (its JVM may still be starting on a loaded machine).
   */
  private static final long LEADER_CHANGE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(60);

  /** Kill of the leading manager to the first config in which the pod added after it owns shards (ms), or -1. */
  private volatile long leaderChangeMillis = -1;
  private DemoCerts certs;
  /** The second entity type's pods, load and audit. */
  private DemoStatements statements;

  public DemoRun(Options options, PrintStream out) {
    this.o = options;
    this.out = out;
  }

  private void say(String what) {
    double t = (System.nanoTime() - start) / 1e9;
    out.printf("[%5.1fs] %s%n", t, what);
    out.flush();
  }

  /** Runs the demo; returns 0 if the audit found nothing lost and no duplicate activation. */
  public int run() throws Exception {
    Files.createDirectories(o.dir());
    out.println("atoll demo: a shard manager and " + o.pods() + " pods of a bank-account service, each its own"
        + " process on 127.0.0.1,");
    out.println("            a client depositing into " + o.accounts() + " accounts; logs and data in " + o.dir());
    StoreServer storeServer = null;
    String storeUri = null;
    if (o.store() != null) {
      storeServer = o.store().equals("file") ? null : StoreServer.start(o.store(), o.dir().resolve(o.store()));
      storeUri = storeServer == null ? "file" : storeServer.uri();
    }
    AccountsDatabase db = AccountsDatabase.start(o.dir().resolve("db"));
    String url = db.url();
    ProcessCluster processes = new ProcessCluster(o.dir());
    Thread hook = new Thread(() -> {
      interrupted = true;
      processes.terminateAll();
    });
    Runtime.getRuntime().addShutdownHook(hook);
    Sharding client = null;
    Reporter reporter = null;
    try {
      List<String> managerArgs = new ArrayList<>(List.of("--http-port", "0"));
      if (o.secure()) {
        certs = DemoCerts.create(o.dir().resolve("certs"), o.pods() + 1 + DemoStatements.PODS);
        managerArgs.addAll(certs.manager());
        say("mutual TLS: a CA, certificates and the manager's signing key in " + o.dir().resolve("certs"));
      }
      if (storeUri != null) {
        managerArgs.addAll(List.of("--store", storeUri));
      }
      managerArgs.addAll(DemoStatements.spacesArgs(o.shards()));
      int shards = o.shards() + DemoStatements.SHARDS;
      ManagedProcess manager = processes.start(AtollProcesses.manager(storeUri == null ? "manager" : "manager-1", 0,
          o.dir().resolve("manager"), shards, o.lease(), managerArgs.toArray(new String[0])));
      PodAddress leaderAddress = manager.awaitAddress(Duration.ofSeconds(60));
      String managerHttp = manager.awaitLog(java.util.regex.Pattern.compile("http on (\\S+:\\d+)"),
          Duration.ofSeconds(30));
      say("shard manager up on " + leaderAddress + " (lease " + o.lease().toMillis() + " ms"
          + (storeServer != null ? ", store " + storeUri : storeUri != null ? ", store on files" : "") + ")");
      String managerAddress = leaderAddress.toString();
      if (storeUri != null) {
        leadingManager = manager;
        standbyManager = processes.start(AtollProcesses.manager("manager-2", 0, o.dir().resolve("manager"),
            shards, o.lease(), managerArgs.toArray(new String[0])));
        String standbyAt = standbyManager.awaitLog(java.util.regex.Pattern.compile("standing by on (\\S+:\\d+)"),
            Duration.ofSeconds(60));
        say("standby manager up on " + standbyAt + " (it takes over when the leader's store lease lapses)");
        managerAddress = leaderAddress + "," + standbyAt;
      }
      say("dashboard: http://" + managerHttp + "/  (metrics: http://" + managerHttp + "/metrics)");
      List<ManagedProcess> pods = new ArrayList<>();
      for (int i = 1; i <= o.pods(); i++) {
        pods.add(startPod(processes, i, managerAddress, url));
      }
      statements = new DemoStatements(processes, managerAddress, url, names, k -> certs == null ? List.of()
          : certs.pod("pod-" + (o.pods() + 1 + k)), this::say);
      statements.startPods();
      for (ManagedProcess p : pods) {
        names.put(p.awaitAddress(Duration.ofSeconds(60)), p.name());
      }
      statements.awaitPods();
      PrometheusMeterRegistry clientMetrics = Probes.registry();
      Sharding.Builder clientBuilder = Sharding.builder();
      if (certs != null) {
        certs.client(clientBuilder);
      }
      client = clientBuilder.manager(managerAddress).clientOnly()
          .observer(new PodMetrics(clientMetrics))
          .sendTimeout(Duration.ofSeconds(10)).askTimeout(Duration.ofSeconds(10)).start();
      reporter = Reporter.start(managerHttp, "demo client", clientMetrics);
      Sharding c = client;
      ClusterChecks.awaitEveryShardOwned(c, o.pods() + DemoStatements.PODS, Duration.ofSeconds(30));
      say(o.pods() + " pods up; " + names.shardsLine(c.config()));
      Ledger ledger = new Ledger();
      long loadStart = System.nanoTime();
      int rate = o.rate();
      long firstOp = 1;
      if (rate == CALIBRATE) {
        Calibration calibration = calibrate(client, ledger);
        rate = calibration.rate();
        firstOp = calibration.nextOp();
      }
      Load load = new Load(client, ledger, o.accounts(), o.concurrency(), firstOp, rate).start();
      say("load started: deposits (tell) and balance checks (ask), " + (rate > 0 ? rate + "/s, " : "")
          + "at most " + o.concurrency() + " in flight");
      statements.startLoad(client, rate > 0 ? rate : 3000, o.accounts());
      timeline(processes, c, ledger, load, managerAddress, url, pods, rate);
      say("load stopping; waiting for what is in flight");
      load.stop(15_000);
      statements.stopLoad(15_000);
      ActivationLog.Result log = ActivationLog.check(url, ActivationLog.Freezes.NONE);
      Audit a = Audit.of(ledger, url, log);
      boolean ok = new RunReport(out).print(a, ledger, log,
          o.dir().toString());
      RunReport.printPhases(out, ledger.outcomes().split(kills, AFTER_KILL_NANOS), AFTER_KILL_NANOS,
          ledger.outcomes().firstAckMillisAfter(loadStart), ledger.outcomes().notKept());
      ok &= statements.report(out);
      if (standbyManager != null && !o.keepRunning()) {
        if (leaderChangeMillis < 0) {
          out.println("leader change: the standby never gave the pod added after the takeover any shard: FAILED");
          ok = false;
        } else {
          out.println("leader change (kill -9 of the leader to the first rebalance of the new one): "
              + leaderChangeMillis + " ms");
        }
      }
      return ok ? 0 : 1;
    } finally {
      if (reporter != null) {
        reporter.close();
      }
      if (client != null) {
        client.close();
      }
      processes.close(); // SIGTERM, then SIGKILL for what still runs after 10 s
      db.close();
      if (storeServer != null) {
        storeServer.close();
      }
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // shutting down already
      }
    }
  }

  /** What calibrating found: the rate to run at, and the first op id after the probe's deposits. */
  private record Calibration(int rate, long nextOp) {}

  /**
   * Finds the rate this machine sustains: deposits with {@link #PROBE_CONCURRENCY} in flight, as
   * fast as they are answered, counted second by second until three seconds in a row agree within
   * a tenth (the processes are warm and the accounts active) or {@link #PROBE_SECONDS} have passed.
   * Returns {@link #SHARE} of the best of the last three seconds. Its deposits are real: the ledger
   * audits them with the rest.
   */
  private Calibration calibrate(Sharding client, Ledger ledger) throws InterruptedException {
    say("calibrating: deposits with " + PROBE_CONCURRENCY + " in flight until the rate holds steady (at most "
        + PROBE_SECONDS + " s), to find what this machine sustains (--rate N skips this)");
    Load probe = new Load(client, ledger, o.accounts(), PROBE_CONCURRENCY, 1, 0).start();
    List<Double> perSecond = new ArrayList<>();
    long last = ledger.ackedCount();
    long lastAt = System.nanoTime();
    while (perSecond.size() < PROBE_SECONDS && !interrupted) {
      TimeUnit.SECONDS.sleep(1); // the probe's measuring pace
      long acked = ledger.ackedCount();
      long now = System.nanoTime();
      perSecond.add((acked - last) / ((now - lastAt) / 1e9));
      last = acked;
      lastAt = now;
      if (perSecond.size() >= 4 && steady(perSecond.subList(perSecond.size() - 3, perSecond.size()))) {
        break;
      }
    }
    probe.stop(15_000);
    double sustained = perSecond.subList(Math.max(0, perSecond.size() - 3), perSecond.size()).stream()
        .mapToDouble(Double::doubleValue).max().orElse(0);
    int rate = Math.max(50, (int) Math.round(sustained * SHARE / 50) * 50);
    say(String.format("this machine sustains ~%,.0f deposits/s (after %d s); running at %,d/s (%.0f %% of it: room"
        + " for the faults, the statements and a joining pod)", sustained, perSecond.size(), rate, SHARE * 100));
    return new Calibration(rate, probe.nextOp());
  }

  /** Whether the rates agree within a tenth of the largest. */
  static boolean steady(List<Double> rates) {
    double max = rates.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    double min = rates.stream().mapToDouble(Double::doubleValue).min().orElse(0);
    return max > 0 && min >= 0.9 * max;
  }

  private ManagedProcess startPod(ProcessCluster processes, int i, String managers, String url) {
    return processes.start(AtollProcesses.pod("pod-" + i, managers, url,
        certs == null ? List.of() : certs.pod("pod-" + i)));
  }

  private void timeline(ProcessCluster processes, Sharding client, Ledger ledger, Load load, String manager, String url,
      List<ManagedProcess> pods, int rate) throws Exception {
    long total = o.duration().toNanos();
    // Each fault waits for the previous one to settle, so the story reads in order on a busy machine.
    long addAt = total * 3 / 20;
    long stopAt = total * 2 / 5;
    long killAt = total * 13 / 20;
    long killManagerAt = total / 10;
    boolean managerKilled = standbyManager == null;
    long managerKilledNanos = 0;
    boolean tookOver = standbyManager == null;
    String addedName = null;
    boolean added = false;
    boolean addedActive = false;
    boolean stopped = false;
    boolean killed = false;
    boolean waitingNoted = false;
    long addedNanos = 0;
    long upNanos = 0;
    ManagedProcess stopping = null;
    ManagedProcess joining = null;
    long loadStart = System.nanoTime();
    long lastTick = loadStart;
    long lastAcked = 0;
    long lastEpoch = client.config().epoch();
    Map<String, Integer> lastShards = names.shardCounts(client.config());
    while (!interrupted) {
      long now = System.nanoTime();
      long t = now - loadStart;
      if (!o.keepRunning() && t >= total) {
        // A store run measures the leader change: the pod added after the takeover is a fresh JVM,
        // which on a loaded machine can take longer to start than the rest of the run. Wait for it
        // (bounded) rather than end the run before the new leader had anything to rebalance.
        boolean pending = standbyManager != null && leaderChangeMillis < 0 && addedName != null;
        if (!pending || t >= total + LEADER_CHANGE_GRACE_NANOS) {
          break;
        }
        if (!waitingNoted) {
          waitingNoted = true;
          say("  the run is over but " + addedName + (joining != null ? " is still starting" : " owns no shard yet")
              + ": waiting up to " + TimeUnit.NANOSECONDS.toSeconds(LEADER_CHANGE_GRACE_NANOS)
              + " s more for the new leader's first rebalance");
        }
      }
      if (!o.keepRunning() && !managerKilled && t >= killManagerAt) {
        managerKilled = true;
        managerKilledNanos = System.nanoTime();
        say("x killing the leading shard manager (kill -9): the standby takes over when its store lease lapses");
        kills.add(System.nanoTime());
        leadingManager.kill();
      }
      if (!tookOver && managerKilled) {
        PodAddress next = standbyManager.addressIfUp().orElse(null);
        if (next != null) {
          tookOver = true;
          say(String.format("  the standby leads on %s, %d ms after the kill", next,
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - managerKilledNanos)));
        }
      }
      if (addedName != null && managerKilledNanos != 0 && leaderChangeMillis < 0) {
        Integer owned = names.shardCounts(client.config()).get(addedName);
        if (owned != null && owned > 0) {
          long at = System.nanoTime();
          leaderChangeMillis = TimeUnit.NANOSECONDS.toMillis(at - managerKilledNanos);
          say("  the new leader's first rebalance gave " + addedName + " " + owned + " shards, " + leaderChangeMillis
              + " ms after the kill (" + addedName + " took " + TimeUnit.NANOSECONDS.toMillis(
              (upNanos != 0 ? upNanos : at) - addedNanos) + " ms from its start to listening)");
        }
      }
      if (!o.keepRunning() && !added && t >= addAt && tookOver) {
        added = true;
        joining = startPod(processes, pods.size() + 1, manager, url);
        pods.add(joining);
        addedName = joining.name();
        addedNanos = System.nanoTime();
        say("+ starting " + joining.name());
      }
      if (addedName != null && !addedActive) {
        Integer owned = names.shardCounts(client.config()).get(addedName);
        if (owned != null && owned > 0) {
          addedActive = true;
          say(String.format("  %s is active: it owns %d shards, %.1f s after its start", addedName, owned,
              (System.nanoTime() - addedNanos) / 1e9));
        }
      }
      if (joining != null) {
        PodAddress address = joining.addressIfUp().orElse(null);
        if (address != null) {
          if (joining.name().equals(addedName)) {
            upNanos = System.nanoTime();
          }
          names.put(address, joining.name());
          say("  " + joining.name() + " is up on " + address);
          joining = null;
        }
      }
      if (!o.keepRunning()) {
        statements.tick(t, total);
      }
      if (!o.keepRunning() && !stopped && t >= stopAt && added && joining == null) {
        stopped = true;
        stopping = pods.get(0);
        say("~ stopping " + stopping.name() + " gracefully (SIGTERM): it hands its shards over and leaves");
        stopping.terminate();
      }
      if (stopping != null && !stopping.isAlive()) {
        int code = stopping.awaitExit(Duration.ZERO).orElse(-1);
        say("  " + stopping.name() + " left the cluster and exited" + (code == 0 || code == 143 ? "" : " (code " + code + ")"));
        stopping = null;
      }
      if (!o.keepRunning() && !killed && t >= killAt && stopped && stopping == null) {
        killed = true;
        ManagedProcess victim = pods.get(1);
        say("x killing " + victim.name() + " (kill -9): its shards move once its lease runs out");
        kills.add(System.nanoTime());
        victim.kill();
      }
      ClusterConfig view = client.config();
      Map<String, Integer> shards = names.shardCounts(view);
      if (view.epoch() != lastEpoch && !shards.equals(lastShards)) {
        say("  rebalance -> epoch " + view.epoch() + ": " + names.shardsLine(view));
        lastShards = shards;
      }
      lastEpoch = view.epoch();
      if (now - lastTick >= TimeUnit.SECONDS.toNanos(2)) {
        long acked = ledger.ackedCount();
        double perSecond = (acked - lastAcked) / ((now - lastTick) / 1e9);
        int pace = load.pace();
        say(String.format("%,8.0f msg/s | acked %,d | unacked %,d | %s%s", perSecond, acked, ledger.failedCount(),
            names.shardsLine(view), pace > 0 && pace < rate ? " | backing off to " + pace + "/s" : ""));
        lastAcked = acked;
        lastTick = now;
      }
      TimeUnit.MILLISECONDS.sleep(100); // the progress display's pace
    }
  }
}

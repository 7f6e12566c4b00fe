package io.atoll.server.demo;

import io.atoll.runtime.Sharding;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.io.PrintStream;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * The demo's second entity type on its own pods: the statements ({@link Statement}), in a shard
 * space of their own ({@value #SHARDS} shards, role {@value Statement#ROLE}) beside the accounts'
 * default space, hosted by {@value #PODS} pods started with {@code --role statements} that host no
 * accounts. Under a load of their own they live through a fault of their own: one statements pod
 * is killed with SIGKILL, and its shards go to the other statements pod once its lease runs out
 * (no account shard moves for it). At the end their own audit is printed. No statements pod joins
 * later: one more JVM starting under load would lengthen the demo on a small machine.
 *
 * <p>Driven by {@link DemoRun}'s timeline from one thread; the load reports from the client's.
 */
final class DemoStatements {

  /** Shards in the statements space. */
  static final int SHARDS = 60;
  /** Statements pods at the start. */
  static final int PODS = 2;
  /** Fraction of the run (of 20) at which one statements pod is killed. */
  private static final int KILL_AT = 5;

  private final ProcessCluster processes;
  private final String managers;
  private final String url;
  private final PodNames names;
  private final IntFunction<List<String>> tls;
  private final Consumer<String> say;
  private final List<ManagedProcess> pods = new ArrayList<>();
  private final Ledger ledger = new Ledger();
  private StatementLoad load;
  private boolean killed;

  /**
   * Statements pods reaching the managers at {@code managers} and the database at {@code url},
   * named in {@code names}; {@code tls} gives the TLS arguments of the k-th statements pod (1-based),
   * {@code say} tells the story.
   */
  DemoStatements(ProcessCluster processes, String managers, String url, PodNames names,
      IntFunction<List<String>> tls, Consumer<String> say) {
    this.processes = processes;
    this.managers = managers;
    this.url = url;
    this.names = names;
    this.tls = tls;
    this.say = say;
  }

  /** The manager's {@code --spaces} for {@code accountShards} account shards and the statements. */
  static List<String> spacesArgs(int accountShards) {
    return List.of("--spaces", "default=" + accountShards + "," + Statement.ROLE + "=" + SHARDS);
  }

  /** Creates the statements' tables and starts their pods (returns at once). */
  void startPods() throws SQLException {
    StatementDb.createSchema(url);
    for (int i = 0; i < PODS; i++) {
      pods.add(startPod());
    }
  }

  private ManagedProcess startPod() {
    int k = pods.size() + 1;
    List<String> extra = new ArrayList<>(List.of("--role", Statement.ROLE));
    extra.addAll(tls.apply(k));
    return processes.start(AtollProcesses.pod("stmt-" + k, managers, url, extra));
  }

  /** Waits for the pods {@link #startPods()} started and names them. */
  void awaitPods() {
    for (ManagedProcess p : pods) {
      names.put(p.awaitAddress(Duration.ofSeconds(60)), p.name());
    }
  }

  /** Starts the statements' load from {@code client}: a tenth of {@code rate} (at least 50/s) over {@code count} statements. */
  void startLoad(Sharding client, int rate, int count) {
    int r = Math.max(50, rate / 10);
    load = new StatementLoad(client, ledger, count, 2_000, r).start();
    say.accept("statements load started: lines (tell) and totals (ask), " + r + "/s, to " + pods.size()
        + " pods of role " + Statement.ROLE + " (their own " + SHARDS + "-shard space; they host no accounts)");
  }

  /** One step of the timeline, {@code t} of {@code total} nanoseconds into the load. */
  void tick(long t, long total) {
    if (!killed && t >= total * KILL_AT / 20) {
      killed = true;
      ManagedProcess victim = pods.get(0);
      say.accept("x killing " + victim.name() + " (kill -9): only statements shards move, to "
          + pods.get(1).name() + ", once its lease runs out");
      victim.kill();
    }
  }

  /** Stops the load and waits up to {@code timeoutMillis} for what is in flight. */
  void stopLoad(long timeoutMillis) throws InterruptedException {
    if (load != null) {
      load.stop(timeoutMillis);
    }
  }

  /** Audits the statements and prints their summary; returns whether they kept every promise. */
  boolean report(PrintStream out) throws SQLException {
    return StatementAudit.of(ledger, url).print(out);
  }
}

package io.atoll.server;

import io.atoll.server.demo.DemoRun;
import io.atoll.server.demo.StoreServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code atoll demo}: the main job, on embedded defaults. */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = {"A shard manager and pods as separate processes on loopback, under load and faults:",
        "a pod joins, one stops gracefully, one is killed (kill -9). Ends with an audit of",
        "every acknowledged deposit against the database; exits 1 if anything was lost or an",
        "entity was ever live twice."})
final class DemoCommand implements Callable<Integer> {

  @Mixin
  Main.ConfigOption config;

  @Option(names = "--duration", defaultValue = "35s", description = "How long the load runs (default: ${DEFAULT-VALUE}).")
  Duration duration;

  @Option(names = "--keep-running", description = "Run the cluster under load until interrupted (Ctrl-C), no faults.")
  boolean keepRunning;

  @Option(names = "--pods", defaultValue = "3", description = "Pods at the start, at least 2 (default: ${DEFAULT-VALUE}).")
  int pods;

  @Option(names = "--accounts", defaultValue = "1000", description = "Default: ${DEFAULT-VALUE}.")
  int accounts;

  @Option(names = "--concurrency", defaultValue = "20000", description = "Most messages in flight (default: ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(names = "--rate", defaultValue = "auto", description = "Deposits per second; auto: a short closed-loop"
      + " run first finds what this machine sustains, and the load runs at 30 % of it; 0 for as many as"
      + " --concurrency allows (default: ${DEFAULT-VALUE}).")
  String rateText;

  @Option(names = "--lease", defaultValue = "3s", description = "The pods' lease (default: ${DEFAULT-VALUE}).")
  Duration lease;

  @Option(names = "--shards", defaultValue = "300", description = "Default: ${DEFAULT-VALUE}.")
  int shards;

  @Option(names = "--secure", description = "Run everything over mutual TLS with certificates made for the run"
      + " (atoll certs) in <dir>/certs.")
  boolean secure;

  @Option(names = "--dir", description = "Where logs and data go (default: a new directory under data/demo).")
  Path dir;

  @Option(names = "--store", description = "Run two managers (a leader and a standby) on this store, file, redis"
      + " or etcd (redis-server or etcd is started on a free loopback port; it must be installed), and add the"
      + " fault: kill -9 of the leading manager (default: one manager on files).")
  String store;

  @Override
  public Integer call() throws Exception {
    if (pods < 2 || pods > 8) {
      System.err.println("atoll demo: --pods " + pods + " (expected: 2..8)");
      return 2;
    }
    int rate;
    try {
      rate = rateText.equals("auto") ? DemoRun.CALIBRATE : Integer.parseInt(rateText);
    } catch (NumberFormatException e) {
      rate = -2;
    }
    if (rate == -2 || (rate < 0 && rate != DemoRun.CALIBRATE) || rate > 1_000_000) {
      System.err.println("atoll demo: --rate " + rateText + " (expected: auto, or deposits per second 0..1000000)");
      return 2;
    }
    if (accounts < 1 || concurrency < 1 || concurrency > 100_000) {
      System.err.println("atoll demo: --accounts " + accounts + ", --concurrency " + concurrency
          + " (expected: accounts >= 1, concurrency 1..100000)");
      return 2;
    }
    if (duration.toSeconds() < 10) {
      System.err.println("atoll demo: --duration " + Durations.format(duration) + " (expected: >= 10s)");
      return 2;
    }
    if (store != null && !List.of("file", "redis", "etcd").contains(store)) {
      System.err.println("atoll demo: --store " + store + " (expected: file, redis or etcd)");
      return 2;
    }
    if (store != null && !store.equals("file")) {
      try {
        StoreServer.binary(store.equals("redis") ? "redis-server" : "etcd", store.equals("redis") ? "redis-server"
            : "etcd-server");
      } catch (IllegalStateException e) {
        System.err.println("atoll demo: --store " + store + ": " + e.getMessage());
        return 2;
      }
    }
    Path where = dir != null ? dir : Path.of("data", "demo",
        LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    if (Files.exists(where) && Files.list(where).findAny().isPresent()) {
      System.err.println("atoll demo: --dir " + where + " is not empty (expected: a new or empty directory)");
      return 2;
    }
    return new DemoRun(new DemoRun.Options(duration, keepRunning, pods, accounts, concurrency, rate, lease, shards,
        where.toAbsolutePath(), store, secure), System.out).run();
  }
}

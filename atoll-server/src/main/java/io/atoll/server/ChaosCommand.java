package io.atoll.server;

import io.atoll.server.chaos.ChaosRun;
import io.atoll.server.chaos.FaultKind;
import io.atoll.server.chaos.KvChaosRun;
import io.atoll.server.chaos.KvFault;
import io.atoll.server.demo.StoreServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code atoll chaos}: the promise, measured under injected faults. */
@Command(name = "chaos", mixinStandardHelpOptions = true,
    description = {"The demo's service under steady load while faults are injected one at a time, in an order",
        "drawn from --seed: kill -9 a pod or the manager, freeze either (SIGSTOP) past the lease, drop",
        "traffic between a pod and the manager, into a pod or between two pods, a handler slower than its",
        "ask timeout, restart a pod, a rolling restart to a new version; with --store, kill or freeze the",
        "leading manager and freeze or restart the store. Ends with the demo's audit, a check of the activation log for two activations of one",
        "account live at once, and per fault kind the count and the longest shard unavailability.",
        "Exits 1 if anything acknowledged was lost or two activations overlapped.",
        "With --kv: a managed Atoll KV cluster (one replica per primary) under a verifying Lettuce cluster client,",
        "with its own faults (kill -9 a primary or a replica, freeze a node, kill the manager, drop a node's traffic",
        "to the manager, a node joining and leaving); ends with a linearizability check of every key's history.",
        "Exits 1 if any key's history is not linearizable, a key cannot be read at the end, or a fault did not",
        "recover."})
final class ChaosCommand implements Callable<Integer> {

  @Mixin
  Main.ConfigOption config;

  @Option(names = "--duration", defaultValue = "10m", description = "No fault starts after this (default: ${DEFAULT-VALUE}).")
  Duration duration;

  @Option(names = "--seed", description = "Seed of the fault order, victims and lengths (default: random, printed).")
  Long seed;

  @Option(names = "--pods", defaultValue = "4", description = "Pods, 2..8 (default: ${DEFAULT-VALUE}).")
  int pods;

  @Option(names = "--rate", defaultValue = "600", description = "Messages per second; with --kv, operations per"
      + " second (default: ${DEFAULT-VALUE}).")
  int rate;

  @Option(names = "--accounts", defaultValue = "1000", description = "Default: ${DEFAULT-VALUE}.")
  int accounts;

  @Option(names = "--shards", defaultValue = "120", description = "Default: ${DEFAULT-VALUE}.")
  int shards;

  @Option(names = "--lease", defaultValue = "3s", description = "The pods' lease (default: ${DEFAULT-VALUE}).")
  Duration lease;

  @Option(names = "--recovery", defaultValue = "2s", description = "Undisturbed load after each fault has"
      + " recovered (default: ${DEFAULT-VALUE}).")
  Duration recovery;

  @Option(names = "--lease-margin", defaultValue = "1s", description = "The managers' wait after a lease runs out,"
      + " at least a twentieth of the lease (default: ${DEFAULT-VALUE}).")
  Duration margin;

  @Option(names = "--recovery-timeout", defaultValue = "90s", description = "Go on after this long if a fault has not"
      + " recovered (it is counted as such): with the fault's own length, it bounds one fault's time (default:"
      + " ${DEFAULT-VALUE}).")
  Duration recoveryTimeout;

  @Option(names = "--count", defaultValue = "0", description = "No fault starts after this many; 0 for no limit but"
      + " --duration (default: ${DEFAULT-VALUE}).")
  int count;

  @Option(names = "--store", description = "redis or etcd: a store server on a free port (the binary must be"
      + " installed) and two managers on it, a leader and a standby; adds the faults pause-store and restart-store,"
      + " and kill-manager and pause-manager hit the leader (default: one manager on files).")
  String store;

  @Option(names = "--faults", split = ",", description = "Only these kinds, e.g. kill-pod,pause-manager (default: all"
      + " of kill-pod, pause-pod, kill-manager, pause-manager, drop-pod-manager, drop-into-pod, drop-pod-pod,"
      + " slow-handler, restart-pod, rolling-restart; with --store also pause-store, restart-store).")
  List<String> faults;

  @Option(names = "--kv", description = "Chaos for Atoll KV instead of the entities: a shard manager with one"
      + " replica per primary and 4 kv nodes; faults kill-primary, kill-replica, pause-node, kill-manager,"
      + " drop-node-manager, join-leave (--pods, --accounts, --shards and --store do not apply).")
  boolean kv;

  @Option(names = "--keys", defaultValue = "200", description = "With --kv: keys the client spreads over, half SET/GET"
      + " registers, half INCR/GET counters (default: ${DEFAULT-VALUE}).")
  int keys;

  @Option(names = "--clients", defaultValue = "4", description = "With --kv: client threads sharing one cluster"
      + " connection (default: ${DEFAULT-VALUE}).")
  int clients;

  @Option(names = "--dir", description = "Where logs and data go (default: a new directory under data/chaos).")
  Path dir;

  @Override
  public Integer call() throws Exception {
    if (pods < 2 || pods > 8) {
      return usage("--pods " + pods + " (expected: 2..8)");
    }
    if (rate < 1 || rate > 100_000 || accounts < 1 || shards < 1 || shards > 100_000) {
      return usage("--rate " + rate + ", --accounts " + accounts + ", --shards " + shards
          + " (expected: rate 1..100000, accounts >= 1, shards 1..100000)");
    }
    if (duration.isNegative() || duration.isZero() || lease.toMillis() < 500 || recovery.isNegative()) {
      return usage("--duration " + Durations.format(duration) + ", --lease " + Durations.format(lease) + ", --recovery "
          + Durations.format(recovery) + " (expected: duration > 0, lease >= 500ms, recovery >= 0)");
    }
    if (margin.toMillis() < Math.max(50, lease.toMillis() / 20) || recoveryTimeout.toMillis() < 1_000 || count < 0) {
      return usage("--lease-margin " + Durations.format(margin) + ", --recovery-timeout "
          + Durations.format(recoveryTimeout) + ", --count " + count + " (expected: margin >= a twentieth of the"
          + " lease and >= 50ms, recovery timeout >= 1s, count >= 0)");
    }
    if (kv) {
      return kv();
    }
    if (store != null && !List.of("redis", "etcd").contains(store)) {
      return usage("--store " + store + " (expected: redis or etcd)");
    }
    if (store != null) {
      try {
        StoreServer.binary(store.equals("redis") ? "redis-server" : "etcd", store.equals("redis") ? "redis-server"
            : "etcd-server");
      } catch (IllegalStateException e) {
        return usage("--store " + store + ": " + e.getMessage());
      }
    }
    List<FaultKind> kinds = new ArrayList<>();
    for (String f : faults == null ? List.<String>of() : faults) {
      FaultKind k = Arrays.stream(FaultKind.values()).filter(x -> x.label().equals(f.trim())).findFirst().orElse(null);
      if (k == null) {
        return usage("--faults " + f + " (expected: some of " + Arrays.stream(FaultKind.values()).map(FaultKind::label)
            .toList() + ")");
      }
      if (k.needsStore() && store == null) {
        return usage("--faults " + k.label() + " needs a store server (expected: with --store redis or --store etcd)");
      }
      kinds.add(k);
    }
    if (kinds.isEmpty()) {
      Arrays.stream(FaultKind.values()).filter(k -> store != null || !k.needsStore()).forEach(kinds::add);
    }
    Path where = runDir();
    if (where == null) {
      return usage("--dir " + dir + " is not empty (expected: a new or empty directory)");
    }
    long s = seed != null ? seed : ThreadLocalRandom.current().nextLong(1, 1_000_000);
    return new ChaosRun(new ChaosRun.Options(duration, s, pods, accounts, rate, Math.max(1_000, rate * 10), shards,
        lease, recovery, List.copyOf(kinds), where.toAbsolutePath(), margin, recoveryTimeout, count, store), System.out)
        .run();
  }

  private Integer kv() throws Exception {
    if (store != null) {
      return usage("--store " + store + " with --kv (expected: none: a KV run has one manager on files)");
    }
    if (keys < 2 || keys > 1_000_000 || clients < 1 || clients > 64) {
      return usage("--keys " + keys + ", --clients " + clients + " (expected: keys 2..1000000, clients 1..64)");
    }
    List<KvFault> kinds = new ArrayList<>();
    for (String f : faults == null ? List.<String>of() : faults) {
      KvFault k = Arrays.stream(KvFault.values()).filter(x -> x.label().equals(f.trim())).findFirst().orElse(null);
      if (k == null) {
        return usage("--faults " + f + " with --kv (expected: some of " + Arrays.stream(KvFault.values())
            .map(KvFault::label).toList() + ")");
      }
      kinds.add(k);
    }
    if (kinds.isEmpty()) {
      kinds.addAll(Arrays.asList(KvFault.values()));
    }
    Path where = runDir();
    if (where == null) {
      return usage("--dir " + dir + " is not empty (expected: a new or empty directory)");
    }
    long s = seed != null ? seed : ThreadLocalRandom.current().nextLong(1, 1_000_000);
    return new KvChaosRun(new KvChaosRun.Options(duration, s, keys, rate, clients, lease, margin, recovery,
        recoveryTimeout, List.copyOf(kinds), count, where.toAbsolutePath()), System.out).run();
  }

  /** Where the run's logs and data go; null if --dir names a directory that is not empty. */
  private Path runDir() throws java.io.IOException {
    Path where = dir != null ? dir : Path.of("data", "chaos",
        LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    if (Files.exists(where)) {
      try (var entries = Files.list(where)) {
        if (entries.findAny().isPresent()) {
          return null;
        }
      }
    }
    return where;
  }

  private static int usage(String what) {
    System.err.println("atoll chaos: " + what);
    return 2;
  }
}

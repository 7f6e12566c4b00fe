package io.atoll.bench.cluster;

import io.atoll.core.Ticker;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.ManagerObserver;
import io.atoll.manager.ManagerSecurity;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Sharding;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.testkit.ClusterChecks;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.atoll.testkit.process.ProcessSpec;
import io.atoll.testkit.tls.DevCa;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One measured cluster of the load generator: a shard manager in this JVM (file store in a fresh
 * temporary directory), {@link BenchPod}s in JVMs of their own, and pods in this JVM (a client
 * that only sends, or a local pod hosting the counters). {@link #close()} stops all of it, so each
 * run of a scenario starts from fresh processes. Not thread-safe; not API.
 */
final class BenchCluster implements AutoCloseable {

  /** The heap of a pod JVM measured at full speed, unless a scenario says otherwise. */
  static final String POD_HEAP = "1g";

  private final Path dir;
  private final ProcessCluster processes;
  private final List<Sharding> shardings = new ArrayList<>();
  private ShardManager manager;
  private Path certs;

  BenchCluster() throws IOException {
    this.dir = Files.createTempDirectory("atoll-bench");
    this.processes = new ProcessCluster(dir);
  }

  /** Makes every connection of this cluster mutual TLS, with certificates made for the run. Before any start. */
  void useTls() throws IOException {
    certs = dir.resolve("certs");
    DevCa ca = DevCa.create("bench", Duration.ofDays(1));
    ca.writeCa(certs);
    ca.issue(Role.MANAGER, "manager", List.of()).write(certs, "manager");
    ca.issue(Role.POD, "pod", List.of()).write(certs, "pod");
    ca.issue(Role.POD, "client", List.of()).write(certs, "client");
  }

  /** The manager started by {@link #startManager}. */
  ShardManager manager() {
    return manager;
  }

  /** Starts the manager with {@code shards} shards, a periodic rebalance every 20 s and a retry after 1 s. */
  void startManager(int shards) {
    startManager(ManagerSettings.defaults().withNumberOfShards(shards)
        .withRebalanceIntervals(Duration.ofSeconds(20), Duration.ofSeconds(1)));
  }

  /** Starts the manager with {@code s}. */
  void startManager(ManagerSettings s) {
    manager = certs == null
        ? ShardManager.start(s, FileAssignmentStore.open(dir.resolve("manager")), "127.0.0.1", 0)
        : ShardManager.start(s, FileAssignmentStore.open(dir.resolve("manager")), PodHealth.LEASE_ONLY, "127.0.0.1", 0,
            Ticker.SYSTEM, new Random(), ManagerObserver.NONE,
            new ManagerSecurity(security("manager"), ConfigSigner.generate()));
  }

  private WireSecurity security(String name) {
    return WireSecurity.tls(certs.resolve("ca.pem"), certs.resolve(name + ".pem"), certs.resolve(name + ".key"));
  }

  /** Starts {@code n} pod JVMs of {@code heap} at once and waits until each listens. */
  void startPods(int n, String heap) {
    List<ManagedProcess> started = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      started.add(startPod(heap));
    }
    for (ManagedProcess p : started) {
      p.awaitAddress(Duration.ofSeconds(60));
    }
  }

  /** Starts one pod JVM of {@code heap} (as {@code -Xmx} takes it) without waiting for it. */
  ManagedProcess startPod(String heap) {
    // A pod measured at full speed: the JVM's default collector and compilers.
    ProcessSpec.Builder spec = ProcessSpec.builder("pod-" + processes.processes().size(), BenchPod.class.getName())
        .heap(heap).quickStart(false).args(certs == null ? List.of(manager.address().toString())
            : List.of(manager.address().toString(), certs.resolve("ca.pem").toString(),
                certs.resolve("pod.pem").toString(), certs.resolve("pod.key").toString()));
    String extra = System.getProperty("bench.podJvmArgs", "");
    if (!extra.isBlank()) {
      spec.jvmOptions(List.of(extra.trim().split("\\s+"))); // e.g. a flight recording of the pod
    }
    return processes.start(spec.build());
  }

  /** A client-only pod in this JVM, with 30 s timeouts, that sees every shard owned by {@code pods} pods. */
  Sharding client(int pods) {
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

  /** 300 shards on {@code pods} pod JVMs of {@code heap}, and the client that sends to them. */
  Sharding remote(int pods, String heap) {
    startManager(300);
    startPods(pods, heap);
    return client(pods);
  }

  /** 300 shards on one pod in this JVM, hosting the counters on its shared drains. */
  Sharding local() {
    return local(BenchCounter.TYPE);
  }

  /** 300 shards on one pod in this JVM, hosting the counters as {@code type} (one of BenchCounter's). */
  Sharding local(EntityType<BenchCounter.Msg> type) {
    startManager(300);
    Sharding pod = Sharding.builder().manager(manager.address().toString())
        .register(type, ctx -> new BenchCounter())
        .askTimeout(Duration.ofSeconds(30)).sendTimeout(Duration.ofSeconds(30)).start();
    shardings.add(pod);
    awaitOwned(pod, 1);
    return pod;
  }

  /** A pod in this JVM started by the caller, closed with the cluster. */
  Sharding adopt(Sharding s) {
    shardings.add(s);
    return s;
  }

  static void awaitOwned(Sharding s, int pods) {
    ClusterChecks.awaitEveryShardOwned(s, pods, Duration.ofSeconds(30));
  }

  @Override
  public void close() {
    for (Sharding s : shardings) {
      s.close();
    }
    processes.close(); // SIGTERM, then SIGKILL for what still runs after 10 s
    if (manager != null) {
      manager.close();
    }
  }
}

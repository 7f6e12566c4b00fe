package io.atoll.server.kvdemo;

import io.atoll.core.PodAddress;
import io.atoll.core.slots.KeySlots;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

/**
 * The KV demo: a shard manager with 16384 shards and three {@code atoll kv --manager} nodes as
 * processes, a verifying Lettuce client under load ({@link KvLoad}); at 1/5 of the run a fourth
 * node joins, at 2/5 one leaves gracefully (SIGTERM: it drains), at 3/5 one is killed (kill -9).
 * Prints progress every second, then reads back every key and reports acknowledged writes lost —
 * apart from those whose slot the killed node held (its keys are not replicated: counted apart).
 * The exit code is 0 only if nothing else was lost, no read was stale, every slot was served again
 * within lease + 2 s of the kill, the joining node took its share, and the leaving node left with
 * no slot behind.
 */
public final class KvDemoRun {

  /** What to run. */
  public record Options(Duration duration, int keys, int writers, Duration lease, Path dir, int preload,
      boolean joinOnly) {}

  private final Options o;
  private final PrintStream out;
  private final long start = System.nanoTime();
  private volatile String event = "";

  public KvDemoRun(Options o, PrintStream out) {
    this.o = o;
    this.out = out;
  }

  private long elapsedMillis() {
    return (System.nanoTime() - start) / 1_000_000;
  }

  /** Runs the demo; the exit code. */
  public int run() throws Exception {
    try (ProcessCluster procs = new ProcessCluster(o.dir(), Duration.ofSeconds(60))) {
      long leaseMs = o.lease().toMillis();
      long marginMs = Math.max(200, leaseMs / 10);
      ManagedProcess manager = procs.start(AtollProcesses.atoll("manager", List.of("manager", "--port", "0",
          "--data-dir", o.dir().resolve("manager-data").toString(), "--shards", "16384", "--new-space-shards", "0",
          "--lease", leaseMs + "ms",
          "--lease-margin", marginMs + "ms", "--max-moves", "16384", "--max-moves-fraction", "1.0",
          "--termination-timeout", "4s", "--ping-timeout", "2s", "--rebalance-interval", "5s",
          "--rebalance-retry", "1s")));
      PodAddress managerAddress = manager.awaitAddress(Duration.ofSeconds(60));
      int[] ports = freePorts(4);
      Map<String, ManagedProcess> nodes = new LinkedHashMap<>();
      for (int i = 1; i <= 3; i++) {
        nodes.put("kv" + i, startNode(procs, "kv" + i, ports[i - 1], managerAddress));
      }
      for (ManagedProcess n : nodes.values()) {
        n.awaitAddress(Duration.ofSeconds(60));
      }
      String a1 = addr(ports[0]);
      String a2 = addr(ports[1]);
      String a3 = addr(ports[2]);
      String a4 = addr(ports[3]);
      out.printf("kv-demo: manager %s, nodes %s %s %s; logs in %s%n", managerAddress, a1, a2, a3, o.dir());
      RedisClient plain = RedisClient.create();
      StatefulRedisConnection<String, String> watchConn = plain.connect(RedisURI.create("127.0.0.1", ports[0]));
      RedisCommands<String, String> watch = watchConn.sync();
      awaitSlots(watch, "the three nodes to share the slots", Set.of(a1, a2, a3), Duration.ofSeconds(60));

      List<RedisURI> seeds = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        seeds.add(RedisURI.builder().withHost("127.0.0.1").withPort(ports[i]).withTimeout(Duration.ofSeconds(2))
            .build());
      }
      RedisClusterClient client = RedisClusterClient.create(seeds);
      client.setOptions(ClusterClientOptions.builder().maxRedirects(10).validateClusterNodeMembership(false)
          .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
              .enablePeriodicRefresh(Duration.ofSeconds(1)).enableAllAdaptiveRefreshTriggers()
              .adaptiveRefreshTriggersTimeout(Duration.ofMillis(200)).build()).build());
      StatefulRedisClusterConnection<String, String> conn = client.connect();
      conn.setTimeout(Duration.ofSeconds(2));
      if (o.preload() > 0) {
        preload(conn, o.preload());
      }
      KvLedger ledger = new KvLedger(o.keys());
      KvLoad load = new KvLoad(conn, ledger, o.writers(), 42);
      Map<String, Long> handedOff = new HashMap<>();
      long total = o.duration().toMillis();
      long steadyOps = 0;
      long steadyMillis = 0;
      long joinAt = -1;
      long joinShareAt = -1;
      long joinFirstAt = -1;
      long handedAtJoin = 0;
      long handedAtShare = 0;
      long errorsAtJoin = 0;
      long errorsAtShare = 0;
      long killAt = -1;
      long rehomedAt = -1;
      OptionalInt leaveExit = OptionalInt.empty();
      boolean leaveStarted = false;
      Set<Integer> killedSlots = Set.of();
      long lastOps = 0;
      long lastTick = 0;
      long migrationOps = 0;
      long migrationMillis = 0;
      int phase = 0;
      long runStart = elapsedMillis();
      while (elapsedMillis() - runStart < total) {
        LockSupport.parkNanos(250_000_000L); // the progress pace, not synchronization
        long t = elapsedMillis() - runStart;
        if (phase == 0 && t >= (o.joinOnly() ? total / 3 : total / 5)) {
          phase = 1;
          nodes.put("kv4", startNode(procs, "kv4", ports[3], managerAddress));
          joinAt = t;
          event = "kv4 joins";
        } else if (phase == 1 && !o.joinOnly() && t >= 2 * total / 5) {
          phase = 2;
          nodes.get("kv2").terminate();
          leaveStarted = true;
          event = "kv2 leaves (SIGTERM)";
        } else if (phase == 2 && t >= 3 * total / 5) {
          phase = 3;
          leaveExit = nodes.get("kv2").awaitExit(Duration.ofSeconds(30));
          SlotMap before = SlotMap.read(watch);
          Set<Integer> held = new java.util.HashSet<>();
          for (int s = 0; s < SlotMap.SLOTS; s++) {
            if (a3.equals(before.owners()[s])) {
              held.add(s);
            }
          }
          killedSlots = held;
          load.lostSlots(held);
          nodes.get("kv3").kill();
          killAt = elapsedMillis() - runStart;
          event = "kv3 killed (kill -9) holding " + held.size() + " slots";
        }
        SlotMap map;
        try {
          map = SlotMap.read(watch);
        } catch (RuntimeException e) {
          continue;
        }
        Map<String, Integer> counts = map.counts();
        long now = elapsedMillis() - runStart;
        if (joinAt >= 0 && joinFirstAt < 0 && nodes.get("kv4").logText().contains("registered with the shard manager")) {
          joinFirstAt = now;
          handedAtJoin = handedOff.values().stream().mapToLong(Long::longValue).sum();
          errorsAtJoin = load.errors();
        }
        if (joinAt >= 0 && joinShareAt < 0 && counts.getOrDefault(a4, 0) >= SlotMap.SLOTS / 4 - 1) {
          joinShareAt = now;
          handedAtShare = -1;
          errorsAtShare = load.errors();
          event = "kv4 has its share after " + (now - joinAt) + " ms";
        }
        if (killAt >= 0 && rehomedAt < 0 && map.allServedBy(Set.of(a1, a4))) {
          rehomedAt = now;
          event = "all 16384 slots served again " + (now - killAt) + " ms after the kill";
        }
        for (Map.Entry<String, ManagedProcess> e : nodes.entrySet()) {
          if (e.getValue().isAlive()) {
            Long h = handedOff(e.getValue().addressIfUp().orElse(null), plain);
            if (h != null) {
              handedOff.put(e.getKey(), h);
            }
          }
        }
        if (handedAtShare < 0) {
          handedAtShare = handedOff.values().stream().mapToLong(Long::longValue).sum();
        }
        long ops = load.ops();
        long dt = Math.max(1, now - lastTick);
        if (now - lastTick >= 900) {
          long rate = (ops - lastOps) * 1000 / dt;
          boolean migrating = (joinAt >= 0 && joinShareAt < 0) || (phase == 2 && leaveExit.isEmpty()
              && nodes.get("kv2").isAlive());
          if (phase == 0) {
            steadyOps += ops - lastOps;
            steadyMillis += dt;
          } else if (migrating) {
            migrationOps += ops - lastOps;
            migrationMillis += dt;
          }
          out.printf("%5.1fs  %7d ops/s  errors %-5d keys handed off %-7d slots %s  %s%n", now / 1000.0, rate,
              load.errors(), handedOff.values().stream().mapToLong(Long::longValue).sum(), counts, event);
          event = "";
          lastOps = ops;
          lastTick = now;
        }
      }
      load.close();
      // Every slot must be served again before the audit reads.
      awaitSlots(watch, "every slot served", o.joinOnly() ? Set.of(a1, a2, a3, a4) : Set.of(a1, a4),
          Duration.ofSeconds(30));
      int lost = 0;
      int lostKilled = 0;
      int written = 0;
      int unreadable = 0;
      var sync = conn.sync();
      for (int k = 0; k < ledger.size(); k++) {
        if (ledger.acked(k) == 0) {
          continue;
        }
        written++;
        String v = null;
        boolean read = false;
        for (int attempt = 0; attempt < 5 && !read; attempt++) {
          try {
            v = sync.get(KvLedger.key(k));
            read = true;
          } catch (RuntimeException e) {
            LockSupport.parkNanos(200_000_000L); // retry pacing
          }
        }
        if (!read) {
          unreadable++;
        } else if (!ledger.consistent(k, v)) {
          if (killedSlots.contains(KeySlots.slotOf(KvLedger.key(k).getBytes(StandardCharsets.UTF_8)))) {
            lostKilled++;
          } else {
            lost++;
          }
        }
      }
      conn.close();
      client.shutdown();
      watchConn.close();
      plain.shutdown();
      // The run is over: no need to drain the nodes left (each would wait for the others).
      for (ManagedProcess n : nodes.values()) {
        if (n.isAlive()) {
          n.kill();
        }
      }
      long rehomeMs = rehomedAt < 0 ? -1 : rehomedAt - killAt;
      long bound = leaseMs + 2000;
      String leaveLog = nodes.get("kv2").logText();
      boolean leftClean = leaveStarted && leaveExit.isPresent() && leaveLog.contains("atoll kv: left:")
          && !leaveLog.contains("were still here");
      out.println();
      out.println("kv-demo summary");
      out.printf("  operations                      %d (%d client-visible errors: %s)%n", load.ops(), load.errors(),
          load.errorKinds());
      out.printf("  ops/s steady / while migrating  %d / %d%n", steadyMillis == 0 ? 0 : steadyOps * 1000 / steadyMillis,
          migrationMillis == 0 ? 0 : migrationOps * 1000 / migrationMillis);
      out.printf("  kv4 reached its share in        %s%n", joinShareAt < 0 ? "never" : (joinShareAt - joinAt) + " ms"
          + " after its process started (" + (joinShareAt - joinFirstAt) + " ms after it registered)");
      if (joinShareAt >= 0) {
        long moved = Math.max(0, handedAtShare - handedAtJoin);
        long ms = Math.max(1, joinShareAt - joinFirstAt);
        out.printf("  keys handed off for the join    about %d (%d keys/s; sampled once a second), client errors"
            + " meanwhile %d%n", moved, moved * 1000 / ms, errorsAtShare - errorsAtJoin);
      }
      if (!o.joinOnly()) {
        out.printf("  kv2 left gracefully             %s%n", leftClean ? "yes, every slot handed over" : "NO");
        out.printf("  slots served again after kill   %s (bound: lease + 2 s = %d ms)%n",
            rehomeMs < 0 ? "never" : rehomeMs + " ms", bound);
      }
      out.printf("  keys written                    %d%n", written);
      out.printf("  acknowledged writes lost        %d%n", lost);
      if (!o.joinOnly()) {
        out.printf("  ... of the killed node's slots  %d (not replicated: lost with kv3, expected)%n", lostKilled);
      }
      out.printf("  stale reads                     %d (and %d reads of keys lost with kv3)%n", load.staleReads(),
          load.lostReads());
      if (o.preload() > 0) {
        out.printf("  preloaded keys (not checked)    %d%n", o.preload());
      }
      out.printf("  unreadable at the end           %d%n", unreadable);
      boolean ok = lost == 0 && load.staleReads() == 0 && unreadable == 0 && joinShareAt >= 0 && load.ops() > 0
          && (o.joinOnly() || (rehomeMs >= 0 && rehomeMs <= bound && leftClean));
      out.println(ok ? "kv-demo: OK" : "kv-demo: FAILED");
      out.flush();
      return ok ? 0 : 1;
    }
  }

  /** Writes {@code n} keys {@code pre:i} (64-byte values), pipelined, before the run. */
  private void preload(StatefulRedisClusterConnection<String, String> conn, int n) {
    long t0 = System.nanoTime();
    var async = conn.async();
    String value = "x".repeat(64);
    List<io.lettuce.core.RedisFuture<String>> window = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      window.add(async.set("pre:" + i, value));
      if (window.size() == 2000 || i == n - 1) {
        for (var f : window) {
          try {
            f.get(30, java.util.concurrent.TimeUnit.SECONDS);
          } catch (Exception e) {
            throw new IllegalStateException("kv-demo: preloading key " + i + " failed: " + e, e);
          }
        }
        window.clear();
      }
    }
    long ms = Math.max(1, (System.nanoTime() - t0) / 1_000_000);
    out.printf("kv-demo: preloaded %d keys in %d ms (%d keys/s)%n", n, ms, n * 1000L / ms);
  }

  private ManagedProcess startNode(ProcessCluster procs, String name, int port, PodAddress manager) {
    return procs.start(AtollProcesses.atoll(name, List.of("kv", "--port", Integer.toString(port), "--manager",
        manager.toString(), "--event-loops", "2", "--drain-timeout", "60s", "--data-dir",
        o.dir().resolve(name + "-data").toString())));
  }

  private static Long handedOff(PodAddress a, RedisClient plain) {
    if (a == null) {
      return null;
    }
    try (StatefulRedisConnection<String, String> c = plain.connect(RedisURI.builder().withHost(a.host())
        .withPort(a.port()).withTimeout(Duration.ofMillis(500)).build())) {
      for (String line : c.sync().clusterInfo().split("\r\n")) {
        if (line.startsWith("atoll_keys_handed_off:")) {
          return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
        }
      }
    } catch (RuntimeException e) {
      // not up yet, or gone
    }
    return null;
  }

  private void awaitSlots(RedisCommands<String, String> watch, String what, Set<String> owners, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        SlotMap m = SlotMap.read(watch);
        if (m.allServedBy(owners) && m.counts().keySet().equals(owners)) {
          return;
        }
      } catch (RuntimeException e) {
        // retry
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("kv-demo: waited " + timeout.toSeconds() + " s for " + what + "; slots now: "
            + SlotMap.read(watch).counts());
      }
      LockSupport.parkNanos(100_000_000L); // polling pace
    }
  }

  private static String addr(int port) {
    return "127.0.0.1:" + port;
  }

  /**
   * Ports {@code p} such that {@code p} and {@code p + 10000} (the control port) are free, both
   * below Linux's ephemeral range (from 32768), so no outgoing connection takes one meanwhile.
   */
  public static int[] freePorts(int n) throws IOException {
    int[] ports = new int[n];
    int found = 0;
    java.util.Random r = new java.util.Random();
    for (int tries = 0; found < n && tries < 1000; tries++) {
      int p = 11000 + r.nextInt(11000);
      if (free(p) && free(p + 10000) && java.util.Arrays.stream(ports).noneMatch(x -> x == p)) {
        ports[found++] = p;
      }
    }
    if (found < n) {
      throw new IOException("no " + n + " free port pairs (p, p+10000) with p between 11000 and 22000");
    }
    return ports;
  }

  private static boolean free(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}

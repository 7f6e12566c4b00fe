package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.server.demo.AtollProcesses;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An {@code atoll kv} process killed with SIGKILL at random moments while a client writes
 * (counters, new keys, deletions), every other time around a BGREWRITEAOF, restarted on its data
 * directory each time: every write it
 * acknowledged is there after the restart, and nothing it acknowledged deleting came back. The
 * write in flight at the kill may or may not be there. {@code -Datoll.kv.crashes=50} for the long
 * version (the default, 6, keeps the build short).
 */
class KvCrashIT {
  static final int CRASHES = Integer.getInteger("atoll.kv.crashes", 6);

  @TempDir
  Path dir;
  ProcessCluster processes;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir, () -> processes);

  /** What the client was told, and what it cannot know (the one write in flight at the kill). */
  static final class Model {
    final Map<String, Long> counters = new HashMap<>();
    final Map<String, String> present = new HashMap<>();
    final Set<String> deleted = new HashSet<>();
    String inFlightKey;
  }

  @ParameterizedTest
  @ValueSource(strings = {"always", "everysec"})
  void everyAcknowledgedWriteSurvivesAKillAndNothingDeletedComesBack(String fsync) throws Exception {
    int port = freePort();
    int bus = freePort();
    Path data = dir.resolve("node");
    Random random = new Random(42);
    Model model = new Model();
    long seq = 0;
    int lost = 0;
    java.util.concurrent.atomic.AtomicInteger rewritesStarted = new java.util.concurrent.atomic.AtomicInteger();
    processes = new ProcessCluster(dir, Duration.ZERO);
    try {
      for (int round = 0; round <= CRASHES; round++) {
        ManagedProcess node = processes.start(AtollProcesses.atoll("kv-" + round, List.of("kv", "--port",
            Integer.toString(port), "--bus-port", Integer.toString(bus), "--data-dir", data.toString(),
            "--event-loops", "2", "--appendfsync", fsync)));
        node.awaitLog(java.util.regex.Pattern.compile("listening on"), Duration.ofSeconds(60));
        RedisClient client = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(port)
            .withTimeout(Duration.ofSeconds(5)).build());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
          RedisCommands<String, String> r = c.sync();
          if (round == 0) {
            assertThat(r.clusterAddSlotsRange(io.lettuce.core.Range.create(0, 16383))).isEqualTo("OK");
          }
          lost += check(r, model, round);
          if (round == CRASHES) {
            break;
          }
          // Write until the process is killed, at a random moment 100-700 ms from now.
          AtomicBoolean killed = new AtomicBoolean();
          long killAt = System.nanoTime() + Duration.ofMillis(100 + random.nextInt(600)).toNanos();
          boolean rewrite = round % 2 == 1; // every other kill falls around a rewrite of the log
          long rewriteAt = System.nanoTime() + (killAt - System.nanoTime()) * random.nextInt(100) / 100;
          Thread killer = Thread.ofPlatform().start(() -> {
            if (rewrite) {
              java.util.concurrent.locks.LockSupport.parkNanos(rewriteAt - System.nanoTime()); // the rewrite's moment
              try (StatefulRedisConnection<String, String> admin = client.connect()) {
                admin.sync().bgrewriteaof();
                rewritesStarted.incrementAndGet();
              } catch (RuntimeException e) {
                // the kill came first
              }
            }
            java.util.concurrent.locks.LockSupport.parkNanos(killAt - System.nanoTime()); // the kill's moment
            node.kill();
            killed.set(true);
          });
          while (true) {
            int what = random.nextInt(10);
            String key;
            try {
              if (what < 5) {
                key = "counter:" + random.nextInt(20);
                model.inFlightKey = key;
                long v = r.incr(key);
                model.counters.put(key, v);
              } else if (what < 9 || model.present.isEmpty()) {
                key = "key:" + (++seq);
                model.inFlightKey = key;
                String value = "v" + seq + "-" + "x".repeat(random.nextInt(200));
                r.set(key, value);
                model.present.put(key, value);
              } else {
                key = model.present.keySet().iterator().next();
                model.inFlightKey = key;
                r.del(key);
                model.present.remove(key);
                model.deleted.add(key);
              }
              model.inFlightKey = null;
            } catch (RuntimeException e) {
              break; // the kill: the write in flight has an unknown outcome
            }
          }
          killer.join();
          assertThat(killed).isTrue();
        } finally {
          client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        node.awaitExit(Duration.ofSeconds(10));
      }
    } finally {
      processes.close();
    }
    System.out.printf("appendfsync %s: %d kills (%d with a rewrite started before them), %d acknowledged writes"
        + " missing%n", fsync, CRASHES, rewritesStarted.get(), lost);
    assertThat(rewritesStarted).as("kills that fell around a BGREWRITEAOF").hasPositiveValue();
    assertThat(lost).as("acknowledged writes missing after a kill -9 (appendfsync %s)", fsync).isZero();
  }

  /** Counts acknowledged writes missing (and fails on a deleted key back); adopts the in-flight write's outcome. */
  private static int check(RedisCommands<String, String> r, Model m, int round) {
    int lost = 0;
    for (Map.Entry<String, Long> e : m.counters.entrySet()) {
      String v = r.get(e.getKey());
      long got = v == null ? 0 : Long.parseLong(v);
      boolean unsure = e.getKey().equals(m.inFlightKey);
      if (got < e.getValue()) {
        lost++;
      }
      assertThat(got).as("counter %s after restart %d", e.getKey(), round)
          .isLessThanOrEqualTo(e.getValue() + (unsure ? 1 : 0));
      e.setValue(got);
    }
    if (m.inFlightKey != null && m.inFlightKey.startsWith("counter:") && !m.counters.containsKey(m.inFlightKey)) {
      String v = r.get(m.inFlightKey);
      if (v != null) {
        m.counters.put(m.inFlightKey, Long.parseLong(v));
      }
    }
    for (Map.Entry<String, String> e : Map.copyOf(m.present).entrySet()) {
      String v = r.get(e.getKey());
      if (v == null && e.getKey().equals(m.inFlightKey)) {
        m.present.remove(e.getKey()); // its DEL was in flight, and applied
        m.deleted.add(e.getKey());
      } else if (!e.getValue().equals(v)) {
        lost++;
      }
    }
    for (String k : m.deleted) {
      if (!k.equals(m.inFlightKey)) {
        assertThat(r.exists(k)).as("%s, deleted and acknowledged, came back after restart %d", k, round).isZero();
      }
    }
    if (m.inFlightKey != null && m.inFlightKey.startsWith("key:") && !m.present.containsKey(m.inFlightKey)
        && !m.deleted.contains(m.inFlightKey)) {
      String v = r.get(m.inFlightKey);
      if (v != null) {
        m.present.put(m.inFlightKey, v); // its SET was in flight, and applied
      }
    }
    m.inFlightKey = null;
    return lost;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      return s.getLocalPort();
    }
  }
}

package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The append-only file across restarts of one node on the same data directory: what was written
 * comes back, with its expiry; what was deleted, expired, flushed or overwritten does not.
 */
class KvPersistenceTest {

  @TempDir
  Path dataDir;

  /** A restarted node keeps its address: its data directory says which node it is. */
  private final int port = TestPorts.free();
  private final int bus = TestPorts.free();

  private KvServer start(KvPersistence.Fsync fsync) {
    return KvServer.start(KvSettings.defaults(port, dataDir).withBusPort(bus)
        .withPersistence(new KvPersistence(true, fsync)));
  }

  @Test
  void everyKindOfWriteComesBackAfterARestartAndNothingDeletedDoes() throws Exception {
    long expiresAt;
    KvServer s = start(KvPersistence.Fsync.ALWAYS);
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")).isEqualTo("+OK\r\n");
      w.call("SET", "plain", "v1");
      w.call("SET", "plain", "v2"); // overwritten
      w.call("SET", "ttl", "t", "EX", "1000"); // a relative time: logged as an absolute one
      expiresAt = System.currentTimeMillis() + 1_000_000;
      w.call("INCR", "n");
      w.call("INCRBY", "n", "41");
      w.call("INCRBYFLOAT", "f", "1.5");
      w.call("APPEND", "s", "Hello");
      w.call("APPEND", "s", " World");
      w.call("SETRANGE", "s", "6", "Redis");
      w.call("HSET", "h", "a", "1", "b", "2");
      w.call("HINCRBY", "h", "b", "5");
      w.call("HDEL", "h", "a");
      w.call("SET", "gone", "x");
      w.call("DEL", "gone");
      w.call("SET", "brief", "x", "PX", "1");
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5))
          .until(() -> w.call("GET", "brief").equals("$-1\r\n")); // found expired: logged as a DEL
      w.call("SET", "brief", "back"); // a write after the expiry, which the replay must not lose
      w.call("SET", "p", "x", "EX", "100");
      w.call("PERSIST", "p");
      w.call("SET", "e", "x");
      w.call("PEXPIREAT", "e", Long.toString(expiresAt));
      w.call("SET", "{tag}a", "1");
      w.call("MSET", "{tag}b", "2", "{tag}c", "3");
      w.call("SET", "flushed", "x");
    }
    s.close();

    s = start(KvPersistence.Fsync.EVERYSEC);
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("GET", "plain")).isEqualTo("$2\r\nv2\r\n");
      assertThat(w.call("GET", "n")).isEqualTo("$2\r\n42\r\n");
      assertThat(w.call("GET", "f")).isEqualTo("$3\r\n1.5\r\n");
      assertThat(w.call("GET", "s")).isEqualTo("$11\r\nHello Redis\r\n");
      assertThat(w.call("HGETALL", "h")).isEqualTo("*2\r\n$1\r\nb\r\n$1\r\n7\r\n");
      assertThat(w.call("EXISTS", "gone")).isEqualTo(":0\r\n");
      assertThat(w.call("GET", "brief")).isEqualTo("$4\r\nback\r\n");
      assertThat(w.call("TTL", "p")).isEqualTo(":-1\r\n");
      long ttl = Long.parseLong(w.call("TTL", "ttl").trim().substring(1));
      assertThat(ttl).as("the expiry kept its absolute time").isBetween(900L, 1000L);
      assertThat(w.call("PEXPIRETIME", "e")).isEqualTo(":" + expiresAt + "\r\n");
      assertThat(w.call("MGET", "{tag}a", "{tag}b", "{tag}c")).isEqualTo("*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
      assertThat(w.call("INFO", "persistence")).contains("aof_enabled:1").contains("loading:0")
          .contains("aof_last_write_status:ok");
      assertThat(w.call("CONFIG", "GET", "appendfsync")).contains("everysec");
      assertThat(w.call("FLUSHALL")).isEqualTo("+OK\r\n");
      w.call("SET", "after", "flush");
    }
    s.close();

    s = start(KvPersistence.Fsync.NO);
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("DBSIZE")).as("FLUSHALL is kept too").isEqualTo(":1\r\n");
      assertThat(w.call("GET", "after")).isEqualTo("$5\r\nflush\r\n");
    } finally {
      s.close();
    }
  }

  @Test
  void aTailCutByACrashIsDroppedWithAWarningAndCorruptionElsewhereRefusesToStart() throws Exception {
    KvServer s = start(KvPersistence.Fsync.ALWAYS);
    try (Wire w = new Wire(s.port())) {
      w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
      w.call("SET", "a", "1");
      w.call("SET", "b", "2");
    }
    s.close();
    Path incr = dataDir.resolve("appendonlydir").resolve("appendonly.aof.1.incr.aof");
    byte[] whole = Files.readAllBytes(incr);
    byte[] torn = java.util.Arrays.copyOf(whole, whole.length - 5); // the last record, cut short
    Files.write(incr, torn);
    s = start(KvPersistence.Fsync.ALWAYS);
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("GET", "a")).isEqualTo("$1\r\n1\r\n");
      assertThat(w.call("EXISTS", "b")).as("its record was cut").isEqualTo(":0\r\n");
      w.call("SET", "c", "3"); // appended after the cut, not after the torn bytes
    }
    s.close();
    assertThat(KvAofCheck.check(dataDir.resolve("appendonlydir"), false)).allMatch(r -> r.problem() == null);

    // A crash of the machine may leave allocated blocks never written: zeros after the last record.
    byte[] withZeros = java.util.Arrays.copyOf(Files.readAllBytes(incr), Files.readAllBytes(incr).length + 4096);
    Files.write(incr, withZeros);
    assertThat(KvAofCheck.check(incr, false).getLast().cutTail()).isTrue();
    s = start(KvPersistence.Fsync.ALWAYS);
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("GET", "a")).isEqualTo("$1\r\n1\r\n");
      assertThat(w.call("GET", "c")).isEqualTo("$1\r\n3\r\n");
    }
    s.close();
    assertThat(Files.size(incr)).as("the zeros were cut").isEqualTo(withZeros.length - 4096);

    byte[] now = Files.readAllBytes(incr);
    now[20] ^= 0x10; // a byte inside the first record
    Files.write(incr, now);
    assertThatThrownBy(() -> start(KvPersistence.Fsync.ALWAYS)).hasMessageContaining("corrupt at offset")
        .hasMessageContaining("appendonly.aof.1.incr.aof").hasMessageContaining("kv-check-aof");
    List<KvAofCheck.FileReport> reports = KvAofCheck.check(dataDir.resolve("appendonlydir"), false);
    assertThat(reports.getLast().problem()).isNotNull();
    assertThat(reports.getLast().okUpTo()).isZero();
  }

  @Test
  void aDiskThatRefusesWritesGetsMisconfForWritesWhileReadsGoOnAndNoReplyClaimsAFailedWrite() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(Path.of("/dev/full")), "needs /dev/full (Linux)");
    KvServer s = start(KvPersistence.Fsync.EVERYSEC);
    try (Wire w = new Wire(s.port())) {
      w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
    }
    s.close();
    // The log's file now answers every write with ENOSPC, as a full disk does (and reads as empty).
    Path incr = dataDir.resolve("appendonlydir").resolve("appendonly.aof.1.incr.aof");
    Files.delete(incr);
    Files.createSymbolicLink(incr, Path.of("/dev/full"));
    s = start(KvPersistence.Fsync.EVERYSEC);
    try {
      try (Wire w = new Wire(s.port())) {
        assertThat(w.send("SET", "k", "v").closedByServer()).as("no reply for a write the log did not take").isTrue();
      }
      try (Wire w = new Wire(s.port())) {
        assertThat(w.call("SET", "k2", "v")).isEqualTo("-MISCONF Errors writing to the AOF file: No space left on device\r\n");
        assertThat(w.call("PING")).startsWith("-MISCONF");
        assertThat(w.call("GET", "k")).as("reads go on (the write is in memory, unacknowledged)").isEqualTo("$1\r\nv\r\n");
        assertThat(w.call("INFO", "persistence")).contains("aof_last_write_status:err");
      }
    } finally {
      s.close();
    }
  }

  @Test
  void aRewriteWhileWritersGoOnKeepsEveryKeyAtItsLastValueAndReplacesTheOldFiles() throws Exception {
    KvServer first = start(KvPersistence.Fsync.EVERYSEC);
    KvServer s = first;
    int keys = 30_000;
    java.util.Map<String, String> expected = new java.util.HashMap<>();
    try (Wire w = new Wire(s.port())) {
      w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
      StringBuilder batch = new StringBuilder();
      for (int i = 0; i < keys; i++) {
        batch.append("SET key:").append(i).append(" v").append(i).append("\r\n");
      }
      w.raw(batch.toString());
      for (int i = 0; i < keys; i++) {
        assertThat(w.reply()).isEqualTo("+OK\r\n");
      }
      w.call("HSET", "h", "a", "1", "b", "2");
      w.call("SET", "gone", "x");
      w.call("DEL", "gone");
      long[] counters = new long[50];
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      Thread writer = Thread.ofPlatform().start(() -> {
        try (Wire w2 = new Wire(first.port())) {
          for (int n = 0; !stop.get(); n++) {
            int c = n % counters.length;
            counters[c] = Long.parseLong(w2.call("INCR", "counter:" + c).trim().substring(1));
            w2.call("SET", "key:" + (n % keys), "w" + n);
          }
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      assertThat(w.call("BGREWRITEAOF")).isEqualTo("+Background append only file rewriting started\r\n");
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
          .until(() -> w.call("INFO", "persistence").contains("aof_rewrites:1"));
      assertThat(w.call("INFO", "persistence")).contains("aof_last_bgrewrite_status:ok");
      stop.set(true);
      writer.join();
      for (int c = 0; c < counters.length; c++) {
        if (counters[c] > 0) {
          expected.put("counter:" + c, Long.toString(counters[c]));
        }
      }
      for (int i = 0; i < keys; i++) {
        String r = w.call("GET", "key:" + i);
        expected.put("key:" + i, r.substring(r.indexOf("\r\n") + 2, r.length() - 2));
      }
    }
    s.close();
    Path dir = dataDir.resolve("appendonlydir");
    assertThat(Files.readString(dir.resolve("appendonly.aof.manifest")))
        .isEqualTo("file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n");
    assertThat(Files.exists(dir.resolve("appendonly.aof.1.incr.aof"))).as("the old increment, removed").isFalse();

    s = start(KvPersistence.Fsync.EVERYSEC);
    try (Wire w = new Wire(s.port())) {
      for (var e : expected.entrySet()) {
        assertThat(w.call("GET", e.getKey())).as(e.getKey())
            .isEqualTo("$" + e.getValue().length() + "\r\n" + e.getValue() + "\r\n");
      }
      assertThat(w.call("HGET", "h", "b")).isEqualTo("$1\r\n2\r\n");
      assertThat(w.call("EXISTS", "gone")).isEqualTo(":0\r\n");
      assertThat(w.call("DBSIZE")).isEqualTo(":" + (expected.size() + 1) + "\r\n");
    } finally {
      s.close();
    }
  }

  @Test
  void shutdownStopsTheNodeWithItsLogSyncedAndClosesTheConnectionWithoutAReply() throws Exception {
    KvServer s = start(KvPersistence.Fsync.NO);
    try (Wire w = new Wire(s.port())) {
      w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
      w.call("SET", "k", "kept");
      assertThat(w.call("SHUTDOWN", "BOGUS")).isEqualTo("-ERR syntax error\r\n");
      assertThat(w.call("SHUTDOWN", "ABORT")).isEqualTo("-ERR No shutdown in progress.\r\n");
      assertThat(w.send("SHUTDOWN", "NOSAVE").closedByServer()).isTrue();
    }
    s.closed().get(30, java.util.concurrent.TimeUnit.SECONDS);
    s = start(KvPersistence.Fsync.NO);
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("GET", "k")).isEqualTo("$4\r\nkept\r\n");
    } finally {
      s.close();
    }
  }
}

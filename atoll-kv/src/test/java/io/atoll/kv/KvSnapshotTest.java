package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SAVE, BGSAVE, LASTSAVE and SHUTDOWN SAVE on a node without an append-only file: the snapshot
 * holds the keys as they were when it was written, and a restart on the same data directory
 * loads it; one that is not whole refuses the start.
 */
class KvSnapshotTest {

  @TempDir
  Path dataDir;

  private final int port = TestPorts.free();
  private final int bus = TestPorts.free();

  /** Without an append-only file, as Redis with {@code appendonly no}. */
  private KvServer start() {
    return KvServer.start(KvSettings.defaults(port, dataDir).withBusPort(bus));
  }

  private static String field(String info, String name) {
    for (String line : info.split("\r\n")) {
      if (line.startsWith(name + ":")) {
        return line.substring(name.length() + 1);
      }
    }
    throw new AssertionError(name + " not in " + info);
  }

  @Test
  void switchingTheLogOnLoadsTheSnapshotAndWritesItsKeysIntoTheLog() throws Exception {
    KvServer s = start();
    try (Wire w = new Wire(s.port())) {
      w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
      w.call("SET", "kept", "1");
      w.call("HSET", "h", "f", "v");
      assertThat(w.call("SAVE")).isEqualTo("+OK\r\n");
    }
    s.close();
    KvSettings withLog = KvSettings.defaults(port, dataDir).withBusPort(bus).withPersistence(KvPersistence.EVERYSEC);
    s = KvServer.start(withLog);
    try (Wire w = new Wire(s.port())) {
      assertThat(field(w.call("INFO", "persistence"), "aof_enabled")).isEqualTo("1");
      assertThat(w.call("GET", "kept")).isEqualTo("$1\r\n1\r\n");
      w.call("SET", "later", "2");
    } finally {
      s.close();
    }
    java.nio.file.Files.delete(dataDir.resolve("dump.atoll")); // from now on the log alone holds them
    s = KvServer.start(withLog);
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("GET", "kept")).isEqualTo("$1\r\n1\r\n");
      assertThat(w.call("HGET", "h", "f")).isEqualTo("$1\r\nv\r\n");
      assertThat(w.call("GET", "later")).isEqualTo("$1\r\n2\r\n");
    } finally {
      s.close();
    }
  }

  @Test
  void saveKeepsTheKeysAsTheyWereAndARestartLoadsThem() throws Exception {
    long expiresAt = System.currentTimeMillis() + 1_000_000;
    KvServer s = start();
    try (Wire w = new Wire(s.port())) {
      w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
      long before = System.currentTimeMillis() / 1000;
      w.call("SET", "plain", "v");
      w.call("SET", "ttl", "t");
      w.call("PEXPIREAT", "ttl", Long.toString(expiresAt));
      w.call("HSET", "h", "a", "1", "b", "2");
      w.call("SET", "brief", "x", "PX", "1");
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> w.call("GET", "brief").equals("$-1\r\n"));
      assertThat(field(w.call("INFO", "persistence"), "rdb_changes_since_last_save")).isNotEqualTo("0");
      assertThat(w.call("SAVE")).isEqualTo("+OK\r\n");
      String info = w.call("INFO", "persistence");
      assertThat(field(info, "rdb_changes_since_last_save")).isEqualTo("0");
      assertThat(field(info, "rdb_last_bgsave_status")).isEqualTo("ok");
      assertThat(field(info, "rdb_saves")).isEqualTo("1");
      assertThat(field(info, "aof_enabled")).isEqualTo("0");
      long last = Long.parseLong(w.call("LASTSAVE").trim().substring(1));
      assertThat(last).isGreaterThanOrEqualTo(before);
      w.call("SET", "after", "the save"); // not in the snapshot, as with Redis' RDB
      w.call("DEL", "plain");
      assertThat(field(w.call("INFO", "persistence"), "rdb_changes_since_last_save")).isEqualTo("2");
    }
    s.close();
    assertThat(dataDir.resolve("dump.atoll")).exists();

    s = start();
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("GET", "plain")).isEqualTo("$1\r\nv\r\n");
      assertThat(w.call("PEXPIRETIME", "ttl")).isEqualTo(":" + expiresAt + "\r\n");
      assertThat(w.call("HGETALL", "h")).isEqualTo("*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
      assertThat(w.call("EXISTS", "brief")).isEqualTo(":0\r\n");
      assertThat(w.call("EXISTS", "after")).isEqualTo(":0\r\n");
      assertThat(w.call("DBSIZE")).isEqualTo(":3\r\n");
    } finally {
      s.close();
    }
  }

  @Test
  void bgsaveWritesInTheBackgroundWhileWritersGoOnAndShutdownSaveSavesBeforeStopping() throws Exception {
    KvServer s = start();
    try (Wire w = new Wire(s.port())) {
      w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
      for (int batch = 0; batch < 20; batch++) { // pipelined, a thousand at a time
        for (int i = batch * 1_000; i < (batch + 1) * 1_000; i++) {
          w.send("SET", "k" + i, "v" + i);
        }
        for (int i = 0; i < 1_000; i++) {
          assertThat(w.reply()).isEqualTo("+OK\r\n");
        }
      }
      assertThat(w.call("BGSAVE", "BOGUS")).isEqualTo("-ERR syntax error\r\n");
      assertThat(w.call("BGSAVE")).isEqualTo("+Background saving started\r\n");
      for (int i = 0; i < 1_000; i++) {
        w.call("SET", "k" + i, "new"); // writers are not stopped by the save
      }
      Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> field(w.call("INFO", "persistence"), "rdb_bgsave_in_progress").equals("0"));
      assertThat(field(w.call("INFO", "persistence"), "rdb_last_bgsave_status")).isEqualTo("ok");
      w.call("SET", "last", "written before SHUTDOWN SAVE");
      assertThat(w.call("SHUTDOWN", "SAVE", "NOSAVE")).isEqualTo("-ERR syntax error\r\n");
      assertThat(w.send("SHUTDOWN", "SAVE").closedByServer()).isTrue();
    }
    s.closed().get(30, java.util.concurrent.TimeUnit.SECONDS);

    s = start();
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("DBSIZE")).isEqualTo(":20001\r\n");
      assertThat(w.call("GET", "k5")).isEqualTo("$3\r\nnew\r\n");
      assertThat(w.call("GET", "k19999")).isEqualTo("$6\r\nv19999\r\n");
      assertThat(w.call("GET", "last")).isEqualTo("$28\r\nwritten before SHUTDOWN SAVE\r\n");
    } finally {
      s.close();
    }
  }

  @Test
  void aSnapshotThatIsNotWholeRefusesTheStartNamingTheFileAndTheOffset() throws Exception {
    KvServer s = start();
    try (Wire w = new Wire(s.port())) {
      w.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
      w.call("SET", "{t}a", "1");
      w.call("SET", "{t}b", "2");
      assertThat(w.call("SAVE")).isEqualTo("+OK\r\n");
    }
    s.close();
    Path dump = dataDir.resolve("dump.atoll");
    byte[] whole = Files.readAllBytes(dump);

    // cut at every point: never a start with some of the keys
    for (int cut = 1; cut < whole.length; cut++) {
      Files.write(dump, java.util.Arrays.copyOf(whole, cut));
      int at = cut;
      assertThatThrownBy(this::start).as("cut at %d", at).hasMessageContaining(dump.toString())
          .hasMessageContaining("damaged at offset");
    }
    byte[] flipped = whole.clone();
    flipped[whole.length / 2] ^= 0x20;
    Files.write(dump, flipped);
    assertThatThrownBy(this::start).hasMessageContaining("damaged at offset");

    Files.write(dump, whole);
    s = start();
    try (Wire w = new Wire(s.port())) {
      assertThat(w.call("MGET", "{t}a", "{t}b")).isEqualTo("*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    } finally {
      s.close();
    }
  }

  @Test
  void temporaryFilesThatACrashLeftAreRemovedAtStart() throws Exception {
    Path staleSave = dataDir.resolve("temp-4242.atoll");
    Path aofDir = dataDir.resolve("appendonlydir");
    Files.createDirectories(aofDir);
    Path staleRewrite = aofDir.resolve("temp-rewriteaof-7.aof");
    Files.writeString(staleSave, "half a snapshot");
    Files.writeString(staleRewrite, "half a base");
    KvServer s = KvServer.start(KvSettings.defaults(port, dataDir).withBusPort(bus)
        .withPersistence(new KvPersistence(true, KvPersistence.Fsync.EVERYSEC)));
    try {
      assertThat(staleSave).doesNotExist();
      assertThat(staleRewrite).doesNotExist();
    } finally {
      s.close();
    }
  }
}

package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * MULTI, EXEC, DISCARD, WATCH and UNWATCH, differentially: the same sequences sent to a real {@code redis-server}
 * in cluster mode (owning every slot) and to an Atoll KV node, every reply compared byte for byte.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KvTransactionsTest {
  @TempDir
  static Path dir;

  private RedisServer redis;
  private KvServer atoll;
  private Wire toRedis;
  private Wire toAtoll;
  private Wire toRedis2;
  private Wire toAtoll2;

  @BeforeAll
  void start() throws Exception {
    redis = RedisServer.start(dir, "redis", "--enable-debug-command", "yes");
    int redisPort = redis.port;
    toRedis = new Wire(redisPort);
    assertThat(toRedis.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")).isEqualTo("+OK\r\n");
    await().atMost(Duration.ofSeconds(20)).until(() -> toRedis.call("CLUSTER", "INFO").contains("cluster_state:ok"));
    atoll = KvServer.start(KvSettings.defaults(0, dir.resolve("atoll")));
    toAtoll = new Wire(atoll.port());
    assertThat(toAtoll.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")).isEqualTo("+OK\r\n");
    toRedis2 = new Wire(redisPort);
    toAtoll2 = new Wire(atoll.port());
  }

  @AfterAll
  void stop() throws Exception {
    if (toAtoll2 != null) {
      toAtoll2.close();
      toRedis2.close();
    }
    if (toAtoll != null) {
      toAtoll.close();
      atoll.close();
    }
    if (toRedis != null) {
      toRedis.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  @BeforeEach
  void empty() throws Exception {
    both("UNWATCH");
    both("FLUSHALL");
  }

  /** Sends {@code args} to both; their replies must be the same bytes. Returns Atoll's. */
  private String both(String... args) throws IOException {
    String expected = toRedis.call(args);
    String got = toAtoll.call(args);
    assertThat(got).as("reply to %s", String.join(" ", args)).isEqualTo(expected);
    return got;
  }

  @Test
  void queuedCommandsRunInOrderAtExec() throws Exception {
    assertThat(both("MULTI")).isEqualTo("+OK\r\n");
    assertThat(both("SET", "{t}a", "1")).isEqualTo("+QUEUED\r\n");
    both("INCR", "{t}a");
    both("INCR", "{t}b");
    both("GET", "{t}a");
    both("SET", "{t}a", "x", "BOGUS"); // a syntax error is found when it runs, as in Redis
    both("INCR", "{t}s");
    both("HSET", "{t}h", "f", "v");
    both("GET", "{t}h"); // the wrong type, at run time
    both("CLUSTER", "KEYSLOT", "t");
    both("EXEC");
    both("GET", "{t}a");
    both("MULTI");
    both("EXEC");
  }

  @Test
  void errorsWhileQueuedAbortTheExecAndMisuseIsRefused() throws Exception {
    both("EXEC");
    both("DISCARD");
    both("MULTI");
    both("SET", "{t}a", "1");
    both("MULTI"); // nested: refused, the transaction goes on
    both("EXEC");
    both("MULTI");
    both("SET", "{t}a", "2");
    both("NOSUCHCOMMAND", "x");
    both("EXEC");
    both("GET", "{t}a");
    both("MULTI");
    both("GET");
    both("EXEC");
    both("MULTI");
    both("SET", "{t}a", "3");
    both("DISCARD");
    both("GET", "{t}a");
  }

  @Test
  void keysOfOneTransactionAreInOneSlot() throws Exception {
    both("MULTI");
    both("SET", "a", "1");
    both("SET", "b", "2"); // another slot: refused at EXEC, nothing run
    both("EXEC");
    both("EXISTS", "a");
    both("MULTI");
    both("MSET", "a", "1", "b", "2"); // one command across slots: refused at once
    both("EXEC");
  }

  @Test
  void aSlotChangingClusterCommandBesideKeyedOnesIsRefusedAtExec() throws Exception {
    // Atoll's own limit (Redis runs it): it could deadlock with the slot's lock EXEC holds.
    toAtoll.call("MULTI");
    toAtoll.call("SET", "{t}a", "1");
    toAtoll.call("CLUSTER", "SETSLOT", "0", "STABLE");
    assertThat(toAtoll.call("EXEC")).startsWith("-ERR CLUSTER commands in a transaction with keyed commands");
    assertThat(toAtoll.call("EXISTS", "{t}a")).isEqualTo(":0\r\n");
    toAtoll.call("MULTI");
    toAtoll.call("CLUSTER", "SETSLOT", "0", "STABLE");
    toAtoll.call("CLUSTER", "KEYSLOT", "x");
    assertThat(toAtoll.call("EXEC")).isEqualTo("*2\r\n+OK\r\n:16287\r\n");
  }

  @Test
  void valueDigestsAreRedisOwn() throws Exception {
    // What redis-cli --cluster fix compares when an interrupted MIGRATE left a key on both sides.
    both("SET", "{d}s", "hello");
    both("SET", "{d}n", "12345");
    both("SET", "{d}e", "v", "EX", "100");
    both("HSET", "{d}h", "a", "1", "b", "2", "c", "");
    both("DEBUG", "DIGEST-VALUE", "{d}s", "{d}n", "{d}e", "{d}h", "{d}missing");
    both("HSET", "{d}h2", "c", "", "b", "2", "a", "1"); // the same fields, another order
    both("DEBUG", "DIGEST-VALUE", "{d}h2");
  }

  @Test
  void transactionsThatTouchEverySlotWhileHoldingTheirOwnDoNotDeadlock() throws Exception {
    // Each holds its slot's lock through EXEC while FLUSHALL takes every slot's lock in turn.
    java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      List<java.util.concurrent.Future<?>> runs = new ArrayList<>();
      for (String tag : List.of("{a}", "{b}")) {
        runs.add(two.submit(() -> {
          try (Wire w = new Wire(atoll.port())) {
            for (int i = 0; i < 300; i++) {
              w.call("MULTI");
              w.call("SET", tag + "k", Integer.toString(i));
              w.call("FLUSHALL");
              w.call("SET", tag + "k", "after");
              assertThat(w.call("EXEC")).isEqualTo("*3\r\n+OK\r\n+OK\r\n+OK\r\n");
            }
          }
          return null;
        }));
      }
      for (java.util.concurrent.Future<?> f : runs) {
        f.get(60, java.util.concurrent.TimeUnit.SECONDS); // a deadlock never ends: this fails it
      }
    } finally {
      two.shutdownNow();
    }
  }

  /** Sends {@code args} to both on their second connections; replies compared. */
  private String other(String... args) throws IOException {
    String expected = toRedis2.call(args);
    String got = toAtoll2.call(args);
    assertThat(got).as("reply to %s (second connection)", String.join(" ", args)).isEqualTo(expected);
    return got;
  }

  @Test
  void watchedKeysChangedByAnyoneAbortTheExec() throws Exception {
    both("SET", "{w}a", "1");
    both("WATCH", "{w}a");
    other("SET", "{w}a", "2"); // another client changes it
    both("MULTI");
    both("INCR", "{w}a");
    assertThat(both("EXEC")).isEqualTo("*-1\r\n");
    both("GET", "{w}a");
    both("WATCH", "{w}a"); // untouched: the transaction runs
    both("MULTI");
    both("INCR", "{w}a");
    both("EXEC");
    both("WATCH", "{w}a");
    both("SET", "{w}a", "5"); // the watcher's own change counts too
    both("MULTI");
    both("INCR", "{w}a");
    both("EXEC");
    both("WATCH", "{w}missing");
    other("SET", "{w}missing", "now"); // a key that did not exist, created
    both("MULTI");
    both("GET", "{w}missing");
    both("EXEC");
    both("WATCH", "{w}a");
    both("UNWATCH");
    other("SET", "{w}a", "9");
    both("MULTI");
    both("GET", "{w}a");
    both("EXEC");
  }

  @Test
  void onlyRealChangesCountAsRedisCountsThem() throws Exception {
    both("HSET", "{w}h", "f", "1");
    both("WATCH", "{w}h", "{w}none");
    other("DEL", "{w}none"); // deletes nothing
    other("HSETNX", "{w}h", "f", "2"); // the field exists: no change
    other("HDEL", "{w}h", "nosuchfield");
    both("SET", "{w}p", "1");
    both("WATCH", "{w}p");
    other("GETEX", "{w}p", "PERSIST"); // no TTL to remove: no change
    both("MULTI");
    both("HGET", "{w}h", "f");
    both("EXEC");
    both("WATCH", "{w}h");
    other("HINCRBY", "{w}h", "f", "1");
    both("MULTI");
    both("HGET", "{w}h", "f");
    both("EXEC");
    both("WATCH", "{w}h", "{w}none");
    other("FLUSHALL"); // a watched key that existed: a change
    both("MULTI");
    both("PING");
    both("EXEC");
    both("WATCH", "{w}none");
    other("FLUSHALL"); // none of the watched keys existed: no change
    both("MULTI");
    both("PING");
    both("EXEC");
  }

  @Test
  void watchIsRefusedInsideMultiAndSurvivesAnExecWithoutMulti() throws Exception {
    both("SET", "{w}a", "1");
    both("MULTI");
    both("WATCH", "{w}a");
    both("EXEC");
    both("WATCH", "{w}a");
    both("EXEC"); // no transaction: the watch stays
    other("SET", "{w}a", "2");
    both("MULTI");
    both("GET", "{w}a");
    both("EXEC");
    both("WATCH", "{w}a");
    both("MULTI");
    both("UNWATCH"); // queued
    both("GET", "{w}a");
    both("DISCARD"); // ends the watch
    other("SET", "{w}a", "3");
    both("MULTI");
    both("GET", "{w}a");
    both("EXEC");
    both("WATCH", "{w}a", "{x}b"); // keys of two slots
    both("WATCH");
  }

  @Test
  void aWatchedKeyThatExpiresAbortsTheExec() throws Exception {
    both("SET", "{w}t", "1", "PX", "300");
    both("WATCH", "{w}t");
    await().atMost(Duration.ofSeconds(10)).until(() -> toRedis2.call("PTTL", "{w}t").equals(":-2\r\n")
        && toAtoll2.call("PTTL", "{w}t").equals(":-2\r\n"));
    both("MULTI");
    both("GET", "{w}t");
    assertThat(both("EXEC")).isEqualTo("*-1\r\n");
  }

  /**
   * Check-and-set as applications write it (WATCH, read, MULTI, write, EXEC; again if it aborted),
   * from four clients at once through Jedis: no increment is lost, and retries happened.
   */
  @Test
  void checkAndSetFromManyClientsLosesNoIncrement() throws Exception {
    int clients = 4;
    int each = 250;
    java.util.concurrent.atomic.AtomicInteger retries = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(clients);
    try {
      List<java.util.concurrent.Future<?>> runs = new ArrayList<>();
      for (int t = 0; t < clients; t++) {
        runs.add(pool.submit(() -> {
          try (redis.clients.jedis.Jedis j = new redis.clients.jedis.Jedis("127.0.0.1", atoll.port(), 10_000)) {
            for (int i = 0; i < each; i++) {
              while (true) {
                j.watch("{cas}counter");
                String v = j.get("{cas}counter");
                redis.clients.jedis.Transaction tx = j.multi();
                tx.set("{cas}counter", Integer.toString(v == null ? 1 : Integer.parseInt(v) + 1));
                if (tx.exec() != null) {
                  break;
                }
                retries.incrementAndGet();
              }
            }
          }
          return null;
        }));
      }
      for (java.util.concurrent.Future<?> f : runs) {
        f.get(120, java.util.concurrent.TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(toAtoll.call("GET", "{cas}counter")).isEqualTo("$4\r\n" + clients * each + "\r\n");
    assertThat(retries.get()).as("transactions aborted by a change and tried again").isPositive();
  }

  @Test
  void randomTransactionsAnswerAsRedis() throws Exception {
    Random random = new Random(5);
    String[][] commands = {{"SET", "{r}k", "v"}, {"INCR", "{r}n"}, {"GET", "{r}k"}, {"DEL", "{r}k"}, {"APPEND", "{r}k",
        "x"}, {"INCR", "{r}k"}, {"HSET", "{r}h", "f", "1"}, {"HINCRBY", "{r}h", "f", "2"}, {"GET", "{r}h"},
        {"EXISTS", "{r}k", "{r}n"}, {"EXPIRE", "{r}n", "100"}, {"TTL", "{r}n"}, {"GET"}, {"BOGUS"}, {"MULTI"},
        {"SET", "{q}other", "1"}, {"PING"}, {"ECHO", "hi"}, {"STRLEN", "{r}k"}};
    String[][] touches = {{"SET", "{r}k", "o"}, {"DEL", "{r}k"}, {"INCR", "{r}n"}, {"HSETNX", "{r}h", "f", "0"},
        {"HDEL", "{r}h", "g"}, {"EXPIRE", "{r}n", "50"}, {"PERSIST", "{r}n"}, {"GET", "{r}k"}, {"DEL", "{r}none"}};
    String[] watchable = {"{r}k", "{r}n", "{r}h", "{r}none"};
    for (int t = 0; t < 300; t++) {
      if (random.nextInt(3) == 0) {
        both("WATCH", watchable[random.nextInt(watchable.length)]);
      }
      if (random.nextInt(4) == 0) {
        other(touches[random.nextInt(touches.length)]); // another client, before or during the queue
      }
      both("MULTI");
      int n = random.nextInt(6);
      for (int i = 0; i < n; i++) {
        String[] c = commands[random.nextInt(commands.length)];
        both(c);
        if (random.nextInt(8) == 0) {
          other(touches[random.nextInt(touches.length)]);
        }
      }
      both(random.nextInt(10) == 0 ? "DISCARD" : "EXEC");
    }
  }
}

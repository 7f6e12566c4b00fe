package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** One node owning every slot, checked byte for byte over a raw socket. */
class KvCommandsTest extends SingleNodeTest {
  @Test
  void unknownCommandsAndWrongArityGetRedisExactTexts() throws Exception {
    assertThat(w.call("FOO", "bar", "baz"))
        .isEqualTo("-ERR unknown command 'FOO', with args beginning with: 'bar' 'baz' \r\n");
    assertThat(w.call("GET")).isEqualTo("-ERR wrong number of arguments for 'get' command\r\n");
    assertThat(w.call("CLUSTER", "NOPE")).isEqualTo("-ERR unknown subcommand 'NOPE'. Try CLUSTER HELP.\r\n");
    assertThat(w.call("CLUSTER", "KEYSLOT"))
        .isEqualTo("-ERR wrong number of arguments for 'cluster|keyslot' command\r\n");
    assertThat(w.call("SET", "k", "v", "BOGUS")).isEqualTo("-ERR syntax error\r\n");
  }

  @Test
  void setOptionsFollowRedis() throws Exception {
    assertThat(w.call("SET", "k", "1", "NX")).isEqualTo("+OK\r\n");
    assertThat(w.call("SET", "k", "2", "NX")).isEqualTo("$-1\r\n");
    assertThat(w.call("SET", "k", "3", "XX", "GET")).isEqualTo("$1\r\n1\r\n");
    assertThat(w.call("SET", "k", "4", "EX", "100")).isEqualTo("+OK\r\n");
    assertThat(w.call("SET", "k", "5", "KEEPTTL")).isEqualTo("+OK\r\n");
    assertThat(w.call("TTL", "k")).isEqualTo(":100\r\n");
    assertThat(w.call("SET", "k", "6", "EX", "0")).isEqualTo("-ERR invalid expire time in 'set' command\r\n");
    assertThat(w.call("SET", "k", "6", "NX", "XX")).isEqualTo("-ERR syntax error\r\n");
    assertThat(w.call("GETEX", "k", "PERSIST")).isEqualTo("$1\r\n5\r\n");
    assertThat(w.call("TTL", "k")).isEqualTo(":-1\r\n");
    assertThat(w.call("GETDEL", "k")).isEqualTo("$1\r\n5\r\n");
    assertThat(w.call("EXISTS", "k")).isEqualTo(":0\r\n");
    assertThat(w.call("TTL", "k")).isEqualTo(":-2\r\n");
  }

  @Test
  void stringArithmeticAndRanges() throws Exception {
    assertThat(w.call("INCR", "n")).isEqualTo(":1\r\n");
    assertThat(w.call("INCRBY", "n", "41")).isEqualTo(":42\r\n");
    assertThat(w.call("DECRBY", "n", "2")).isEqualTo(":40\r\n");
    assertThat(w.call("INCRBYFLOAT", "n", "0.1")).isEqualTo("$4\r\n40.1\r\n");
    assertThat(w.call("INCR", "n")).isEqualTo("-ERR value is not an integer or out of range\r\n");
    assertThat(w.call("SET", "big", "9223372036854775807")).isEqualTo("+OK\r\n");
    assertThat(w.call("INCR", "big")).isEqualTo("-ERR increment or decrement would overflow\r\n");
    assertThat(w.call("APPEND", "s", "Hello")).isEqualTo(":5\r\n");
    assertThat(w.call("APPEND", "s", " World")).isEqualTo(":11\r\n");
    assertThat(w.call("GETRANGE", "s", "-5", "-1")).isEqualTo("$5\r\nWorld\r\n");
    assertThat(w.call("SETRANGE", "s", "6", "Redis")).isEqualTo(":11\r\n");
    assertThat(w.call("GET", "s")).isEqualTo("$11\r\nHello Redis\r\n");
    assertThat(w.call("STRLEN", "s")).isEqualTo(":11\r\n");
  }

  @Test
  void typesAreChecked() throws Exception {
    w.call("HSET", "h", "f", "v");
    assertThat(w.call("GET", "h")).isEqualTo("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    assertThat(w.call("TYPE", "h")).isEqualTo("+hash\r\n");
    assertThat(w.call("TYPE", "none")).isEqualTo("+none\r\n");
  }

  @Test
  void hashes() throws Exception {
    assertThat(w.call("HSET", "h", "a", "1", "b", "2")).isEqualTo(":2\r\n");
    assertThat(w.call("HSET", "h", "a", "3")).isEqualTo(":0\r\n");
    assertThat(w.call("HMGET", "h", "a", "x")).isEqualTo("*2\r\n$1\r\n3\r\n$-1\r\n");
    assertThat(w.call("HINCRBY", "h", "b", "5")).isEqualTo(":7\r\n");
    assertThat(w.call("HLEN", "h")).isEqualTo(":2\r\n");
    assertThat(w.call("HEXISTS", "h", "b")).isEqualTo(":1\r\n");
    assertThat(w.call("HDEL", "h", "a", "b", "c")).isEqualTo(":2\r\n");
    assertThat(w.call("EXISTS", "h")).isEqualTo(":0\r\n");
  }

  @Test
  void multiKeyCommandsNeedOneSlot() throws Exception {
    assertThat(w.call("MSET", "a", "1", "b", "2"))
        .isEqualTo("-CROSSSLOT Keys in request don't hash to the same slot\r\n");
    assertThat(w.call("MSET", "{t}a", "1", "{t}b", "2")).isEqualTo("+OK\r\n");
    assertThat(w.call("MSETNX", "{t}a", "9", "{t}c", "3")).isEqualTo(":0\r\n");
    assertThat(w.call("MGET", "{t}a", "{t}b", "{t}c")).isEqualTo("*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n");
    assertThat(w.call("DEL", "{t}a", "{t}b", "{t}c")).isEqualTo(":2\r\n");
  }

  @Test
  void keysExpireLazilyAndActively() throws Exception {
    w.call("SET", "lazy", "v", "PX", "30");
    await().atMost(Duration.ofSeconds(5)).until(() -> w.call("GET", "lazy").equals("$-1\r\n"));
    for (int i = 0; i < 200; i++) {
      w.call("SET", "active:" + i, "v", "PX", "50");
    }
    w.call("SET", "stays", "v");
    // DBSIZE counts keys not yet removed: only the active cycle brings it down, no key is touched.
    await().atMost(Duration.ofSeconds(10)).until(() -> w.call("DBSIZE").equals(":1\r\n"));
    assertThat(w.call("EXPIRE", "stays", "-1")).isEqualTo(":1\r\n");
    assertThat(w.call("EXISTS", "stays")).isEqualTo(":0\r\n");
  }

  @Test
  void scanVisitsEveryKeyOnce() throws Exception {
    Set<String> want = new HashSet<>();
    for (int i = 0; i < 500; i++) {
      w.call("SET", "scan:" + i, "v");
      want.add("scan:" + i);
    }
    Set<String> seen = new HashSet<>();
    String cursor = "0";
    int calls = 0;
    do {
      String r = w.call("SCAN", cursor, "MATCH", "scan:*", "COUNT", "50");
      String[] lines = r.split("\r\n");
      cursor = lines[2];
      for (int i = 5; i < lines.length; i += 2) {
        assertThat(seen.add(lines[i])).as("seen once: %s", lines[i]).isTrue();
      }
      calls++;
    } while (!cursor.equals("0") && calls < 10_000);
    assertThat(seen).isEqualTo(want);
  }

  @Test
  void helloSwitchesToResp3() throws Exception {
    try (Wire w3 = new Wire(server.port())) {
      String hello = w3.call("HELLO", "3");
      assertThat(hello).startsWith("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n").contains("$4\r\nmode\r\n$7\r\ncluster\r\n");
      assertThat(w3.call("GET", "missing")).isEqualTo("_\r\n");
      w3.call("HSET", "h3", "f", "v");
      assertThat(w3.call("HGETALL", "h3")).isEqualTo("%1\r\n$1\r\nf\r\n$1\r\nv\r\n");
      assertThat(w3.call("HELLO", "4")).isEqualTo("-NOPROTO unsupported protocol version\r\n");
    }
  }

  @Test
  void malformedInputClosesOnlyThatConnection() throws Exception {
    try (Wire bad = new Wire(server.port())) {
      bad.raw("*1\r\n+PING\r\n");
      assertThat(bad.reply()).isEqualTo("-ERR Protocol error: expected '$', got '+'\r\n");
      assertThat(bad.closedByServer()).isTrue();
    }
    try (Wire big = new Wire(server.port())) {
      big.raw("*1\r\n$999999999999\r\n");
      assertThat(big.reply()).isEqualTo("-ERR Protocol error: invalid bulk length\r\n");
      assertThat(big.closedByServer()).isTrue();
    }
    assertThat(w.call("PING")).isEqualTo("+PONG\r\n");
  }

  @Test
  void pipelinedRequestsAnswerInOrder() throws Exception {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 1000; i++) {
      sb.append("*3\r\n$3\r\nSET\r\n$5\r\npipe").append(i % 10).append("\r\n$1\r\n").append(i % 10).append("\r\n");
      sb.append("PING\r\n"); // inline, mixed in
    }
    w.raw(sb.toString());
    for (int i = 0; i < 1000; i++) {
      assertThat(w.reply()).isEqualTo("+OK\r\n");
      assertThat(w.reply()).isEqualTo("+PONG\r\n");
    }
  }

  @Test
  void serverAndClientCommands() throws Exception {
    w.call("SET", "x", "1");
    String info = w.call("INFO");
    assertThat(info).contains("cluster_enabled:1\r\n").contains("db0:keys=1,").contains("# Memory")
        .contains("# Stats");
    assertThat(w.call("CONFIG", "GET", "maxmemory")).isEqualTo("*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n");
    assertThat(w.call("CLIENT", "SETNAME", "me")).isEqualTo("+OK\r\n");
    assertThat(w.call("CLIENT", "GETNAME")).isEqualTo("$2\r\nme\r\n");
    assertThat(w.call("CLIENT", "ID")).matches(":\\d+\r\n");
    assertThat(w.call("COMMAND", "COUNT")).matches(":\\d+\r\n");
    assertThat(w.call("ECHO", "hi")).isEqualTo("$2\r\nhi\r\n");
    assertThat(w.call("DBSIZE")).isEqualTo(":1\r\n");
    assertThat(w.call("CLUSTER", "KEYSLOT", "{user1000}.following")).isEqualTo(":3443\r\n");
    assertThat(w.call("CLUSTER", "COUNTKEYSINSLOT", "16384")).isEqualTo("-ERR Invalid slot\r\n");
    try (Wire q = new Wire(server.port())) {
      assertThat(q.call("QUIT")).isEqualTo("+OK\r\n");
      assertThat(q.closedByServer()).isTrue();
    }
  }
}

package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Requests built to hurt the node: each gets a clear error, quickly, and the node stays up. */
class KvAbuseTest extends SingleNodeTest {
  @Test
  void setrangeAtAHugeOffsetIsRefusedNotAnOverflow() throws Exception {
    String tooBig = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n";
    assertThat(w.call("SETRANGE", "k", "9223372036854775807", "x")).isEqualTo(tooBig);
    assertThat(w.call("SETRANGE", "k", "9223372036854775800", "xxxxxxxxxx")).isEqualTo(tooBig);
    assertThat(w.call("SET", "k", "abc")).isEqualTo("+OK\r\n");
    assertThat(w.call("SETRANGE", "k", "9223372036854775807", "x")).isEqualTo(tooBig);
    assertThat(w.call("SETRANGE", "k", "1", "X")).isEqualTo(":3\r\n");
    assertThat(w.call("GETRANGE", "k", "-9223372036854775808", "9223372036854775807")).isEqualTo("$3\r\naXc\r\n");
  }

  @Test
  void manyOverlappingSlotRangesAreRefusedBeforeTheyExpand() throws Exception {
    // 30000 copies of the whole range would be 491 million slots if expanded before checking.
    List<String> args = new ArrayList<>(List.of("CLUSTER", "DELSLOTSRANGE"));
    for (int i = 0; i < 30_000; i++) {
      args.add("0");
      args.add("16383");
    }
    String[] request = args.toArray(new String[0]);
    assertTimeoutPreemptively(Duration.ofSeconds(10), () ->
        assertThat(w.call(request)).isEqualTo("-ERR Slot 0 specified multiple times\r\n"));
    request[1] = "ADDSLOTSRANGE";
    assertThat(w.call(request)).isEqualTo("-ERR Slot 0 is already busy\r\n");
    List<String> migrate = new ArrayList<>(List.of("MIGRATE", "127.0.0.1", "1", "", "0", "100", "SLOTSRANGE"));
    migrate.addAll(args.subList(2, args.size()));
    assertThat(w.call(migrate.toArray(new String[0]))).isEqualTo("-ERR Slot 0 specified multiple times\r\n");
    assertThat(w.call("CLUSTER", "COUNTKEYSINSLOT", "0")).isEqualTo(":0\r\n");
  }

  @Test
  void errorTextsAndOrderAsRedis() throws Exception {
    // each compared with redis-server 7 in cluster mode
    assertThat(w.call("SET", "k", "v", "EX", "10", "EX", "20")).isEqualTo("+OK\r\n");
    assertThat(w.call("SET", "k", "v", "EX", "10", "PX", "20")).isEqualTo("-ERR syntax error\r\n");
    assertThat(w.call("GETEX", "nokey", "EX", "0")).isEqualTo("$-1\r\n");
    assertThat(w.call("GETEX", "k", "EX", "0")).isEqualTo("-ERR invalid expire time in 'getex' command\r\n");
    assertThat(w.call("GETEX", "k", "PERSIST", "EX", "10")).isEqualTo("-ERR syntax error\r\n");
    assertThat(w.call("HINCRBYFLOAT", "h", "f", "inf")).isEqualTo("-ERR value is NaN or Infinity\r\n");
    assertThat(w.call("CLUSTER", "COUNTKEYSINSLOT", "abc"))
        .isEqualTo("-ERR value is not an integer or out of range\r\n");
    assertThat(w.call("CLUSTER", "COUNTKEYSINSLOT", "16384")).isEqualTo("-ERR Invalid slot\r\n");
    assertThat(w.call("CLUSTER", "GETKEYSINSLOT", "0", "abc"))
        .isEqualTo("-ERR value is not an integer or out of range\r\n");
    assertThat(w.call("CLUSTER", "GETKEYSINSLOT", "0", "-1")).isEqualTo("-ERR Invalid slot or number of keys\r\n");
    assertThat(w.call("CLUSTER", "MEET", "127.0.0.1", "abc")).isEqualTo("-ERR Invalid TCP base port specified: abc\r\n");
    assertThat(w.call("CLUSTER", "MEET", "127.0.0.1", "7000", "abc"))
        .isEqualTo("-ERR Invalid TCP bus port specified: abc\r\n");
    assertThat(w.call("CLUSTER", "MEET", "127.0.0.1", "70000"))
        .isEqualTo("-ERR Invalid node address specified: 127.0.0.1:70000\r\n");
    assertThat(w.call("CLUSTER", "ADDSLOTSRANGE", "0", "10", "5", "20")).isEqualTo("-ERR Slot 0 is already busy\r\n");
    // MIGRATE of keys that do not exist answers NOKEY without connecting (port 1 has no listener)
    assertThat(w.call("MIGRATE", "127.0.0.1", "1", "nokey", "0", "100")).isEqualTo("+NOKEY\r\n");
    assertThat(w.call("MIGRATE", "127.0.0.1", "1", "", "0", "100", "KEYS", "nokey")).isEqualTo("+NOKEY\r\n");
  }

  @Test
  void incrbyfloatPrintsWhatRedisPrints() throws Exception {
    // Redis adds in long double and prints 17 decimals, trailing zeros cut (compared with redis-server 7)
    assertThat(w.call("INCRBYFLOAT", "f", "0.1")).isEqualTo("$3\r\n0.1\r\n");
    assertThat(w.call("INCRBYFLOAT", "f", "0.2")).isEqualTo("$3\r\n0.3\r\n");
    assertThat(w.call("INCRBYFLOAT", "f", "1e-20")).isEqualTo("$3\r\n0.3\r\n");
    assertThat(w.call("INCRBYFLOAT", "f", "-0.3")).isEqualTo("$1\r\n0\r\n");
    assertThat(w.call("INCRBYFLOAT", "f", "3.0e3")).isEqualTo("$4\r\n3000\r\n");
    assertThat(w.call("HINCRBYFLOAT", "h", "f", "10.5")).isEqualTo("$4\r\n10.5\r\n");
    assertThat(w.call("HINCRBYFLOAT", "h", "f", "5.0e3")).isEqualTo("$6\r\n5010.5\r\n");
    assertThat(w.call("HINCRBYFLOAT", "h", "f", "-0.1")).isEqualTo("$6\r\n5010.4\r\n");
    assertTimeoutPreemptively(Duration.ofSeconds(5), () ->
        assertThat(w.call("INCRBYFLOAT", "f", "1e-2000000000")).isEqualTo("$4\r\n3000\r\n"));
    assertThat(w.call("INCRBYFLOAT", "f", "1.7e308")).startsWith("$309\r\n17");
    assertThat(w.call("INCRBYFLOAT", "f", "1.7e308")).isEqualTo("-ERR increment would produce NaN or Infinity\r\n");
  }

  @Test
  void aPathologicalGlobDoesNotStallTheNode() throws Exception {
    String key = "a".repeat(3000);
    assertThat(w.call("SET", key, "v")).isEqualTo("+OK\r\n");
    String pattern = "*a".repeat(30) + "*b";
    assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
      assertThat(w.call("KEYS", pattern)).isEqualTo("*0\r\n");
      assertThat(w.call("SCAN", "0", "MATCH", pattern, "COUNT", "100000")).isEqualTo("*2\r\n$1\r\n0\r\n*0\r\n");
    });
  }
}

package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Two nodes: the redirect texts around a migrating slot, MIGRATE KEYS, and the whole-slot MIGRATE. */
class KvRedirectTest {

  @Test
  void askMovedTryagainAndMigrations() throws Exception {
    try (KvNodes nodes = new KvNodes(2); Wire a = new Wire(nodes.get(0).port()); Wire b = new Wire(nodes.get(1).port())) {
      int pa = nodes.get(0).port();
      int pb = nodes.get(1).port();
      assertThat(a.call("GET", "k")).isEqualTo("-CLUSTERDOWN Hash slot not served\r\n");
      assertThat(a.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")).isEqualTo("+OK\r\n");
      assertThat(a.call("CLUSTER", "ADDSLOTS", "5")).isEqualTo("-ERR Slot 5 is already busy\r\n");
      assertThat(b.call("CLUSTER", "MEET", "127.0.0.1", String.valueOf(pa), String.valueOf(nodes.get(0).busPort())))
          .isEqualTo("+OK\r\n");
      await().atMost(Duration.ofSeconds(10)).until(() -> a.call("CLUSTER", "INFO").contains("cluster_known_nodes:2")
          && b.call("CLUSTER", "INFO").contains("cluster_state:ok"));
      String idA = body(a.call("CLUSTER", "MYID"));
      String idB = body(b.call("CLUSTER", "MYID"));
      int slot = Integer.parseInt(a.call("CLUSTER", "KEYSLOT", "{m}").trim().substring(1));
      String s = String.valueOf(slot);
      a.call("SET", "{m}here", "1");
      a.call("SET", "{m}moved", "2");
      assertThat(b.call("GET", "{m}here")).isEqualTo("-MOVED " + slot + " 127.0.0.1:" + pa + "\r\n");

      assertThat(b.call("CLUSTER", "SETSLOT", s, "IMPORTING", idA)).isEqualTo("+OK\r\n");
      assertThat(a.call("CLUSTER", "SETSLOT", s, "MIGRATING", idB)).isEqualTo("+OK\r\n");
      assertThat(body(a.call("CLUSTER", "NODES"))).contains("[" + slot + "->-" + idB + "]");
      assertThat(a.call("GET", "{m}here")).isEqualTo("$1\r\n1\r\n");
      assertThat(a.call("GET", "{m}new")).isEqualTo("-ASK " + slot + " 127.0.0.1:" + pb + "\r\n");
      assertThat(a.call("MGET", "{m}here", "{m}new"))
          .isEqualTo("-TRYAGAIN Multiple keys request during rehashing of slot\r\n");
      assertThat(b.call("GET", "{m}new")).isEqualTo("-MOVED " + slot + " 127.0.0.1:" + pa + "\r\n");
      assertThat(b.call("ASKING")).isEqualTo("+OK\r\n");
      assertThat(b.call("SET", "{m}new", "3")).isEqualTo("+OK\r\n");
      assertThat(b.call("GET", "{m}new")).startsWith("-MOVED"); // ASKING lasts one command

      assertThat(a.call("MIGRATE", "127.0.0.1", String.valueOf(pb), "", "0", "5000", "KEYS", "{m}moved", "{m}gone"))
          .isEqualTo("+OK\r\n");
      assertThat(a.call("MIGRATE", "127.0.0.1", String.valueOf(pb), "{m}gone", "0", "5000")).isEqualTo("+NOKEY\r\n");
      assertThat(a.call("GET", "{m}moved")).isEqualTo("-ASK " + slot + " 127.0.0.1:" + pb + "\r\n");
      assertThat(a.call("CLUSTER", "SETSLOT", s, "NODE", idB)).startsWith("-ERR Can't assign hashslot " + slot);
      assertThat(a.call("MIGRATE", "127.0.0.1", String.valueOf(pb), "", "0", "5000", "KEYS", "{m}here"))
          .isEqualTo("+OK\r\n");
      assertThat(b.call("CLUSTER", "SETSLOT", s, "NODE", idB)).isEqualTo("+OK\r\n");
      assertThat(a.call("CLUSTER", "SETSLOT", s, "NODE", idB)).isEqualTo("+OK\r\n");
      assertThat(a.call("GET", "{m}here")).isEqualTo("-MOVED " + slot + " 127.0.0.1:" + pb + "\r\n");
      assertThat(b.call("MGET", "{m}here", "{m}moved", "{m}new")).isEqualTo("*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");

      // Garnet's whole-slot form: one command moves slots 100..199 with their keys.
      for (int i = 0; i < 300; i++) {
        a.call("SET", "bulk:" + i, "v" + i);
      }
      int before = Integer.parseInt(b.call("DBSIZE").trim().substring(1));
      assertThat(a.call("MIGRATE", "127.0.0.1", String.valueOf(pb), "", "0", "5000", "SLOTSRANGE", "0", "999"))
          .isEqualTo("+OK\r\n");
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        assertThat(body(a.call("CLUSTER", "NODES"))).contains(idB + " 127.0.0.1:" + pb)
            .containsPattern(idB + " .* 0-999 " + s);
        assertThat(body(b.call("CLUSTER", "NODES"))).containsPattern("myself,master .* 0-999 " + s);
      });
      int moved = Integer.parseInt(b.call("DBSIZE").trim().substring(1)) - before;
      int slotsMoved = 0;
      for (int i = 0; i < 300; i++) {
        String got = Integer.parseInt(b.call("CLUSTER", "KEYSLOT", "bulk:" + i).trim().substring(1)) < 1000
            ? b.call("GET", "bulk:" + i) : a.call("GET", "bulk:" + i);
        assertThat(got).isEqualTo("$" + ("v" + i).length() + "\r\nv" + i + "\r\n");
        if (Integer.parseInt(b.call("CLUSTER", "KEYSLOT", "bulk:" + i).trim().substring(1)) < 1000) {
          slotsMoved++;
        }
      }
      assertThat(moved).isEqualTo(slotsMoved);
      // The new owner's epoch is the greatest: its claim wins every merge.
      assertThat(b.call("CLUSTER", "INFO")).contains("cluster_my_epoch:" + epoch(b));
    }
  }

  private static String epoch(Wire w) throws Exception {
    String info = w.call("CLUSTER", "INFO");
    return info.replaceAll("(?s).*cluster_current_epoch:(\\d+).*", "$1");
  }

  private static String body(String bulk) {
    return bulk.substring(bulk.indexOf("\r\n") + 2, bulk.length() - 2);
  }
}

package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Protocol;

/**
 * Three nodes in this JVM formed into a cluster by the real {@code redis-cli --cluster create},
 * then driven by redis-cli, Lettuce's RedisClusterClient and Jedis' JedisCluster: redirects,
 * a mixed workload, a reshard of 1000 slots under writes, and a rebalance.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KvClusterTest {
  private KvNodes nodes;
  private JedisCluster jedis;
  private RedisClusterClient lettuce;

  @BeforeAll
  void formCluster() throws Exception {
    RedisCli.assume();
    nodes = new KvNodes(3);
    List<String> args = new ArrayList<>(List.of("--cluster", "create"));
    args.addAll(nodes.addresses());
    args.add("--cluster-yes");
    String out = RedisCli.run(null, args.toArray(new String[0]));
    assertThat(out).contains("[OK] All nodes agree about slots configuration.").contains("[OK] All 16384 slots covered.");
    Set<HostAndPort> seeds = new HashSet<>();
    for (KvServer s : nodes.servers) {
      seeds.add(new HostAndPort("127.0.0.1", s.port()));
    }
    jedis = new JedisCluster(seeds, DefaultJedisClientConfig.builder().socketTimeoutMillis(5000).build(), 10,
        new org.apache.commons.pool2.impl.GenericObjectPoolConfig<>());
    lettuce = RedisClusterClient.create(RedisURI.create("redis://127.0.0.1:" + nodes.get(0).port()));
  }

  @AfterAll
  void stop() throws Exception {
    if (jedis != null) {
      jedis.close();
    }
    if (lettuce != null) {
      lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
    if (nodes != null) {
      nodes.close();
    }
  }

  private String check() throws Exception {
    return RedisCli.run(null, "--cluster", "check", nodes.addresses().get(0));
  }

  @Test
  @Order(1)
  void redisCliChecksEveryNodeAndSlot() throws Exception {
    String out = check();
    assertThat(out).contains("[OK] All nodes agree about slots configuration.")
        .contains("[OK] All 16384 slots covered.").doesNotContain("[ERR]").doesNotContain("[WARNING]");
    try (Jedis j = new Jedis("127.0.0.1", nodes.get(0).port())) {
      String info = new String((byte[]) j.sendCommand(Protocol.Command.CLUSTER, "INFO"));
      assertThat(info).contains("cluster_state:ok\r\n").contains("cluster_known_nodes:3\r\n")
          .contains("cluster_size:3\r\n").contains("cluster_current_epoch:3\r\n");
      String lines = new String((byte[]) j.sendCommand(Protocol.Command.CLUSTER, "NODES"));
      assertThat(lines.split("\n")).hasSize(3).allMatch(l -> l.matches(
          "[0-9a-f]{40} 127\\.0\\.0\\.1:\\d+@\\d+ (myself,)?master - \\d+ \\d+ [123] connected \\d+-\\d+"));
    }
  }

  @Test
  @Order(2)
  void redisCliDashCFollowsRedirects() throws Exception {
    String port0 = String.valueOf(nodes.get(0).port());
    String port2 = String.valueOf(nodes.get(2).port());
    StringBuilder sets = new StringBuilder();
    StringBuilder gets = new StringBuilder();
    for (int i = 0; i < 50; i++) {
      sets.append("SET cli:").append(i).append(" v").append(i).append('\n');
      gets.append("GET cli:").append(i).append('\n');
    }
    RedisCli.run(sets.toString(), "-c", "-p", port0);
    String out = RedisCli.run(gets.toString(), "-c", "-p", port2);
    for (int i = 0; i < 50; i++) {
      assertThat(out).contains("v" + i + "\n");
    }
    // Without -c the node answers Redis' redirect.
    String moved = RedisCli.run(null, "-p", port0, "GET", "cli:0");
    String owner = RedisCli.run(null, "-p", port0, "CLUSTER", "KEYSLOT", "cli:0").trim();
    assertThat(moved.trim()).satisfiesAnyOf(
        m -> assertThat(m).isEqualTo("v0"),
        m -> assertThat(m).matches("MOVED " + owner + " 127\\.0\\.0\\.1:\\d+"));
  }

  @Test
  @Order(3)
  void lettuceAndJedisRunAMixedWorkloadAndSeeEachOthersWrites() {
    try (StatefulRedisClusterConnection<String, String> c = lettuce.connect()) {
      RedisAdvancedClusterCommands<String, String> l = c.sync();
      for (int i = 0; i < 300; i++) {
        l.set("mix:" + i, "l" + i);
        l.hset("hash:" + i, Map.of("a", "1", "b", String.valueOf(i)));
        jedis.incrBy("ctr:" + (i % 10), i);
      }
      for (int i = 0; i < 300; i++) {
        assertThat(jedis.get("mix:" + i)).isEqualTo("l" + i);
        assertThat(jedis.hgetAll("hash:" + i)).isEqualTo(Map.of("a", "1", "b", String.valueOf(i)));
        jedis.append("mix:" + i, "+j");
      }
      for (int i = 0; i < 300; i++) {
        assertThat(l.get("mix:" + i)).isEqualTo("l" + i + "+j");
        assertThat(l.hincrby("hash:" + i, "a", 2)).isEqualTo(3);
      }
      long sum = 0;
      for (int k = 0; k < 10; k++) {
        sum += Long.parseLong(l.get("ctr:" + k));
      }
      assertThat(sum).isEqualTo(299L * 300 / 2);
      // Multi-key commands in one slot (hash tags) and across slots.
      l.mset(Map.of("{user1}:a", "1", "{user1}:b", "2"));
      assertThat(jedis.mget("{user1}:a", "{user1}:b")).containsExactly("1", "2");
      assertThat(l.msetnx(Map.of("{user1}:a", "x", "{user1}:c", "3"))).isFalse();
      l.setex("ttl:1", 100, "x");
      assertThat(jedis.ttl("ttl:1")).isBetween(98L, 100L);
      assertThat(l.dbsize()).isGreaterThanOrEqualTo(600);
    }
  }

  @Test
  @Order(4)
  void reshardOf1000SlotsUnderWritesKeepsEveryAcknowledgedWrite() throws Exception {
    Map<String, String> acked = new ConcurrentHashMap<>();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger failures = new AtomicInteger();
    Thread writer = new Thread(() -> {
      int i = 0;
      while (!stop.get()) {
        String k = "w:" + (i % 3000);
        String v = "v" + i;
        try {
          jedis.set(k, v);
          acked.put(k, v);
          String got = jedis.get(k);
          if (!v.equals(got)) {
            failures.incrementAndGet();
          }
        } catch (RuntimeException e) {
          failures.incrementAndGet();
        }
        i++;
      }
    }, "reshard-writer");
    writer.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> acked.size() > 200);
    String from;
    String to;
    try (Jedis j0 = new Jedis("127.0.0.1", nodes.get(0).port());
        Jedis j1 = new Jedis("127.0.0.1", nodes.get(1).port())) {
      from = new String((byte[]) j0.sendCommand(Protocol.Command.CLUSTER, "MYID"));
      to = new String((byte[]) j1.sendCommand(Protocol.Command.CLUSTER, "MYID"));
    }
    String out = RedisCli.run(null, "--cluster", "reshard", nodes.addresses().get(0), "--cluster-from", from,
        "--cluster-to", to, "--cluster-slots", "1000", "--cluster-yes");
    stop.set(true);
    writer.join(10_000);
    assertThat(out).doesNotContain("[ERR]");
    assertThat(failures.get()).as("writes or read-backs that failed during the reshard").isZero();
    for (Map.Entry<String, String> e : acked.entrySet()) {
      assertThat(jedis.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
    }
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(check()).contains("[OK] All nodes agree about slots configuration.")
            .contains("[OK] All 16384 slots covered.").doesNotContain("[WARNING]"));
    try (Jedis j1 = new Jedis("127.0.0.1", nodes.get(1).port())) {
      String mine = new String((byte[]) j1.sendCommand(Protocol.Command.CLUSTER, "NODES")).lines()
          .filter(l -> l.contains("myself")).findFirst().orElseThrow();
      assertThat(mine).contains(" 0-999 ");
    }
  }

  @Test
  @Order(5)
  void rebalanceEvensOutTheSlots() throws Exception {
    String out = RedisCli.run(null, "--cluster", "rebalance", nodes.addresses().get(0));
    assertThat(out).doesNotContain("[ERR]").contains("Moving");
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      String c = check();
      assertThat(c).contains("[OK] All 16384 slots covered.").contains("[OK] All nodes agree");
      assertThat(c).containsPattern("\\((546[12]) slots\\) master[\\s\\S]*\\((546[12]) slots\\)[\\s\\S]*\\((546[12]) slots\\)");
    });
    for (int i = 0; i < 300; i++) {
      assertThat(jedis.get("mix:" + i)).isEqualTo("l" + i + "+j");
    }
  }
}

package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicas, differentially: a real {@code redis-server} primary with a replica (cluster mode,
 * CLUSTER REPLICATE) and an Atoll KV pair formed the same way answer the same requests. Replies
 * are compared byte for byte once what must differ is named alike: node ids become P and R, and
 * every run of digits N (ports, offsets, epochs, times). INFO replication is compared by its field
 * names, in order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KvReplicasDifferentialTest {
  @TempDir
  static Path dir;

  private final List<RedisServer> redis = new ArrayList<>();
  private final List<KvServer> atoll = new ArrayList<>();
  /** Redis' primary and replica, then Atoll's. */
  private Wire redisPrimary;
  private Wire redisReplica;
  private Wire atollPrimary;
  private Wire atollReplica;
  private final String[] redisIds = new String[2];
  private final String[] atollIds = new String[2];

  @BeforeAll
  void start() throws Exception {
    for (int i = 0; i < 2; i++) {
      redis.add(RedisServer.start(dir, "redis-" + i));
    }
    redisPrimary = new Wire(redis.get(0).port);
    redisReplica = new Wire(redis.get(1).port);
    for (int i = 0; i < 2; i++) {
      atoll.add(KvServer.start(KvSettings.defaults(0, dir.resolve("atoll-" + i)).withNodeTimeout(2000)));
    }
    atollPrimary = new Wire(atoll.get(0).port());
    atollReplica = new Wire(atoll.get(1).port());
    pair(redisPrimary, redisReplica, redis.get(0).port, redis.get(0).port + 10000, redisIds);
    pair(atollPrimary, atollReplica, atoll.get(0).port(), atoll.get(0).busPort(), atollIds);
  }

  /** The primary owns every slot, the replica meets it and replicates it, up to date. */
  private static void pair(Wire primary, Wire replica, int port, int busPort, String[] ids) throws Exception {
    assertThat(primary.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")).isEqualTo("+OK\r\n");
    replica.call("CLUSTER", "MEET", "127.0.0.1", Integer.toString(port), Integer.toString(busPort));
    ids[0] = bulk(primary.call("CLUSTER", "MYID"));
    ids[1] = bulk(replica.call("CLUSTER", "MYID"));
    await().atMost(Duration.ofSeconds(30)).until(() -> replica.call("CLUSTER", "REPLICATE", ids[0]).equals("+OK\r\n"));
    await().atMost(Duration.ofSeconds(30)).until(() -> replica.call("ROLE").contains("connected")
        && primary.call("CLUSTER", "INFO").contains("cluster_state:ok")
        && replica.call("CLUSTER", "INFO").contains("cluster_state:ok"));
    primary.call("SET", "k", "v");
    await().atMost(Duration.ofSeconds(10)).until(() -> primary.call("WAIT", "1", "100").equals(":1\r\n"));
    // The replica's line shows it acked: Redis lists a replica in SLOTS once its offset is past 0.
    await().atMost(Duration.ofSeconds(10)).until(() -> primary.call("CLUSTER", "SLOTS").split(ids[1], -1).length > 1);
  }

  private static String bulk(String reply) {
    return reply.split("\r\n")[1];
  }

  @AfterAll
  void stop() throws Exception {
    for (Wire w : new Wire[] {redisPrimary, redisReplica, atollPrimary, atollReplica}) {
      if (w != null) {
        w.close();
      }
    }
    for (KvServer s : atoll) {
      s.close();
    }
    for (RedisServer r : redis) {
      r.close();
    }
  }

  /** The reply with the ids named P and R and every run of digits N. */
  private static String normal(String reply, String[] ids) {
    return reply.replace(ids[0], "P").replace(ids[1], "R").replaceAll("[0-9]+", "N");
  }

  /** Sends {@code args} to Redis' node and Atoll's in the same role; normalised replies must match. */
  private void same(boolean toReplica, String... args) throws IOException {
    String expected = normal((toReplica ? redisReplica : redisPrimary).call(args), redisIds);
    String got = normal((toReplica ? atollReplica : atollPrimary).call(args), atollIds);
    assertThat(got).as("%s to the %s", String.join(" ", args), toReplica ? "replica" : "primary")
        .isEqualTo(expected);
  }

  @Test
  void clusterRepliesShowTheReplicaAsRedisDoes() throws Exception {
    for (boolean replica : new boolean[] {false, true}) {
      same(replica, "CLUSTER", "SLOTS");
      same(replica, "CLUSTER", "SHARDS");
      same(replica, "ROLE");
    }
    // Not vacuous: the replica is there, with its role and its primary.
    assertThat(normal(atollPrimary.call("CLUSTER", "SHARDS"), atollIds)).contains("$N\r\nreplica\r\n")
        .contains("$N\r\nR\r\n");
    assertThat(normal(atollPrimary.call("CLUSTER", "SLOTS"), atollIds)).contains("$N\r\nR\r\n");
    assertThat(normal(atollReplica.call("ROLE"), atollIds)).startsWith("*N\r\n$N\r\nslave\r\n");
    assertThat(normal(atollReplica.call("CLUSTER", "NODES"), atollIds)).contains("myself,slave P ");
    // NODES lines come in no fixed order: compared sorted, each from both sides.
    for (boolean replica : new boolean[] {false, true}) {
      List<String> expected = sortedLines(normal((replica ? redisReplica : redisPrimary).call("CLUSTER", "NODES"),
          redisIds));
      List<String> got = sortedLines(normal((replica ? atollReplica : atollPrimary).call("CLUSTER", "NODES"),
          atollIds));
      assertThat(got).as("CLUSTER NODES on the %s", replica ? "replica" : "primary").isEqualTo(expected);
    }
    // REPLICAS names the primary: its own id on each side.
    assertThat(normal(atollPrimary.call("CLUSTER", "REPLICAS", atollIds[0]), atollIds)).as("CLUSTER REPLICAS")
        .isEqualTo(normal(redisPrimary.call("CLUSTER", "REPLICAS", redisIds[0]), redisIds));
    assertThat(normal(atollPrimary.call("CLUSTER", "REPLICAS", atollIds[1]), atollIds)).as("CLUSTER REPLICAS of a replica")
        .isEqualTo(normal(redisPrimary.call("CLUSTER", "REPLICAS", redisIds[1]), redisIds));
  }

  private static List<String> sortedLines(String bulkReply) {
    List<String> lines = new ArrayList<>(List.of(bulkReply.split("\n")));
    lines.remove(0); // the bulk's length line
    lines.sort(null);
    return lines;
  }

  @Test
  void replicaRefusalsAndRedirectsAreRedis() throws Exception {
    same(true, "SET", "k", "x");
    same(true, "GET", "k");
    same(true, "FLUSHALL");
    same(true, "WAIT", "1", "10");
    same(false, "CLUSTER", "FAILOVER");
    same(true, "CLUSTER", "FAILOVER", "SOMETIMES");
    same(false, "REPLICAOF", "NO", "ONE");
    same(false, "SLAVEOF", "127.0.0.1", "1");
    same(false, "FAILOVER");
    same(true, "CLUSTER", "REPLICATE", "0000000000000000000000000000000000000000");
    same(false, "WAIT", "x", "10");
    same(false, "WAIT", "1", "-1");
    same(false, "WAIT", "1", "x");
    same(false, "WAIT", "5", "50");
    same(true, "READONLY");
    same(true, "GET", "k");
    same(true, "READWRITE");
  }

  @Test
  void infoReplicationHasRedisFieldsInRedisOrder() throws Exception {
    for (boolean replica : new boolean[] {false, true}) {
      assertThat(fields((replica ? atollReplica : atollPrimary).call("INFO", "replication")))
          .as("INFO replication on the %s", replica ? "replica" : "primary")
          .isEqualTo(fields((replica ? redisReplica : redisPrimary).call("INFO", "replication")));
    }
  }

  private static List<String> fields(String info) {
    List<String> names = new ArrayList<>();
    for (String line : info.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith("#")) {
        names.add(line.substring(0, colon));
      }
    }
    return names;
  }
}

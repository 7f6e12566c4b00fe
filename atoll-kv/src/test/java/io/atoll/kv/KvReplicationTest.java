package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Replication between two nodes in this JVM, through a real client (Jedis): a replica that joins a
 * primary with keys, while a writer changes them, ends with exactly the primary's keys (the full
 * copy and the stream interleaved, see {@code replication.Feed}); it serves READONLY reads, refuses
 * writes as Redis' replicas do, comes back as a replica after a restart, and takes over in a manual
 * failover with every key, the old primary following it.
 */
class KvReplicationTest {
  private static final int KEYS = 20_000;

  @Test
  void aReplicaJoiningUnderWritesEndsWithThePrimarysKeysAndTakesOverInAFailover() throws Exception {
    try (KvNodes nodes = new KvNodes(2);
        Jedis primary = new Jedis("127.0.0.1", nodes.get(0).port(), 10_000);
        Jedis replica = new Jedis("127.0.0.1", nodes.get(1).port(), 10_000)) {
      primary.sendCommand(() -> "CLUSTER".getBytes(), "ADDSLOTSRANGE", "0", "16383");
      replica.sendCommand(() -> "CLUSTER".getBytes(), "MEET", "127.0.0.1", String.valueOf(nodes.get(0).port()),
          String.valueOf(nodes.get(0).busPort()));
      await().atMost(Duration.ofSeconds(20)).until(() -> replica.clusterNodes().lines().count() == 2
          && primary.clusterNodes().lines().count() == 2 && replica.clusterInfo().contains("cluster_state:ok"));
      String primaryId = primary.clusterMyId();

      // Refusals, with Redis' texts.
      assertThatThrownBy(() -> primary.clusterReplicate(replica.clusterMyId()))
          .hasMessage("ERR To set a master the node must be empty and without assigned slots.");
      assertThatThrownBy(() -> replica.clusterReplicate(replica.clusterMyId())).hasMessage("ERR Can't replicate myself");
      assertThatThrownBy(() -> replica.clusterReplicate("0".repeat(40))).hasMessage("ERR Unknown node " + "0".repeat(40));
      assertThatThrownBy(() -> replica.sendCommand(() -> "REPLICAOF".getBytes(), "NO", "ONE"))
          .hasMessage("ERR REPLICAOF not allowed in cluster mode.");
      assertThatThrownBy(() -> replica.sendCommand(() -> "CLUSTER".getBytes(), "FAILOVER"))
          .hasMessage("ERR You should send CLUSTER FAILOVER to a replica");
      assertThat(primary.waitReplicas(0, 10)).isZero();

      Pipeline p = primary.pipelined();
      for (int i = 0; i < KEYS; i++) {
        p.set("k:" + i, "v" + i);
        if (i % 3 == 0) {
          p.hset("h:" + i, "f", "x" + i);
        }
      }
      p.sync();

      AtomicBoolean writing = new AtomicBoolean(true);
      AtomicLong writes = new AtomicLong();
      AtomicReference<Throwable> failed = new AtomicReference<>();
      Thread writer = Thread.ofPlatform().start(() -> {
        Random random = new Random(3);
        try (Jedis w = new Jedis("127.0.0.1", nodes.get(0).port(), 10_000)) {
          while (writing.get()) {
            int k = random.nextInt(KEYS);
            switch (random.nextInt(5)) {
              case 0 -> w.del("k:" + k);
              case 1 -> w.incr("n:" + (k % 500));
              case 2 -> w.hset("h:" + k, "g", "y" + writes.get());
              case 3 -> w.pexpire("k:" + k, 600_000);
              default -> w.set("k:" + k, "w" + writes.get());
            }
            writes.incrementAndGet();
          }
        } catch (Throwable t) {
          failed.set(t);
        }
      });
      await().atMost(Duration.ofSeconds(10)).until(() -> writes.get() > 200);
      assertThat(replica.clusterReplicate(primaryId)).isEqualTo("OK");
      await().atMost(Duration.ofSeconds(30)).until(() -> replica.role().toString().contains("connected"));
      long reached = writes.get();
      await().atMost(Duration.ofSeconds(10)).until(() -> writes.get() > reached + 1000);
      writing.set(false);
      writer.join(10_000);
      assertThat(failed.get()).isNull();
      assertThat(primary.waitReplicas(1, 10_000)).isEqualTo(1);
      assertSameKeys(primary, replica, "after the copy under writes");

      // As Redis' replicas: reads only after READONLY, keyed writes redirected, keyless ones refused.
      replica.readwrite();
      assertThatThrownBy(() -> replica.get("k:1")).hasMessageStartingWith("MOVED ");
      assertThatThrownBy(() -> replica.set("k:1", "x")).hasMessageStartingWith("MOVED ");
      assertThatThrownBy(replica::flushAll).hasMessage("READONLY You can't write against a read only replica.");
      assertThatThrownBy(() -> replica.waitReplicas(1, 10)).hasMessageStartingWith("ERR WAIT cannot be used with"
          + " replica instances.");
      String replicaLine = replica.clusterNodes().lines().filter(l -> l.contains("myself")).findFirst().orElseThrow();
      assertThat(replicaLine.split(" ")[2]).isEqualTo("myself,slave");
      assertThat(replicaLine.split(" ")[3]).isEqualTo(primaryId);
      assertThat(replicaLine.split(" ")).hasSize(8); // no slots
      List<Object> slots = primary.clusterSlots();
      assertThat((List<?>) slots.get(0)).hasSize(4); // start, end, the primary, its replica
      assertThat(primary.info("replication")).contains("connected_slaves:1").contains("slave0:ip=127.0.0.1,port="
          + nodes.get(1).port() + ",state=online");
      assertThat(replica.info("replication")).contains("role:slave").contains("master_link_status:up")
          .contains("master_port:" + nodes.get(0).port());

      // Restarted on its data directory, it is still a replica and catches up again.
      nodes.servers.get(1).close();
      primary.set("k:during-restart", "1");
      nodes.servers.set(1, KvServer.start(KvSettings.defaults(nodes.get(1).port(), nodes.root.resolve("n1"))
          .withNodeTimeout(2000)));
      try (Jedis again = new Jedis("127.0.0.1", nodes.get(1).port(), 10_000)) {
        await().atMost(Duration.ofSeconds(30)).until(() -> again.role().toString().contains("connected"));
        assertThat(primary.waitReplicas(1, 10_000)).isEqualTo(1);
        assertSameKeys(primary, again, "after the replica restarted");

        // Manual failover: the replica takes every slot, the old primary follows it, nothing lost.
        assertThat(again.sendCommand(() -> "CLUSTER".getBytes(), "FAILOVER")).isNotNull();
        await().atMost(Duration.ofSeconds(20)).until(() -> again.role().get(0).toString().equals("master")
            && primary.role().toString().contains("connected"));
        assertThat(again.clusterInfo()).contains("cluster_state:ok");
        assertThat(again.get("k:during-restart")).isEqualTo("1");
        again.set("k:after-failover", "2");
        assertThat(again.waitReplicas(1, 10_000)).isEqualTo(1);
        assertSameKeys(again, primary, "after the failover");
        assertThatThrownBy(() -> primary.set("k:1", "x")).isInstanceOf(JedisDataException.class)
            .hasMessageStartingWith("MOVED ");
      }
    }
  }

  /**
   * A manual failover's pause of a primary's writes: keyed writes and transactions wait whole and
   * run when it ends, reads go on, writes without keys are refused (they could not be waited for
   * and still be counted before the offset the pause answers).
   */
  @Test
  void writesPausedForAFailoverWaitWholeAndRunAfterwards() throws Exception {
    try (KvNodes nodes = new KvNodes(1);
        Jedis admin = new Jedis("127.0.0.1", nodes.get(0).port(), 30_000);
        Jedis reader = new Jedis("127.0.0.1", nodes.get(0).port(), 30_000)) {
      admin.sendCommand(() -> "CLUSTER".getBytes(), "ADDSLOTSRANGE", "0", "16383");
      await().atMost(Duration.ofSeconds(10)).until(() -> admin.clusterInfo().contains("cluster_state:ok"));
      admin.set("k:1", "old");
      Object offset = admin.sendCommand(() -> "CLUSTER".getBytes(), "ATOLL-PAUSE-WRITES", "1000");
      assertThat(offset).isInstanceOf(Long.class);
      AtomicReference<Object> set = new AtomicReference<>();
      AtomicReference<Object> exec = new AtomicReference<>();
      Thread writer = Thread.ofPlatform().start(() -> {
        try (Jedis w = new Jedis("127.0.0.1", nodes.get(0).port(), 30_000)) {
          set.set(w.set("k:1", "new"));
          redis.clients.jedis.Transaction t = w.multi();
          t.incr("n:1");
          t.incr("n:1");
          exec.set(t.exec());
        }
      });
      await().atMost(Duration.ofSeconds(10)).until(() -> reader.clientList().contains("cmd=set"));
      assertThat(reader.get("k:1")).as("the write arrived and waits; reads go on").isEqualTo("old");
      assertThatThrownBy(reader::flushAll).hasMessageStartingWith("TRYAGAIN writes are paused");
      writer.join(30_000);
      assertThat(set.get()).isEqualTo("OK");
      assertThat(exec.get()).isEqualTo(List.of(1L, 2L));
      assertThat(reader.get("k:1")).isEqualTo("new");
      assertThat(reader.get("n:1")).isEqualTo("2");
      assertThat(reader.flushAll()).isEqualTo("OK");
    }
  }

  /**
   * --min-replicas-to-ack 1: without a replica online a write is refused before it runs; with one,
   * its reply leaves once the replica holds it; with a replica that never acknowledges, the reply is
   * -NOREPLICAS after the ack timeout (never OK), though the write ran on the primary.
   */
  @Test
  void writesWaitForAReplicaToHoldThemBeforeTheirReplyLeaves() throws Exception {
    java.nio.file.Path root = java.nio.file.Files.createTempDirectory("atoll-kv-acks");
    KvServer primaryNode = KvServer.start(KvSettings.defaults(0, root.resolve("p")).withNodeTimeout(2000)
        .withReplicas(new KvReplicas(1, 500, 64 << 10)));
    KvServer replicaNode = KvServer.start(KvSettings.defaults(0, root.resolve("r")).withNodeTimeout(2000));
    try (Jedis primary = new Jedis("127.0.0.1", primaryNode.port(), 10_000);
        Jedis replica = new Jedis("127.0.0.1", replicaNode.port(), 10_000)) {
      primary.sendCommand(() -> "CLUSTER".getBytes(), "ADDSLOTSRANGE", "0", "16383");
      replica.sendCommand(() -> "CLUSTER".getBytes(), "MEET", "127.0.0.1", String.valueOf(primaryNode.port()),
          String.valueOf(primaryNode.busPort()));
      await().atMost(Duration.ofSeconds(20)).until(() -> replica.clusterNodes().lines().count() == 2
          && replica.clusterInfo().contains("cluster_state:ok"));
      assertThatThrownBy(() -> primary.set("k:1", "a")).hasMessage("NOREPLICAS Not enough good replicas to write.");
      assertThat(primary.get("k:1")).as("refused before it ran").isNull();
      redis.clients.jedis.Transaction tx = primary.multi();
      tx.set("{tx}k", "1");
      tx.incr("{tx}n");
      assertThatThrownBy(tx::exec).as("a transaction is refused whole, before any of it runs")
          .hasMessageContaining("NOREPLICAS");
      assertThat(primary.get("{tx}k")).isNull();

      replica.clusterReplicate(primary.clusterMyId());
      await().atMost(Duration.ofSeconds(20)).until(() -> replica.role().toString().contains("connected"));
      assertThat(primary.info("replication")).contains("repl_backlog_size:65536");
      replica.readonly();
      for (int i = 0; i < 200; i++) {
        assertThat(primary.set("k:" + i, "v" + i)).isEqualTo("OK");
        assertThat(replica.get("k:" + i)).as("held by the replica once acknowledged").isEqualTo("v" + i);
      }
      Pipeline p = primary.pipelined();
      for (int i = 0; i < 1000; i++) {
        p.incr("n");
      }
      assertThat(p.syncAndReturnAll()).last().isEqualTo(1000L);
      assertThat(replica.get("n")).isEqualTo("1000");
      for (int i = 0; i < 50; i++) { // a write and a WAIT in one read: their replies stay in order
        Pipeline q = primary.pipelined();
        q.set("k:w", "v" + i);
        q.waitReplicas(1, 1000);
        q.incr("n:w");
        assertThat(q.syncAndReturnAll()).containsExactly("OK", 1L, (long) i + 1);
      }

      // A "replica" that takes the stream but never acknowledges: replies wait, then NOREPLICAS.
      replicaNode.close();
      await().atMost(Duration.ofSeconds(10)).until(() -> primary.info("replication").contains("connected_slaves:0"));
      try (java.net.Socket mute = new java.net.Socket("127.0.0.1", primaryNode.port())) {
        mute.getOutputStream().write("REPLCONF listening-port 1\r\nPSYNC ? -1\r\n".getBytes());
        mute.getOutputStream().flush();
        await().atMost(Duration.ofSeconds(10)).until(() -> primary.info("replication").contains("state=online"));
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> primary.set("k:mute", "x")).hasMessage("NOREPLICAS Not enough good replicas to write.");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("the ack timeout").isGreaterThanOrEqualTo(
            Duration.ofMillis(400));
        assertThat(primary.get("k:mute")).as("it ran here, unacknowledged").isEqualTo("x");
      }
    } finally {
      primaryNode.close();
      replicaNode.close();
    }
  }

  /** Every key of {@code from} is on {@code to} with the same value and expiry, and no other key. */
  private static void assertSameKeys(Jedis from, Jedis to, String when) {
    to.readonly();
    assertThat(to.dbSize()).as("keys on the replica " + when).isEqualTo(from.dbSize());
    for (String key : from.keys("*")) {
      String type = from.type(key);
      assertThat(to.type(key)).as(key + " " + when).isEqualTo(type);
      if (type.equals("hash")) {
        assertThat(to.hgetAll(key)).as(key + " " + when).isEqualTo(from.hgetAll(key));
      } else {
        assertThat(to.get(key)).as(key + " " + when).isEqualTo(from.get(key));
      }
      assertThat(to.pexpireTime(key)).as("expiry of " + key + " " + when).isEqualTo(from.pexpireTime(key));
    }
  }
}

package io.atoll.server;

import static io.atoll.server.KvProbes.myId;
import static io.atoll.server.KvProbes.read;
import static io.atoll.server.KvProbes.slotsOf;
import static io.atoll.server.KvProbes.uri;
import static io.atoll.server.KvProbes.indexOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.kvdemo.KvDemoRun;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;

/**
 * Replicas the manager places, as processes: a shard manager with {@code --replicas 1} and four
 * {@code atoll kv --manager} nodes (two primaries, two replicas; writes acknowledged once the
 * replica has them, the default with --manager). Lettuce's and Jedis' cluster clients write while
 * a primary is killed with SIGKILL, a different one each round; its replica takes its slots once
 * the manager declares it dead, and the killed node, restarted on its data directory, comes back
 * as a new node that replicates the promoted one. Every acknowledged write reads back at its last
 * value; after each round every slot has exactly one owner. Prints the time from each kill to the
 * first write acknowledged in the killed node's slots. {@code -Datoll.kv.managedKills=20} for a
 * longer run.
 */
class KvManagedReplicasIT {
  static final int KILLS = Integer.getInteger("atoll.kv.managedKills", 3);
  static final int KEYS = 2000;

  @TempDir
  Path dir;
  ProcessCluster processes;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir, () -> processes);

  /**
   * One writer's record: the last acknowledged value of each key; keys whose last write was refused
   * (an error reply: settled by the next acknowledged write); and keys with a write that got no
   * reply (a timeout, a broken connection), which the client may still deliver later (Lettuce sends
   * what it buffered when it reconnects, and follows a MOVED, even for a command it gave up on), so
   * it can land after a later acknowledged write: those are never checked.
   */
  private static final class Written {
    final Map<Integer, String> acked = new ConcurrentHashMap<>();
    final Set<Integer> unsure = ConcurrentHashMap.newKeySet();
    final Set<Integer> inLimbo = ConcurrentHashMap.newKeySet();
    final AtomicLong writes = new AtomicLong();

    boolean checkable(int k) {
      return !unsure.contains(k) && !inLimbo.contains(k);
    }
  }

  @Test
  void aKilledPrimaryIsReplacedByItsReplicaWithEveryAcknowledgedWrite() throws Exception {
    processes = new ProcessCluster(dir, Duration.ofSeconds(20));
    RedisClusterClient lettuce = null;
    JedisCluster jedis = null;
    RedisClient plain = RedisClient.create();
    try {
      ManagedProcess manager = processes.start(AtollProcesses.atoll("manager", List.of("manager", "--port", "0",
          "--data-dir", dir.resolve("manager-data").toString(), "--shards", "16384", "--new-space-shards", "0",
          "--replicas", "1", "--lease", "3s", "--lease-margin", "500ms", "--max-moves", "16384",
          "--max-moves-fraction", "1.0", "--termination-timeout", "4s", "--ping-timeout", "2s",
          "--rebalance-interval", "3s", "--rebalance-retry", "1s")));
      PodAddress at = manager.awaitAddress(Duration.ofSeconds(60));
      int[] ports = KvDemoRun.freePorts(4);
      ManagedProcess[] nodes = new ManagedProcess[4];
      for (int i = 0; i < 4; i++) {
        nodes[i] = startNode("n" + i + "-0", ports[i], at, i);
        nodes[i].awaitLog(Pattern.compile("registered with the shard manager"), Duration.ofSeconds(60));
      }
      awaitPairs(plain, ports);

      List<RedisURI> seeds = new ArrayList<>();
      Set<HostAndPort> jedisSeeds = new HashSet<>();
      for (int p : ports) {
        seeds.add(uri(p));
        jedisSeeds.add(new HostAndPort("127.0.0.1", p));
      }
      lettuce = RedisClusterClient.create(seeds);
      lettuce.setOptions(ClusterClientOptions.builder().maxRedirects(10).validateClusterNodeMembership(false)
          .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
              .enablePeriodicRefresh(Duration.ofMillis(500)).enableAllAdaptiveRefreshTriggers().build()).build());
      jedis = new JedisCluster(jedisSeeds, DefaultJedisClientConfig.builder().socketTimeoutMillis(3000)
          .connectionTimeoutMillis(1000).build(), 20, Duration.ofSeconds(10),
          new org.apache.commons.pool2.impl.GenericObjectPoolConfig<>());
      StatefulRedisClusterConnection<String, String> conn = lettuce.connect();
      RedisAdvancedClusterCommands<String, String> r = conn.sync();

      Written byLettuce = new Written();
      Written byJedis = new Written();
      AtomicBoolean stop = new AtomicBoolean();
      JedisCluster j = jedis;
      Thread w1 = writer("lettuce", byLettuce, stop, (k, v) -> r.set("L:" + k, v));
      Thread w2 = writer("jedis", byJedis, stop, (k, v) -> j.set("J:" + k, v));
      processes.await("both clients writing", Duration.ofSeconds(30),
          () -> byLettuce.acked.size() > 100 && byJedis.acked.size() > 100);

      List<Long> failovers = new ArrayList<>();
      Set<String> killedIds = new HashSet<>();
      for (int round = 1; round <= KILLS; round++) {
        List<Integer> primaries = primaryPorts(plain, ports);
        assertThat(primaries).hasSize(2);
        int victimPort = primaries.get(round % 2);
        int victim = indexOf(ports, victimPort);
        String victimId = myId(plain, victimPort);
        assertThat(killedIds.add(victimId)).as("round %d kills a node not killed before", round).isTrue();
        String probe = keyOwnedBy(plain, victimPort, round);
        nodes[victim].kill();
        long killed = System.nanoTime();
        processes.await("a write acknowledged in the killed node's slots", Duration.ofSeconds(60), () -> {
          try {
            return "OK".equals(r.set(probe, "p"));
          } catch (RuntimeException e) {
            return false;
          }
        });
        failovers.add((System.nanoTime() - killed) / 1_000_000);
        nodes[victim].awaitExit(Duration.ofSeconds(10));
        nodes[victim] = startNode("n" + victim + "-" + round, victimPort, at, victim);
        nodes[victim].awaitLog(Pattern.compile("registered with the shard manager"), Duration.ofSeconds(60));
        assertThat(myId(plain, victimPort)).as("the killed primary comes back as a new node").isNotEqualTo(victimId);
        awaitPairs(plain, ports);
      }
      stop.set(true);
      w1.join(30_000);
      w2.join(30_000);

      int checked = 0;
      for (Map.Entry<Integer, String> e : byLettuce.acked.entrySet()) {
        if (byLettuce.checkable(e.getKey())) {
          assertThat(read(r, "L:" + e.getKey())).as("L:%s", e.getKey()).isEqualTo(e.getValue());
          checked++;
        }
      }
      for (Map.Entry<Integer, String> e : byJedis.acked.entrySet()) {
        if (byJedis.checkable(e.getKey())) {
          assertThat(read(r, "J:" + e.getKey())).as("J:%s", e.getKey()).isEqualTo(e.getValue());
          checked++;
        }
      }
      assertThat(checked).isGreaterThan(KEYS);
      System.out.printf("managed kv replicas: %d primaries killed with SIGKILL (lease 3 s, margin 0.5 s); from each"
              + " kill to the first write acknowledged in its slots: %s ms; %d writes acknowledged (Lettuce %d, Jedis"
              + " %d), %d keys read back at their last acknowledged value, none lost%n", KILLS, failovers,
          byLettuce.writes.get() + byJedis.writes.get(), byLettuce.writes.get(), byJedis.writes.get(), checked);
    } finally {
      if (lettuce != null) {
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      }
      if (jedis != null) {
        jedis.close();
      }
      plain.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      processes.close();
    }
  }

  /** A thread writing random keys of its own until {@code stop}: one writer per key, so its last acknowledged value is the key's. */
  private static Thread writer(String name, Written w, AtomicBoolean stop, BiConsumer<Integer, String> set) {
    return Thread.ofPlatform().name("writer-" + name).daemon(true).start(() -> {
      Random random = new Random(name.hashCode());
      long seq = 0;
      while (!stop.get()) {
        int k = random.nextInt(KEYS);
        String value = "v" + (++seq);
        try {
          set.accept(k, value);
          w.acked.put(k, value);
          w.unsure.remove(k);
          w.writes.incrementAndGet();
        } catch (RuntimeException e) {
          // not acknowledged: it may or may not have been applied
          boolean replied = e instanceof io.lettuce.core.RedisCommandExecutionException
              || e instanceof redis.clients.jedis.exceptions.JedisDataException;
          (replied ? w.unsure : w.inLimbo).add(k);
          java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(20).toNanos()); // retry pacing
        }
      }
    });
  }

  private ManagedProcess startNode(String name, int port, PodAddress manager, int index) {
    return processes.start(AtollProcesses.atoll(name, List.of("kv", "--port", Integer.toString(port), "--manager",
        manager.toString(), "--data-dir", dir.resolve("kv-" + index).toString(), "--event-loops", "1")));
  }

  /**
   * Waits until two nodes own every slot between them, with no slot claimed by both, and each has
   * one replica online.
   */
  private void awaitPairs(RedisClient plain, int[] ports) {
    processes.await("two primaries owning every slot, each with a replica online", Duration.ofSeconds(90), () -> {
      int total = 0;
      int primaries = 0;
      for (int p : ports) {
        int owned = slotsOf(plain, p);
        if (owned > 0) {
          primaries++;
          total += owned;
          if (!info(plain, p).contains("connected_slaves:1") || !info(plain, p).contains("state=online")) {
            return false;
          }
        }
      }
      return primaries == 2 && total == 16384;
    });
  }

  private static List<Integer> primaryPorts(RedisClient plain, int[] ports) {
    List<Integer> primaries = new ArrayList<>();
    for (int p : ports) {
      if (slotsOf(plain, p) > 0) {
        primaries.add(p);
      }
    }
    return primaries;
  }

  /** A key of a slot the node on {@code port} owns. */
  private static String keyOwnedBy(RedisClient plain, int port, int round) {
    try (StatefulRedisConnection<String, String> c = plain.connect(uri(port))) {
      String me = c.sync().clusterMyId();
      List<long[]> ranges = new ArrayList<>();
      for (Object o : c.sync().clusterSlots()) {
        List<?> range = (List<?>) o;
        if (me.equals(String.valueOf(((List<?>) range.get(2)).get(2)))) {
          ranges.add(new long[] {(Long) range.get(0), (Long) range.get(1)});
        }
      }
      for (int i = 0; ; i++) {
        String key = "probe:" + round + ":" + i;
        int slot = SlotHash.getSlot(key);
        for (long[] range : ranges) {
          if (slot >= range[0] && slot <= range[1]) {
            return key;
          }
        }
      }
    }
  }

  private static String info(RedisClient plain, int port) {
    try (StatefulRedisConnection<String, String> c = plain.connect(uri(port))) {
      return c.sync().info("replication");
    } catch (RuntimeException e) {
      return "";
    }
  }
}

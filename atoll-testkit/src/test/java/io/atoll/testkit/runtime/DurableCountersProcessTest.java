package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodId;
import io.atoll.core.spi.ServerProcess;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.Await;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.atoll.testkit.process.ProcessSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Durable counters on pods that are real processes, their state in a real {@code redis-server},
 * under a load of increments from a client while a pod joins, one stops gracefully and one is
 * killed with {@code kill -9}: no acknowledged increment is lost or counted twice (each counter's
 * acknowledged values are distinct and at most its final count, which exceeds their number by at
 * most the increments whose outcome the client could not know), and the pod that joined started
 * every counter it took from the state carried in the hand-off, reading nothing from Redis.
 */
class DurableCountersProcessTest {

  static final int COUNTERS = 60;

  @TempDir
  Path dir;
  ServerProcess redis;
  LocalCluster cluster;
  ProcessCluster processes;

  @BeforeEach
  void start() throws Exception {
    redis = ServerProcess.redis(dir.resolve("redis"));
    cluster = LocalCluster.builder().shards(30).start();
    processes = new ProcessCluster(dir.resolve("pods"), Duration.ofSeconds(10));
  }

  @AfterEach
  void stop() {
    if (processes != null) {
      processes.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  private ManagedProcess pod(String name) {
    ManagedProcess p = processes.start(ProcessSpec.builder(name, DurableCounterPod.class.getName()).heap("128m")
        .args(cluster.managerAddress().toString(), "redis://127.0.0.1:" + redis.port() + "/0?prefix=c&timeout=3s")
        .build());
    p.awaitAddress(Duration.ofSeconds(60));
    return p;
  }

  /** Waits until {@code pods} active pods own the shards evenly. */
  private void awaitBalancedOver(int pods) {
    Await.until(pods + " pods owning the shards evenly", Duration.ofSeconds(60), Duration.ofMillis(100), () -> {
      Map<PodId, Integer> owned = new java.util.HashMap<>(cluster.manager().config().ownedCounts());
      owned.values().removeIf(n -> n == 0); // a pod that left stays listed a while, owning nothing
      int sum = owned.values().stream().mapToInt(Integer::intValue).sum();
      return owned.size() == pods && sum == 30
          && owned.values().stream().mapToInt(Integer::intValue).max().orElse(0)
          - owned.values().stream().mapToInt(Integer::intValue).min().orElse(0) <= 1;
    });
  }

  private static long claims(ManagedProcess p) {
    return p.logText().lines().filter(l -> l.startsWith("claim ")).count();
  }

  /** Increments from the client until stopped, recording each counter's acknowledged values and unknown outcomes. */
  static final class Load {
    final AtomicBoolean running = new AtomicBoolean(true);
    final Map<Integer, ConcurrentLinkedQueue<Long>> acked = new ConcurrentHashMap<>();
    final Map<Integer, AtomicInteger> unknown = new ConcurrentHashMap<>();
    final AtomicInteger acks = new AtomicInteger();
    final List<Thread> threads = new ArrayList<>();

    Load(Sharding client, int senders) {
      for (int c = 0; c < COUNTERS; c++) {
        acked.put(c, new ConcurrentLinkedQueue<>());
        unknown.put(c, new AtomicInteger());
      }
      for (int t = 0; t < senders; t++) {
        threads.add(Thread.ofVirtual().start(() -> {
          while (running.get()) {
            int c = ThreadLocalRandom.current().nextInt(COUNTERS);
            EntityRef<DurableCounterPod.Msg> ref = client.entity(DurableCounterPod.TYPE, "c" + c);
            try {
              long v = ref.<Long>ask(DurableCounterPod.Inc::new, Duration.ofSeconds(5)).toCompletableFuture()
                  .get(10, TimeUnit.SECONDS);
              acked.get(c).add(v);
              acks.incrementAndGet();
            } catch (Exception e) {
              unknown.get(c).incrementAndGet(); // it may or may not have been counted
            }
          }
        }));
      }
    }

    void stop() throws InterruptedException {
      running.set(false);
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(30));
      }
    }
  }

  @Test
  void countersLoseNoAcknowledgedIncrementThroughAJoinAGracefulStopAndAKillAndTheJoinerReadsNothing()
      throws Exception {
    ManagedProcess a = pod("pod-a");
    ManagedProcess b = pod("pod-b");
    ManagedProcess c = pod("pod-c");
    awaitBalancedOver(3);
    Sharding client = cluster.addClient();
    Load load = new Load(client, 8);
    try {
      Await.until("every counter acknowledged at least once", Duration.ofSeconds(60), Duration.ofMillis(100),
          () -> load.acked.values().stream().noneMatch(ConcurrentLinkedQueue::isEmpty));

      // A pod joins: every counter it takes was live on its old owner, which carries its state.
      ManagedProcess d = pod("pod-d");
      awaitBalancedOver(4);
      int acksAtJoin = load.acks.get();
      Await.until("increments after the join", Duration.ofSeconds(60), Duration.ofMillis(100),
          () -> load.acks.get() > acksAtJoin + 500);
      assertThat(claims(d)).as("reads of the store by the pod that joined:\n%s", d.logTail(2000)).isZero();

      // One pod stops gracefully, another is killed: their counters read the store on their new owners.
      b.stop(Duration.ofSeconds(30));
      awaitBalancedOver(3);
      c.kill();
      awaitBalancedOver(2);
      int acksAfterKill = load.acks.get();
      Await.until("increments after the kill", Duration.ofSeconds(60), Duration.ofMillis(100),
          () -> load.acks.get() > acksAfterKill + 500);
    } finally {
      load.stop();
    }

    long unknownTotal = 0;
    for (int i = 0; i < COUNTERS; i++) {
      long finalCount = client.entity(DurableCounterPod.TYPE, "c" + i).<Long>ask(DurableCounterPod.Get::new)
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      List<Long> values = new ArrayList<>(load.acked.get(i));
      int unknown = load.unknown.get(i).get();
      unknownTotal += unknown;
      assertThat(values).as("counter c%d: each acknowledged count once (none counted twice)", i)
          .doesNotHaveDuplicates();
      assertThat(values).as("counter c%d: no acknowledged count beyond the final %d (none lost)", i, finalCount)
          .allMatch(v -> v >= 1 && v <= finalCount);
      assertThat(finalCount).as("counter c%d: %d acknowledged, %d unknown", i, values.size(), unknown)
          .isBetween((long) values.size(), (long) values.size() + unknown);
    }
    assertThat(load.acks.get()).isGreaterThan(1000);
    System.out.printf("durable counters: %d increments acknowledged, %d unknown (during the kill)%n",
        load.acks.get(), unknownTotal);
    assertThat(a.isAlive()).isTrue();
  }
}

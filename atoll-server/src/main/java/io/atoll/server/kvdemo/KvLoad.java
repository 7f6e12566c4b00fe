package io.atoll.server.kvdemo;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.util.ArrayList;
import io.atoll.core.slots.KeySlots;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The verifying client's load: {@code writers} threads over one Lettuce cluster connection, each
 * owning the keys {@code i ≡ t (mod writers)}, writing increasing values (SET, 4 of 5 commands)
 * and reading back (GET, checked against the ledger: a read that returns neither the last
 * acknowledged value nor a later unknown one is a stale read). Every failure the client sees is
 * counted by its kind.
 */
final class KvLoad implements AutoCloseable {
  private final StatefulRedisClusterConnection<String, String> connection;
  private final KvLedger ledger;
  private final List<Thread> threads = new ArrayList<>();
  private final LongAdder ops = new LongAdder();
  private final LongAdder staleReads = new LongAdder();
  private final LongAdder lostReads = new LongAdder();
  /** Slots whose keys were lost with a killed node: reads there are not counted as stale. */
  private volatile Set<Integer> lostSlots = Set.of();
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  private volatile boolean running = true;

  KvLoad(StatefulRedisClusterConnection<String, String> connection, KvLedger ledger, int writers, long seed) {
    this.connection = connection;
    this.ledger = ledger;
    for (int t = 0; t < writers; t++) {
      int me = t;
      SplittableRandom random = new SplittableRandom(seed + t);
      threads.add(Thread.ofPlatform().daemon().name("kvdemo-writer-" + t).start(() -> write(me, writers, random)));
    }
  }

  private void write(int me, int writers, SplittableRandom random) {
    RedisAdvancedClusterCommands<String, String> cmd = connection.sync();
    int mine = (ledger.size() - me + writers - 1) / writers;
    long value = 0;
    while (running) {
      int key = me + writers * random.nextInt(mine);
      try {
        if (random.nextInt(5) == 0) {
          String read = cmd.get(KvLedger.key(key));
          if (!ledger.consistent(key, read)) {
            if (lostSlots.contains(KeySlots.slotOf(KvLedger.key(key).getBytes(StandardCharsets.UTF_8)))) {
              lostReads.increment();
            } else {
              staleReads.increment();
            }
          }
        } else {
          value++;
          long v = value;
          try {
            cmd.set(KvLedger.key(key), Long.toString(v));
            ledger.acked(key, v);
          } catch (RuntimeException e) {
            // A refusal with an error reply did not write; anything else may have.
            if (!(e instanceof RedisCommandExecutionException)) {
              ledger.unknown(key, v);
            }
            throw e;
          }
        }
        ops.increment();
      } catch (RuntimeException e) {
        errors.computeIfAbsent(kind(e), k -> new LongAdder()).increment();
      }
    }
  }

  private static String kind(RuntimeException e) {
    String m = String.valueOf(e.getMessage());
    int space = m.indexOf(' ');
    String first = space > 0 ? m.substring(0, space) : m;
    return e.getClass().getSimpleName() + (first.length() <= 24 && first.equals(first.toUpperCase()) ? ":" + first : "");
  }

  /** From now on, reads of keys in {@code slots} that miss acknowledged writes count as lost, not stale. */
  void lostSlots(Set<Integer> slots) {
    lostSlots = Set.copyOf(slots);
  }

  /** Reads that missed a write lost with a killed node. */
  long lostReads() {
    return lostReads.sum();
  }

  long ops() {
    return ops.sum();
  }

  long staleReads() {
    return staleReads.sum();
  }

  long errors() {
    return errors.values().stream().mapToLong(LongAdder::sum).sum();
  }

  /** Errors by kind (exception class and Redis error word). */
  Map<String, Long> errorKinds() {
    Map<String, Long> m = new java.util.TreeMap<>();
    errors.forEach((k, v) -> m.put(k, v.sum()));
    return m;
  }

  @Override
  public void close() {
    running = false;
    for (Thread t : threads) {
      try {
        t.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}

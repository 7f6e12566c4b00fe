package io.atoll.server.chaos;

import io.atoll.testkit.history.Operation;
import io.atoll.testkit.history.RedisKey.Command;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The verifying client of a KV chaos run: threads sharing one cluster connection send SET and GET
 * to register keys ({@code r:<n>}, every SET value distinct) and INCR and GET to counter keys
 * ({@code c:<n>}), at a bounded rate, and record every operation with its start and end on this
 * JVM's {@link System#nanoTime()}. A write not answered (a timeout, a connection closed while it
 * waited) or answered with an error that can come after it ran is recorded as pending: it may have
 * taken effect, later, or never. A write refused before it ran ({@link #notRun}) and a read without
 * an answer say nothing and are not recorded. The connection is Lettuce's without
 * auto-reconnect (at most once: nothing sent again behind the checker's back), replaced when a node
 * it lost is back. Thread-safe.
 */
final class KvChaosLoad {

  private final Supplier<StatefulRedisClusterConnection<String, String>> connect;
  private volatile StatefulRedisClusterConnection<String, String> conn;
  private long renewedAt; // guarded by this
  private final AtomicLong renewals = new AtomicLong();
  private final int keys;
  private final int threads;
  private final int rate;
  private final long seed;
  private final Map<String, List<Operation<Command, String>>> history = new ConcurrentHashMap<>();
  private final Map<String, Long> failingSince = new ConcurrentHashMap<>();
  private final AtomicLong longestOutage = new AtomicLong();
  private final AtomicLong answered = new AtomicLong();
  private final AtomicLong unanswered = new AtomicLong();
  private final Map<String, Long> causes = new ConcurrentHashMap<>();
  private final List<Thread> running = new ArrayList<>();
  private volatile boolean stop;

  /**
   * @param keys how many keys: half registers, half counters
   * @param rate operations per second over all threads
   */
  KvChaosLoad(Supplier<StatefulRedisClusterConnection<String, String>> connect, int keys, int threads, int rate,
      long seed) {
    this.connect = connect;
    this.conn = connect.get();
    this.keys = Math.max(2, keys);
    this.threads = threads;
    this.rate = rate;
    this.seed = seed;
  }

  KvChaosLoad start() {
    for (int t = 0; t < threads; t++) {
      int id = t;
      running.add(Thread.ofPlatform().name("kv-chaos-client-" + t).daemon(true).start(() -> loop(id)));
    }
    return this;
  }

  private void loop(int id) {
    Random random = new Random(seed * 31 + id);
    long period = TimeUnit.SECONDS.toNanos(1) * threads / Math.max(1, rate);
    long next = System.nanoTime();
    long seq = 0;
    while (!stop) {
      next = Math.max(next + period, System.nanoTime() - period); // no burst to catch up after a stall
      LockSupport.parkNanos(next - System.nanoTime()); // the load's pace
      int n = random.nextInt(keys);
      boolean counter = n % 2 == 1;
      String key = (counter ? "c:" : "r:") + n / 2;
      Command c;
      if (random.nextInt(5) < 2) {
        c = Command.get();
      } else if (counter) {
        c = Command.incr();
      } else {
        c = Command.set("t" + id + "-" + (++seq));
      }
      run(key, c);
    }
  }

  /** Sends one command and records it; whether it was answered. */
  private boolean run(String key, Command c) {
    StatefulRedisClusterConnection<String, String> used = conn;
    RedisAdvancedClusterCommands<String, String> redis = used.sync();
    long invoked = System.nanoTime();
    String out;
    try {
      out = switch (c.kind()) {
        case SET -> redis.set(key, c.value());
        case GET -> redis.get(key);
        case INCR -> Long.toString(redis.incr(key));
      };
    } catch (RuntimeException e) {
      unanswered.incrementAndGet();
      causes.merge(cause(e), 1L, Long::sum);
      failingSince.putIfAbsent(key, invoked);
      if (c.kind() != io.atoll.testkit.history.RedisKey.Kind.GET && !notRun(e)) {
        record(key, Operation.pending(c, invoked));
      }
      if (String.valueOf(e.getMessage()).startsWith("Currently not connected")) {
        renew(used);
      }
      return false;
    }
    long returned = System.nanoTime();
    answered.incrementAndGet();
    Long since = failingSince.remove(key);
    if (since != null) {
      longestOutage.accumulateAndGet(returned - since, Math::max);
    }
    record(key, new Operation<>(c, out, invoked, returned));
    return true;
  }

  /**
   * Whether a failure says the command was not run, so it is left out of the history (an
   * increment recorded as pending could explain one too many later): refused by the client before
   * it was queued (no connection, no node for the slot) or answered with an error the node gives
   * before it runs a command (Atoll KV routes and checks its state first: -MOVED and -ASK past the
   * client's redirects, -TRYAGAIN, -CLUSTERDOWN, -LOADING). Anything else (a timeout, a connection
   * closed while waiting, -NOREPLICAS, which can come after the write ran) may have taken effect.
   */
  static boolean notRun(RuntimeException e) {
    String m = String.valueOf(e.getMessage());
    if (e instanceof io.lettuce.core.RedisCommandExecutionException) {
      return m.startsWith("MOVED ") || m.startsWith("ASK ") || m.startsWith("TRYAGAIN ")
          || m.startsWith("CLUSTERDOWN ") || m.startsWith("LOADING ");
    }
    return e instanceof io.lettuce.core.RedisConnectionException || e instanceof
        io.lettuce.core.cluster.PartitionSelectorException || m.startsWith("Currently not connected");
  }

  /**
   * Replaces the cluster connection, at most every 500 ms: without auto-reconnect, Lettuce keeps a
   * connection to a node that went away closed, and rejects every command for that node, even once
   * the node is back on its port. What the old one had in flight fails (recorded as unanswered).
   */
  private synchronized void renew(StatefulRedisClusterConnection<String, String> failed) {
    if (conn != failed || renewedAt != 0 && System.nanoTime() - renewedAt < TimeUnit.MILLISECONDS.toNanos(500)) {
      return; // replaced already, or a moment ago
    }
    try {
      conn = connect.get();
      renewedAt = System.nanoTime();
      renewals.incrementAndGet();
      failed.closeAsync();
    } catch (RuntimeException e) {
      // no node answers now: the next failure tries again
    }
  }

  /** How many times the client's connection was replaced. */
  long renewals() {
    return renewals.get();
  }

  /** Closes the cluster connection in use. */
  void close() {
    conn.close();
  }

  private void record(String key, Operation<Command, String> op) {
    history.computeIfAbsent(key, k -> Collections.synchronizedList(new ArrayList<>())).add(op);
  }

  /**
   * The longest a key went without an answer since the last call (from the first unanswered
   * operation to the next answered one, or to now if none yet), in milliseconds; resets the measure.
   */
  long takeLongestOutageMillis() {
    long now = System.nanoTime();
    long longest = longestOutage.getAndSet(0);
    for (Map.Entry<String, Long> e : failingSince.entrySet()) {
      longest = Math.max(longest, now - e.getValue());
      failingSince.replace(e.getKey(), e.getValue(), now); // counted up to here; the rest goes to the next window
    }
    return TimeUnit.NANOSECONDS.toMillis(longest);
  }

  /** Why operations went unanswered since the last call (an error reply's first word, or the exception's kind), with counts; resets. */
  Map<String, Long> takeCauses() {
    Map<String, Long> out = new TreeMap<>();
    for (String k : causes.keySet()) {
      Long n = causes.remove(k);
      if (n != null) {
        out.put(k, n);
      }
    }
    return out;
  }

  private static String cause(RuntimeException e) {
    if (e instanceof io.lettuce.core.RedisCommandExecutionException) {
      String m = String.valueOf(e.getMessage());
      int sp = m.indexOf(' ');
      return sp > 0 ? m.substring(0, sp) : m;
    }
    String m = String.valueOf(e.getMessage());
    return e.getClass().getSimpleName() + (m.length() > 40 ? ": " + m.substring(0, 40) : ": " + m);
  }

  long answered() {
    return answered.get();
  }

  long unanswered() {
    return unanswered.get();
  }

  /**
   * Stops the threads, waiting for each one's operation in flight (each ends within the client's
   * timeout); false if one is still running after 30 s, when the history may miss its operation.
   */
  boolean stop() throws InterruptedException {
    stop = true;
    boolean all = true;
    for (Thread t : running) {
      t.join(TimeUnit.SECONDS.toMillis(30));
      all &= !t.isAlive();
    }
    return all;
  }

  /**
   * Reads every key once more (after {@link #stop()}), retrying a read without an answer until
   * {@code deadlineNanos}; returns the keys it could not read.
   */
  List<String> readAll(long deadlineNanos) {
    List<String> unread = new ArrayList<>();
    for (int n = 0; n < keys; n++) {
      String key = (n % 2 == 1 ? "c:" : "r:") + n / 2;
      while (!run(key, Command.get())) {
        if (System.nanoTime() - deadlineNanos > 0) {
          unread.add(key);
          break;
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // retry pacing
      }
    }
    return unread;
  }

  /** Every key's operations, by key. */
  Map<String, List<Operation<Command, String>>> history() {
    Map<String, List<Operation<Command, String>>> out = new TreeMap<>();
    history.forEach((k, v) -> {
      synchronized (v) {
        out.put(k, List.copyOf(v));
      }
    });
    return out;
  }
}

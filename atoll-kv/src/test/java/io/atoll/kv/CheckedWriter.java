package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client that reads and writes a fixed set of keys in turn through a cluster connection while a
 * test moves slots or kills nodes, and checks each read: it must show the last acknowledged write
 * of its key or a later one that was tried (a write with no reply may have been applied). Each
 * value is a counter, a colon and a padding.
 */
final class CheckedWriter implements AutoCloseable {
  private final RedisAdvancedClusterCommands<String, String> redis;
  private final List<String> keys;
  private final String pad;
  private final Map<String, Long> acked = new ConcurrentHashMap<>();
  private final Map<String, Long> tried = new ConcurrentHashMap<>();
  private final List<String> wrong = Collections.synchronizedList(new ArrayList<>());
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicLong errors = new AtomicLong();
  private final Thread thread;

  /** Writes each key's first value (each acknowledged before it returns), then starts the loop. */
  CheckedWriter(RedisAdvancedClusterCommands<String, String> redis, List<String> keys, String pad) {
    this.redis = redis;
    this.keys = List.copyOf(keys);
    this.pad = pad;
    for (String k : keys) {
      redis.set(k, "0:" + pad);
      acked.put(k, 0L);
      tried.put(k, 0L);
    }
    thread = Thread.ofPlatform().daemon().name("checked-writer").start(this::run);
  }

  private void run() {
    long n = 0;
    while (!stop.get()) {
      String k = keys.get((int) (n++ % keys.size()));
      try {
        Long seen = counter(redis.get(k));
        if (seen == null || seen < acked.get(k) || seen > tried.get(k)) {
          wrong.add(k + " read " + seen + ", acknowledged " + acked.get(k) + ", tried up to " + tried.get(k));
        }
        long next = tried.get(k) + 1;
        tried.put(k, next);
        redis.set(k, next + ":" + pad);
        acked.put(k, next);
      } catch (RuntimeException e) {
        errors.incrementAndGet(); // not acknowledged: nothing is promised about it
      }
    }
  }

  /** {@code perTag} keys for each hash tag of {@code tags}, all of a tag in its slot. */
  static List<String> keys(List<String> tags, int perTag) {
    List<String> keys = new ArrayList<>();
    for (String t : tags) {
      for (int i = 0; i < perTag; i++) {
        keys.add("{" + t + "}:" + i);
      }
    }
    return keys;
  }

  /**
   * A Lettuce cluster client seeded at {@code port} that follows up to 10 redirects and refreshes
   * its view of the slots every 500 ms and on every redirect or failure.
   */
  static io.lettuce.core.cluster.RedisClusterClient client(int port) {
    io.lettuce.core.cluster.RedisClusterClient cluster = io.lettuce.core.cluster.RedisClusterClient.create(
        io.lettuce.core.RedisURI.create("127.0.0.1", port));
    cluster.setOptions(io.lettuce.core.cluster.ClusterClientOptions.builder().maxRedirects(10).topologyRefreshOptions(
        io.lettuce.core.cluster.ClusterTopologyRefreshOptions.builder().enableAllAdaptiveRefreshTriggers()
            .enablePeriodicRefresh(java.time.Duration.ofMillis(500)).build()).build());
    return cluster;
  }

  private static Long counter(String v) {
    return v == null ? null : Long.parseLong(v.substring(0, v.indexOf(':')));
  }

  /** The writes acknowledged, over every key. */
  long acknowledged() {
    return acked.values().stream().mapToLong(Long::longValue).sum();
  }

  /** Stops the loop, then checks that no read missed an acknowledged write, and reads every key again. */
  void stopAndCheck() throws InterruptedException {
    close();
    assertThat(wrong).as("reads that missed an acknowledged write").isEmpty();
    for (String k : keys) {
      // A read may fail while the client still follows the cluster's last change (a timeout, a
      // view of the slots taken during a failover): it is tried again. What is checked is the
      // value, not how soon it is served.
      java.util.concurrent.atomic.AtomicReference<Long> seen = new java.util.concurrent.atomic.AtomicReference<>();
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).pollDelay(java.time.Duration.ZERO)
          .ignoreExceptionsInstanceOf(io.lettuce.core.RedisException.class)
          .until(() -> {
            seen.set(counter(redis.get(k)));
            return true;
          });
      assertThat(seen.get()).as(k).isNotNull();
      assertThat(seen.get()).as(k).isBetween(acked.get(k), tried.get(k));
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop.set(true);
    thread.join(10_000);
  }
}

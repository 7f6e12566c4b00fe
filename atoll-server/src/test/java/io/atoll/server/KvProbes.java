package io.atoll.server;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.time.Duration;
import java.util.List;

/** What the KV process tests ask nodes, one plain connection or one cluster client at a time. */
final class KvProbes {
  private KvProbes() {}

  /** A node's address with a 3 s timeout. */
  static RedisURI uri(int port) {
    return RedisURI.builder().withHost("127.0.0.1").withPort(port).withTimeout(Duration.ofSeconds(3)).build();
  }

  /** The Redis id of the node on {@code port}. */
  static String myId(RedisClient plain, int port) {
    try (StatefulRedisConnection<String, String> c = plain.connect(uri(port))) {
      return c.sync().clusterMyId();
    }
  }

  /** How many slots the node on {@code port} says it owns (0 if it does not answer). */
  static int slotsOf(RedisClient plain, int port) {
    try (StatefulRedisConnection<String, String> c = plain.connect(uri(port))) {
      String me = c.sync().clusterMyId();
      int owned = 0;
      for (Object o : c.sync().clusterSlots()) {
        List<?> range = (List<?>) o;
        if (me.equals(String.valueOf(((List<?>) range.get(2)).get(2)))) {
          owned += (int) ((Long) range.get(1) - (Long) range.get(0) + 1);
        }
      }
      return owned;
    } catch (RuntimeException e) {
      return 0;
    }
  }

  /** The index of {@code port} in {@code ports}. */
  static int indexOf(int[] ports, int port) {
    for (int i = 0; i < ports.length; i++) {
      if (ports[i] == port) {
        return i;
      }
    }
    throw new AssertionError("no port " + port);
  }

  /**
   * GET, retried while the nodes' views of a slot disagree for a moment (a config being adopted by
   * one node before another: Lettuce gives up after its redirects) or the client's own view still
   * names a node that left — within a deadline, so a slot that stays unreachable still fails the test.
   */
  static String read(RedisAdvancedClusterCommands<String, String> r, String key) {
    long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
    while (true) {
      try {
        return r.get(key);
      } catch (io.lettuce.core.RedisCommandExecutionException | io.lettuce.core.RedisConnectionException e) {
        // A connection refused: the client's view of the slots still names a node that left (it
        // refreshes it every 500 ms).
        String m = String.valueOf(e.getMessage());
        boolean moving = e instanceof io.lettuce.core.RedisConnectionException || m.startsWith("MOVED")
            || m.startsWith("ASK") || m.startsWith("TRYAGAIN") || m.startsWith("CLUSTERDOWN");
        if (!moving || System.nanoTime() - deadline > 0) {
          throw e;
        }
        java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // retry pacing
      }
    }
  }
}

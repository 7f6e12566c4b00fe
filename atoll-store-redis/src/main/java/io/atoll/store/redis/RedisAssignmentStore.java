package io.atoll.store.redis;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StaleTermException;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import io.atoll.core.spi.LeaderWatch;
import io.atoll.core.spi.VersionWatch;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.TrackingArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The {@link AssignmentStore} in Redis, through Lettuce.
 *
 * <p><b>Keys</b> (one hash tag, so one slot of a Redis Cluster): {@code {prefix}:state}, a hash of
 * the version ({@code v}), the writer's term ({@code t}) and the data ({@code d});
 * {@code {prefix}:term}, the last term granted; {@code {prefix}:leader}, {@code "term\nholder"}
 * with the lease's expiry. Changes are published on the channel {@code {prefix}:changes}.
 *
 * <p><b>Compare-and-set</b> is one Lua script: it compares the term with the last granted and the
 * version with the stored one, writes the hash and publishes the new version — atomically, as
 * Redis runs a script. <b>Leadership</b> is a script too: if no leader key exists, {@code INCR}
 * the term and {@code SET leader NX PX ttl}; a renewal extends the key if it is still the
 * holder's ({@code PEXPIRE}), or sets it again if it lapsed and the term is still the last one.
 * Redis expires keys with millisecond precision.
 *
 * <p><b>Watch</b>: a pub/sub subscription to the channel wakes the watch, which reads the state and
 * delivers it if its version grew; a poll every second covers messages missed while disconnected.
 *
 * <p><b>Leader watch</b>: {@code CLIENT TRACKING} in broadcast mode on the leader key, on a
 * connection of its own: Redis pushes an invalidation when the key is set, deleted or expires
 * (its active expiry finds an expired key within about 100 ms at the default {@code hz}), with no
 * server configuration needed; a read every second covers a lost connection.
 *
 * <p><b>Durability</b> is the server's: a save is acknowledged once Redis applied it, which survives
 * a restart only with AOF ({@code appendonly yes}; {@code appendfsync always} for every save).
 * Lettuce reconnects by itself; while it is disconnected, calls fail at once with a
 * {@link StoreException}. Thread-safe.
 */
public final class RedisAssignmentStore implements AssignmentStore {

  private static final System.Logger log = System.getLogger(RedisAssignmentStore.class.getName());

  private static final String SAVE = """
      local granted = tonumber(redis.call('GET', KEYS[2]) or '0')
      local term = tonumber(ARGV[1])
      if term < granted then return {'STALE', tostring(granted)} end
      if term > granted then return {'UNGRANTED', tostring(granted)} end
      local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
      if v ~= tonumber(ARGV[2]) then return {'CONFLICT', tostring(v)} end
      v = v + 1
      redis.call('HSET', KEYS[1], 'v', tostring(v), 't', ARGV[1], 'd', ARGV[3])
      redis.call('PUBLISH', ARGV[4], tostring(v))
      return {'OK', tostring(v)}
      """;

  private static final String ACQUIRE = """
      if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
      local t = redis.call('INCR', KEYS[2])
      redis.call('SET', KEYS[1], tostring(t) .. '\\n' .. ARGV[1], 'NX', 'PX', ARGV[2])
      return t
      """;

  private static final String RENEW = """
      local mine = ARGV[2] .. '\\n' .. ARGV[1]
      local v = redis.call('GET', KEYS[1])
      if v == mine then
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        return 1
      end
      if v then return 0 end
      if redis.call('GET', KEYS[2]) == ARGV[2] then
        redis.call('SET', KEYS[1], mine, 'PX', ARGV[3])
        return 1
      end
      return 0
      """;

  private static final String RELEASE = """
      if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
      return 0
      """;

  private final RedisStoreOptions options;
  private final RedisClient client;
  private final StatefulRedisConnection<byte[], byte[]> connection;
  private final byte[] stateKey;
  private final byte[] termKey;
  private final byte[] leaderKey;
  private final byte[] channel;
  private final String name;
  private Lease held; // guarded by this
  private volatile boolean closed;

  private RedisAssignmentStore(RedisStoreOptions options, RedisClient client,
      StatefulRedisConnection<byte[], byte[]> connection) {
    this.options = options;
    this.client = client;
    this.connection = connection;
    String p = "{" + options.prefix() + "}:";
    this.stateKey = bytes(p + "state");
    this.termKey = bytes(p + "term");
    this.leaderKey = bytes(p + "leader");
    this.channel = bytes(p + "changes");
    this.name = "redis store " + options.describe();
  }

  /**
   * Connects to the Redis at {@code uri} (see {@link RedisStoreOptions} for its form).
   *
   * @throws IllegalArgumentException if the URI is malformed
   * @throws StoreException if the server cannot be reached or refuses the credentials
   */
  public static RedisAssignmentStore open(String uri) {
    return open(RedisStoreOptions.parse(uri));
  }

  /**
   * Connects with {@code options}.
   *
   * @throws StoreException if the server cannot be reached or refuses the credentials
   */
  public static RedisAssignmentStore open(RedisStoreOptions options) {
    RedisClient client = RedisClients.create(options);
    try {
      return new RedisAssignmentStore(options, client, client.connect(ByteArrayCodec.INSTANCE));
    } catch (RedisException e) {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      throw new StoreException("redis store " + options.describe() + ": cannot connect: " + e.getMessage(), e);
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String string(Object o) {
    return o == null ? null : new String((byte[]) o, StandardCharsets.UTF_8);
  }

  private RedisCommands<byte[], byte[]> redis() {
    if (closed) {
      throw new StoreException(name + ": closed");
    }
    return connection.sync();
  }

  /** Runs a command, turning Redis failures into {@link StoreException}s that name this store. */
  private <T> T call(String what, Supplier<T> command) {
    try {
      return command.get();
    } catch (RedisException e) {
      throw new StoreException(name + ": " + what + " failed: " + e.getMessage(), e);
    }
  }

  @Override
  public Optional<Stored> load() {
    List<io.lettuce.core.KeyValue<byte[], byte[]>> f = call("load",
        () -> redis().hmget(stateKey, bytes("v"), bytes("t"), bytes("d")));
    if (!f.get(0).hasValue()) {
      return Optional.empty();
    }
    try {
      return Optional.of(new Stored(Long.parseLong(string(f.get(0).getValue())),
          Long.parseLong(string(f.get(1).getValue())), f.get(2).getValueOrElse(new byte[0])));
    } catch (NumberFormatException | java.util.NoSuchElementException e) {
      throw new StoreException(name + ": damaged state hash " + string(stateKey)
          + " (expected: fields v, t, d written by Atoll)", e);
    }
  }

  @Override
  public long save(byte[] data, long term, long expectedVersion) {
    if (data.length > MAX_BYTES) {
      throw new IllegalArgumentException("state: " + data.length + " bytes (expected: <= " + MAX_BYTES + ")");
    }
    List<Object> r = call("save", () -> redis().eval(SAVE, ScriptOutputType.MULTI,
        new byte[][] {stateKey, termKey}, bytes(Long.toString(term)), bytes(Long.toString(expectedVersion)), data,
        channel));
    String outcome = string(r.get(0));
    long value = Long.parseLong(string(r.get(1)));
    return switch (outcome) {
      case "OK" -> value;
      case "STALE" -> throw new StaleTermException(name, term, value);
      case "UNGRANTED" -> throw new StoreException(name + ": term " + term + " was never granted (expected: "
          + value + ", the last one granted)");
      case "CONFLICT" -> throw new StoreConflictException(name, expectedVersion, value);
      default -> throw new StoreException(name + ": save: unexpected answer " + outcome);
    };
  }

  @Override
  public synchronized Optional<Lease> tryAcquire(String holder, Duration ttl) {
    AssignmentStore.checkLeaseArguments(holder, ttl);
    long term = call("taking the leadership", () -> redis().<Long>eval(ACQUIRE, ScriptOutputType.INTEGER,
        new byte[][] {leaderKey, termKey}, bytes(holder), bytes(Long.toString(ttl.toMillis()))));
    if (term == 0) {
      return Optional.empty();
    }
    held = new Lease(holder, term, ttl);
    return Optional.of(held);
  }

  @Override
  public synchronized boolean renew(Lease lease) {
    long ok = call("renewing the lease", () -> redis().<Long>eval(RENEW, ScriptOutputType.INTEGER,
        new byte[][] {leaderKey, termKey}, bytes(lease.holder()), bytes(Long.toString(lease.term())),
        bytes(Long.toString(lease.ttl().toMillis()))));
    if (ok == 1) {
      held = lease;
      return true;
    }
    if (lease.equals(held)) {
      held = null;
    }
    return false;
  }

  @Override
  public synchronized void release(Lease lease) {
    call("releasing the lease", () -> redis().<Long>eval(RELEASE, ScriptOutputType.INTEGER,
        new byte[][] {leaderKey}, bytes(lease.term() + "\n" + lease.holder())));
    if (lease.equals(held)) {
      held = null;
    }
  }

  @Override
  public Optional<Leader> leader() {
    byte[] v = call("reading the leader", () -> redis().get(leaderKey));
    if (v == null) {
      return Optional.empty();
    }
    String s = new String(v, StandardCharsets.UTF_8);
    int nl = s.indexOf('\n');
    try {
      return Optional.of(new Leader(s.substring(nl + 1), Long.parseLong(s.substring(0, nl))));
    } catch (RuntimeException e) {
      throw new StoreException(name + ": damaged leader key " + string(leaderKey) + " (expected: term\\nholder)", e);
    }
  }

  @Override
  public Watch watch(long afterVersion, Consumer<Stored> onChange) {
    redis();
    StatefulRedisPubSubConnection<byte[], byte[]> sub;
    try {
      sub = client.connectPubSub(ByteArrayCodec.INSTANCE);
    } catch (RedisException e) {
      throw new StoreException(name + ": cannot watch: " + e.getMessage(), e);
    }
    VersionWatch w = new VersionWatch(afterVersion, onChange, v -> load(), () -> closed,
        e -> log.log(System.Logger.Level.DEBUG, name + ": watch: " + e)).onClose(sub::closeAsync);
    sub.addListener(new RedisPubSubAdapter<>() {
      @Override
      public void message(byte[] ch, byte[] message) {
        w.wake();
      }
    });
    try {
      sub.sync().subscribe(channel);
    } catch (RedisException e) {
      w.close();
      throw new StoreException(name + ": cannot watch: " + e.getMessage(), e);
    }
    // The poll covers publications missed while disconnected.
    return w.pollEvery(Duration.ofSeconds(1), "atoll-redis-store-watch");
  }

  /**
   * Redis' client-side-caching invalidations tell a change of the leader key — set, deleted, or
   * expired by the server — on a connection of the watch's own that asked for them with
   * {@code CLIENT TRACKING ON BCAST PREFIX {prefix}:leader} (RESP3 push messages). That needs no
   * change to the server's configuration, unlike keyspace notifications
   * ({@code notify-keyspace-events} is server-wide, not per connection). A reconnected connection
   * has lost its tracking, so every read arms it again first; reads run at each invalidation and
   * at least every second. A server that refuses tracking (before Redis 6, or an ACL without
   * {@code CLIENT}) is read every {@code poll} instead.
   */
  @Override
  public Watch watchLeader(Duration poll, LeaderListener listener) {
    LeaderWatch.checkPoll(poll);
    redis();
    StatefulRedisConnection<byte[], byte[]> tracking;
    try {
      tracking = client.connect(ByteArrayCodec.INSTANCE);
    } catch (RedisException e) {
      throw new StoreException(name + ": cannot watch the leader: " + e.getMessage(), e);
    }
    String prefix = string(leaderKey);
    boolean tracked;
    try {
      armTracking(tracking, prefix);
      tracked = true;
    } catch (io.lettuce.core.RedisCommandExecutionException e) {
      log.log(System.Logger.Level.INFO, name + ": no key tracking (" + e.getMessage() + "); the leader is read every "
          + poll.toMillis() + " ms");
      tracked = false;
    } catch (RedisException e) {
      tracking.close();
      throw new StoreException(name + ": cannot watch the leader: " + e.getMessage(), e);
    }
    boolean armed = tracked;
    LeaderWatch w = new LeaderWatch(() -> {
      if (armed) {
        call("tracking the leader key", () -> {
          armTracking(tracking, prefix);
          return null;
        });
      }
      return leader();
    }, listener, () -> closed, e -> log.log(System.Logger.Level.DEBUG, name + ": leader watch: " + e));
    w.onClose(tracking::closeAsync);
    tracking.addListener(m -> {
      if ("invalidate".equals(m.getType())) {
        w.wake();
      }
    });
    Duration period = !tracked ? poll : poll.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : poll;
    return w.pollEvery(period, "atoll-redis-store-leader-watch");
  }

  /** Turns tracking off and on again: a no-op on a live connection, the repair on a reconnected one. */
  private static void armTracking(StatefulRedisConnection<byte[], byte[]> tracking, String prefix) {
    tracking.sync().clientTracking(TrackingArgs.Builder.enabled(false));
    tracking.sync().clientTracking(TrackingArgs.Builder.enabled().bcast().prefixes(StandardCharsets.UTF_8, prefix));
  }

  @Override
  public void close() {
    Lease l;
    synchronized (this) {
      if (closed) {
        return;
      }
      l = held;
    }
    if (l != null) {
      try {
        release(l); // a standby takes over at once
      } catch (StoreException e) {
        // it lapses by itself
      }
    }
    closed = true;
    connection.close();
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
  }

  /** The options this store was opened with. */
  public RedisStoreOptions options() {
    return options;
  }

  @Override
  public String toString() {
    return name;
  }
}

package io.atoll.store.redis;

import io.atoll.core.FencingToken;
import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreException;
import io.atoll.core.spi.StoreException;
import io.atoll.core.spi.StoredState;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Durable entities' state in Redis: one hash per entity, at
 * {@code {prefix}:entity:{length of type}:{type}:{id}}, with the greatest token that claimed or
 * wrote it ({@code e} its epoch, {@code g} its lease generation), the revision {@code r} and the
 * state {@code s}. A claim and a save are each one Lua script, so each compares and writes in one
 * atomic step on the server.
 *
 * <p>What Redis keeps after an acknowledged save is what its persistence keeps: with
 * {@code appendonly yes} and {@code appendfsync always}, every acknowledged save outlives a crash of
 * the server; with the defaults, the last second or more may be lost, and an activation may then
 * read a state older than one it acknowledged. Tokens are compared as Lua numbers, exact below
 * 2^53, far above any epoch or generation a cluster reaches.
 *
 * <p>A command that times out or finds the connection down fails with {@code UNAVAILABLE} (it may
 * have run); Lettuce reconnects by itself.
 */
public final class RedisStateStore implements StateStore {

  private static final String CLAIM = """
      local h = redis.call('HMGET', KEYS[1], 'e', 'g', 'r', 's')
      if h[1] then
        local se, sg, e, g = tonumber(h[1]), tonumber(h[2]), tonumber(ARGV[1]), tonumber(ARGV[2])
        if se > e or (se == e and sg > g) then return {'FENCED', h[1], h[2]} end
      end
      redis.call('HSET', KEYS[1], 'e', ARGV[1], 'g', ARGV[2])
      if h[3] then return {'OK', h[3], h[4]} end
      return {'OK', '0'}
      """;

  private static final String SAVE = """
      local h = redis.call('HMGET', KEYS[1], 'e', 'g', 'r')
      if h[1] then
        local se, sg, e, g = tonumber(h[1]), tonumber(h[2]), tonumber(ARGV[1]), tonumber(ARGV[2])
        if se > e or (se == e and sg > g) then return {'FENCED', h[1], h[2]} end
      end
      local r = h[3] or '0'
      if r ~= ARGV[3] then return {'CONFLICT', r} end
      redis.call('HSET', KEYS[1], 'e', ARGV[1], 'g', ARGV[2], 'r', ARGV[4], 's', ARGV[5])
      return {'OK'}
      """;

  private final RedisStoreOptions options;
  private final RedisClient client;
  private final StatefulRedisConnection<byte[], byte[]> connection;
  private final String name;
  private volatile boolean closed;

  private RedisStateStore(RedisStoreOptions options, RedisClient client, StatefulRedisConnection<byte[], byte[]> connection) {
    this.options = options;
    this.client = client;
    this.connection = connection;
    this.name = "redis state store " + options.describe();
  }

  /**
   * Connects to the Redis at {@code uri} (see {@link RedisStoreOptions} for its form; its prefix
   * starts every key).
   *
   * @throws IllegalArgumentException if the URI is malformed
   * @throws StoreException if the server cannot be reached or refuses the credentials
   */
  public static RedisStateStore open(String uri) {
    return open(RedisStoreOptions.parse(uri));
  }

  /**
   * Connects with {@code options}.
   *
   * @throws StoreException if the server cannot be reached or refuses the credentials
   */
  public static RedisStateStore open(RedisStoreOptions options) {
    RedisClient client = RedisClients.create(options);
    try {
      return new RedisStateStore(options, client, client.connect(ByteArrayCodec.INSTANCE));
    } catch (RedisException e) {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      throw new StoreException("redis state store " + options.describe() + ": cannot connect: " + e.getMessage(), e);
    }
  }

  /** The options this store was opened with. */
  public RedisStoreOptions options() {
    return options;
  }

  /**
   * The key of an entity. An id with a lone surrogate has no UTF-8 form (encoding would turn it
   * into '?', the same as another id's): its key names the id's UTF-16 in hex, under another word.
   */
  private byte[] key(String type, String id) {
    if (StandardCharsets.UTF_8.newEncoder().canEncode(id)) {
      return bytes(options.prefix() + ":entity:" + type.length() + ":" + type + ":" + id);
    }
    return bytes(options.prefix() + ":entity-utf16:" + type.length() + ":" + type + ":"
        + java.util.HexFormat.of().formatHex(id.getBytes(StandardCharsets.UTF_16BE)));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String string(Object o) {
    return new String((byte[]) o, StandardCharsets.UTF_8);
  }

  private List<Object> run(String what, String type, String id, String script, byte[]... args)
      throws StateStoreException {
    if (closed) {
      throw new StateStoreException(StateStoreException.Reason.UNAVAILABLE, name + ": closed");
    }
    try {
      return connection.sync().eval(script, ScriptOutputType.MULTI, new byte[][] {key(type, id)}, args);
    } catch (RedisException e) {
      throw new StateStoreException(StateStoreException.Reason.UNAVAILABLE, name + ": " + what + " of " + type + "/" + id
          + " failed (it may or may not have been done): " + e.getMessage(), e);
    }
  }

  @Override
  public StoredState claim(String type, String id, FencingToken token) throws StateStoreException {
    List<Object> r = run("claim", type, id, CLAIM, bytes(Long.toString(token.epoch())),
        bytes(Long.toString(token.generation())));
    String outcome = string(r.get(0));
    if (outcome.equals("FENCED")) {
      throw fenced(type, id, token, r);
    }
    long revision = parse(type, id, r.get(1));
    return revision == 0 ? StoredState.NONE : new StoredState(revision, r.size() > 2 ? (byte[]) r.get(2) : new byte[0]);
  }

  @Override
  public long save(String type, String id, FencingToken token, long revision, byte[] state) throws StateStoreException {
    StateStore.checkSave(type, id, revision, state);
    List<Object> r = run("save", type, id, SAVE, bytes(Long.toString(token.epoch())),
        bytes(Long.toString(token.generation())), bytes(Long.toString(revision)), bytes(Long.toString(revision + 1)),
        state);
    return switch (string(r.get(0))) {
      case "OK" -> revision + 1;
      case "FENCED" -> throw fenced(type, id, token, r);
      default -> throw new StateStoreException(StateStoreException.Reason.CONFLICT, name + ": state of " + type + "/" + id
          + " written at revision " + revision + " but the store holds revision " + parse(type, id, r.get(1)));
    };
  }

  private long parse(String type, String id, Object revision) throws StateStoreException {
    try {
      return Long.parseLong(string(revision));
    } catch (NumberFormatException e) {
      throw new StateStoreException(StateStoreException.Reason.UNAVAILABLE, name + ": damaged hash "
          + string(key(type, id)) + ": revision '" + string(revision) + "' (expected: a number written by Atoll)", e);
    }
  }

  private StateStoreException fenced(String type, String id, FencingToken token, List<Object> r) {
    return new StateStoreException(StateStoreException.Reason.FENCED, name + ": state of " + type + "/" + id
        + " is claimed by epoch " + string(r.get(1)) + " generation " + string(r.get(2))
        + ", newer than this activation's (epoch " + token.epoch() + " generation " + token.generation() + ")");
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    connection.close();
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
  }

  @Override
  public String toString() {
    return name;
  }
}

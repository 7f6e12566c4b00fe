package io.atoll.kv;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How to run one Atoll KV node.
 *
 * @param bind the address to listen on and to announce to the cluster (default 127.0.0.1)
 * @param port the client port, 0 for any free port
 * @param busPort the cluster-bus port; -1 for {@code port + 10000} as Redis does, 0 for any free port
 * @param dataDir where the node keeps its cluster config ({@code nodes.conf}) and, with {@code persistence}, its
 *     append-only file ({@code appendonlydir})
 * @param eventLoops client event-loop threads, at least 1
 * @param maxMemory estimated bytes of data above which writes are refused with Redis' OOM error; 0
 *     for no limit
 * @param maxBulkLength the longest bulk string a request may carry (Redis' proto-max-bulk-len)
 * @param maxArrayLength the most arguments one request may carry
 * @param maxInlineLength the longest inline request or length line
 * @param queryBufferLimit the most bytes one request may hold
 * @param outputBufferLimit the most reply bytes pending per client before it is disconnected
 * @param nodeTimeoutMillis how long a silent node takes to be suspected (PFAIL)
 * @param requirePass the default user's password (Redis' {@code requirepass}), or null for none
 * @param tls a TLS client port (Redis' {@code tls-port}), or null for none
 * @param persistence what is kept on disk (in managed mode, with the append-only file, a restarted node also keeps
 *     its identity and comes back as the same node if the manager has not declared it dead meanwhile)
 * @param replicas how a primary acknowledges writes with respect to its replicas
 */
public record KvSettings(String bind, int port, int busPort, Path dataDir, int eventLoops, long maxMemory,
    int maxBulkLength, int maxArrayLength, int maxInlineLength, long queryBufferLimit, long outputBufferLimit,
    long nodeTimeoutMillis, String requirePass, KvTls tls, KvPersistence persistence, KvReplicas replicas) {

  /** Settings whose writes do not wait for replicas ({@link KvReplicas#ASYNC}). */
  public KvSettings(String bind, int port, int busPort, Path dataDir, int eventLoops, long maxMemory,
      int maxBulkLength, int maxArrayLength, int maxInlineLength, long queryBufferLimit, long outputBufferLimit,
      long nodeTimeoutMillis, String requirePass, KvTls tls, KvPersistence persistence) {
    this(bind, port, busPort, dataDir, eventLoops, maxMemory, maxBulkLength, maxArrayLength, maxInlineLength,
        queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, requirePass, tls, persistence, KvReplicas.ASYNC);
  }

  /** Settings without persistence. */
  public KvSettings(String bind, int port, int busPort, Path dataDir, int eventLoops, long maxMemory,
      int maxBulkLength, int maxArrayLength, int maxInlineLength, long queryBufferLimit, long outputBufferLimit,
      long nodeTimeoutMillis, String requirePass, KvTls tls) {
    this(bind, port, busPort, dataDir, eventLoops, maxMemory, maxBulkLength, maxArrayLength, maxInlineLength,
        queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, requirePass, tls, KvPersistence.OFF);
  }

  /** Settings without a password or a TLS port. */
  public KvSettings(String bind, int port, int busPort, Path dataDir, int eventLoops, long maxMemory,
      int maxBulkLength, int maxArrayLength, int maxInlineLength, long queryBufferLimit, long outputBufferLimit,
      long nodeTimeoutMillis) {
    this(bind, port, busPort, dataDir, eventLoops, maxMemory, maxBulkLength, maxArrayLength, maxInlineLength,
        queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, null, null);
  }

  /** Validates every field, naming it and the expected range. */
  public KvSettings {
    Objects.requireNonNull(bind, "bind");
    if (requirePass != null && requirePass.isEmpty()) {
      throw new IllegalArgumentException("requirepass: empty (expected: a password, or none at all)");
    }
    if (tls != null && tls.port() != 0 && (tls.port() == port || tls.port() == busPort)) {
      throw new IllegalArgumentException("tls port: " + tls.port() + " (expected: another port than the client and"
          + " bus ports)");
    }
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(persistence, "persistence");
    Objects.requireNonNull(replicas, "replicas");
    check("port", port, 0, 65535);
    check("bus port", busPort, -1, 65535);
    check("event loops", eventLoops, 1, 1024);
    check("max memory", maxMemory, 0, Long.MAX_VALUE);
    check("max bulk length", maxBulkLength, 1, Integer.MAX_VALUE - 64);
    check("max array length", maxArrayLength, 1, Integer.MAX_VALUE);
    check("max inline length", maxInlineLength, 16, Integer.MAX_VALUE);
    check("query buffer limit", queryBufferLimit, maxBulkLength, Long.MAX_VALUE);
    check("output buffer limit", outputBufferLimit, 0, Long.MAX_VALUE);
    check("node timeout", nodeTimeoutMillis, 100, 3_600_000);
    if (port == 0 && busPort == -1) {
      throw new IllegalArgumentException("bus port: port+10000 with port 0 (expected: an explicit bus port, or 0 for any)");
    }
    if (port + 10000 > 65535 && busPort == -1) {
      throw new IllegalArgumentException("bus port: " + (port + 10000) + " = port+10000 (expected: <= 65535; set --bus-port)");
    }
  }

  /** Defaults for a node on {@code port} with its config in {@code dataDir}. */
  public static KvSettings defaults(int port, Path dataDir) {
    return new KvSettings("127.0.0.1", port, port == 0 ? 0 : -1, dataDir, Math.max(1, Runtime.getRuntime()
        .availableProcessors()), 0, 64 << 20, 1 << 20, 64 << 10, 256L << 20, 64L << 20, 5000);
  }

  /** This with another bus port. */
  public KvSettings withBusPort(int p) {
    return new KvSettings(bind, port, p, dataDir, eventLoops, maxMemory, maxBulkLength, maxArrayLength,
        maxInlineLength, queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, requirePass, tls, persistence,
        replicas);
  }

  /** This with another node timeout. */
  public KvSettings withNodeTimeout(long millis) {
    return new KvSettings(bind, port, busPort, dataDir, eventLoops, maxMemory, maxBulkLength, maxArrayLength,
        maxInlineLength, queryBufferLimit, outputBufferLimit, millis, requirePass, tls, persistence, replicas);
  }

  /** This with the default user's password ({@code requirepass}; null for none). */
  public KvSettings withPassword(String password) {
    return new KvSettings(bind, port, busPort, dataDir, eventLoops, maxMemory, maxBulkLength, maxArrayLength,
        maxInlineLength, queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, password, tls, persistence,
        replicas);
  }

  /** This with a TLS client port (null for none). */
  public KvSettings withTls(KvTls t) {
    return new KvSettings(bind, port, busPort, dataDir, eventLoops, maxMemory, maxBulkLength, maxArrayLength,
        maxInlineLength, queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, requirePass, t, persistence,
        replicas);
  }

  /** This with what is kept on disk. */
  public KvSettings withPersistence(KvPersistence p) {
    return new KvSettings(bind, port, busPort, dataDir, eventLoops, maxMemory, maxBulkLength, maxArrayLength,
        maxInlineLength, queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, requirePass, tls, p, replicas);
  }

  /** This with how writes wait for replicas. */
  public KvSettings withReplicas(KvReplicas r) {
    return new KvSettings(bind, port, busPort, dataDir, eventLoops, maxMemory, maxBulkLength, maxArrayLength,
        maxInlineLength, queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, requirePass, tls, persistence, r);
  }

  @Override
  public String toString() { // never the password
    return "KvSettings[bind=" + bind + ", port=" + port + ", busPort=" + busPort + ", dataDir=" + dataDir
        + ", eventLoops=" + eventLoops + ", maxMemory=" + maxMemory + ", nodeTimeoutMillis=" + nodeTimeoutMillis
        + ", requirePass=" + (requirePass == null ? "none" : "(set)") + ", tls=" + tls + ", persistence="
        + persistence + ", replicas=" + replicas + "]";
  }

  private static void check(String name, long v, long min, long max) {
    if (v < min || v > max) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: " + min + ".." + max + ")");
    }
  }
}

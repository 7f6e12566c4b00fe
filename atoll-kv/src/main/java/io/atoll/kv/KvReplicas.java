package io.atoll.kv;

/**
 * How a primary serves its replicas and acknowledges writes (Redis-cluster mode).
 *
 * @param minReplicasToAck how many replicas must hold a write before its reply leaves (0: none,
 *     Redis' asynchronous replication); with fewer such replicas online a write is refused before it
 *     runs, with Redis' {@code -NOREPLICAS} error
 * @param ackTimeoutMillis how long a reply waits for those replicas; past it the client is answered
 *     {@code -NOREPLICAS} instead (the write ran here, and may or may not have reached a replica: it is
 *     not acknowledged)
 * @param backlogBytes how much of its stream a primary keeps for replicas that fall behind or
 *     reconnect (Redis' {@code repl-backlog-size}); a replica further behind, or a write larger than
 *     this, makes its replicas take a full copy again
 */
public record KvReplicas(int minReplicasToAck, long ackTimeoutMillis, int backlogBytes) {
  /** Valkey's default backlog: 10 MB. */
  public static final int DEFAULT_BACKLOG = 10 << 20;
  /** Redis' default: a write is acknowledged without waiting for any replica. */
  public static final KvReplicas ASYNC = new KvReplicas(0, 1000, DEFAULT_BACKLOG);

  /** With the default backlog. */
  public KvReplicas(int minReplicasToAck, long ackTimeoutMillis) {
    this(minReplicasToAck, ackTimeoutMillis, DEFAULT_BACKLOG);
  }

  /** Validates both, naming each and its range. */
  public KvReplicas {
    if (minReplicasToAck < 0 || minReplicasToAck > 16) {
      throw new IllegalArgumentException("min-replicas-to-ack: " + minReplicasToAck + " (expected: 0..16)");
    }
    if (ackTimeoutMillis < 1 || ackTimeoutMillis > 3_600_000) {
      throw new IllegalArgumentException("replica ack timeout: " + ackTimeoutMillis + " ms (expected: 1..3600000)");
    }
    if (backlogBytes < 16 << 10 || backlogBytes > 1 << 30) {
      throw new IllegalArgumentException("repl-backlog-size: " + backlogBytes + " bytes (expected: 16kb..1gb)");
    }
  }
}

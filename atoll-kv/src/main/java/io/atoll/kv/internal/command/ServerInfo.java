package io.atoll.kv.internal.command;

/**
 * What INFO and CONFIG GET report about the node's settings.
 *
 * @param tcpPort the client port
 * @param bind the listen address
 * @param maxMemory the memory limit in bytes, 0 for none
 * @param maxBulk the longest bulk string accepted
 * @param queryBufferLimit the request size limit
 * @param outputBufferLimit the per-client output limit
 * @param nodeTimeoutMillis the cluster node timeout
 * @param startedAt epoch ms
 * @param log the append-only file ({@link CommandLog#NONE} without one): INFO persistence, CONFIG GET
 * @param snapshots SAVE and BGSAVE ({@link Snapshots#NONE} without a data directory)
 * @param replication the node's replicas or primary ({@link Replication#NONE}: none served)
 */
public record ServerInfo(int tcpPort, String bind, long maxMemory, long maxBulk, long queryBufferLimit,
    long outputBufferLimit, long nodeTimeoutMillis, long startedAt, CommandLog log, Snapshots snapshots,
    Replication replication) {

  /** Settings of a node that serves no replicas. */
  public ServerInfo(int tcpPort, String bind, long maxMemory, long maxBulk, long queryBufferLimit,
      long outputBufferLimit, long nodeTimeoutMillis, long startedAt, CommandLog log, Snapshots snapshots) {
    this(tcpPort, bind, maxMemory, maxBulk, queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, startedAt, log,
        snapshots, Replication.NONE);
  }

  /** Settings of a node with an append-only file and no snapshots. */
  public ServerInfo(int tcpPort, String bind, long maxMemory, long maxBulk, long queryBufferLimit,
      long outputBufferLimit, long nodeTimeoutMillis, long startedAt, CommandLog log) {
    this(tcpPort, bind, maxMemory, maxBulk, queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, startedAt, log,
        Snapshots.NONE);
  }

  /** Settings of a node without an append-only file. */
  public ServerInfo(int tcpPort, String bind, long maxMemory, long maxBulk, long queryBufferLimit,
      long outputBufferLimit, long nodeTimeoutMillis, long startedAt) {
    this(tcpPort, bind, maxMemory, maxBulk, queryBufferLimit, outputBufferLimit, nodeTimeoutMillis, startedAt,
        CommandLog.NONE);
  }
}

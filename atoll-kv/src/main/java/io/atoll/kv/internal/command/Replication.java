package io.atoll.kv.internal.command;

import io.atoll.kv.internal.resp.Reply;
import io.netty.channel.Channel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A node's replication as its commands see it: the stream its replicas follow, the primary it
 * follows, the pause of a manual failover. Thread-safe.
 */
public interface Replication {

  /** The CLUSTER subcommand a replica's manual failover sends its primary ({@link #pauseWrites}). */
  String PAUSE_COMMAND = "ATOLL-PAUSE-WRITES";

  /** A node without replication: it never pauses, has no replicas, and refuses PSYNC. */
  Replication NONE = new Replication() {
    @Override
    public CompletableFuture<Void> writesPaused() {
      return null;
    }

    @Override
    public Consumer<Channel> psync(Session session, String replId, long offset) {
      throw new CommandError("ERR this node does not serve replicas");
    }

    @Override
    public void replconf(Session session, byte[][] args) {
    }

    @Override
    public CompletableFuture<Integer> await(int replicas, long timeoutMillis) {
      return CompletableFuture.completedFuture(0);
    }

    @Override
    public void role(Reply r) {
      r.array(3);
      r.bulk("master");
      r.integer(0);
      r.array(0);
    }

    @Override
    public List<String> info() {
      return List.of("role:master", "connected_slaves:0");
    }

    @Override
    public long pauseWrites(long millis) {
      throw new CommandError("ERR this node does not serve replicas");
    }

    @Override
    public void failover(String mode) {
      throw new CommandError("ERR You should send CLUSTER FAILOVER to a replica");
    }

    @Override
    public long offset() {
      return 0;
    }

    @Override
    public boolean enterKeylessWrite() {
      return true;
    }

    @Override
    public void exitKeylessWrite() {
    }

    @Override
    public boolean acksWrites() {
      return false;
    }

    @Override
    public String writeRefusal() {
      return null;
    }

    @Override
    public boolean isReplicated(long position) {
      return true;
    }

    @Override
    public CompletableFuture<Boolean> whenReplicated(long position) {
      return CompletableFuture.completedFuture(true);
    }
  };

  /** Redis' text for a write refused (or not acknowledged) for want of replicas. */
  String NOREPLICAS = "NOREPLICAS Not enough good replicas to write.";

  /**
   * Null unless writes are paused (a manual failover of this primary is under way); else a future
   * that completes when they may run again.
   */
  CompletableFuture<Void> writesPaused();

  /**
   * PSYNC from a replica: what to do with its connection, which carries the stream from now on
   * (its first bytes say +FULLRESYNC or +CONTINUE).
   *
   * @throws CommandError if this node cannot serve it (a replica itself, say)
   */
  Consumer<Channel> psync(Session session, String replId, long offset);

  /** REPLCONF from a replica or a client: {@code args} after the command name. */
  void replconf(Session session, byte[][] args);

  /**
   * WAIT: completes with how many replicas hold every write made so far, once {@code replicas} do
   * or {@code timeoutMillis} passed (0: no limit).
   */
  CompletableFuture<Integer> await(int replicas, long timeoutMillis);

  /** ROLE's reply. */
  void role(Reply r);

  /** The lines of INFO replication, {@code name:value} each. */
  List<String> info();

  /**
   * A replica's manual failover asks this primary to stop writes for {@code millis} (at least; a
   * pause under way is extended): returns the stream's offset once no write is under way, every
   * later write waiting. Blocks until then: call it off the event loops.
   *
   * @throws CommandError if writes under way do not end in time (the pause is then lifted)
   */
  long pauseWrites(long millis);

  /**
   * CLUSTER FAILOVER on a replica ({@code mode}: "", "FORCE" or "TAKEOVER"): starts it, as Redis
   * answers OK before it ends.
   *
   * @throws CommandError with Redis' text if this node cannot (a primary, or its primary is down)
   */
  void failover(String mode);

  /** This node's replication offset: its stream's as a primary, what it applied as a replica. */
  long offset();

  /**
   * A write without keys (FLUSHALL, MIGRATE, a transaction of them) begins: false if writes are
   * paused (it must not run); else it is counted until {@link #exitKeylessWrite}, and a pause waits
   * for it to end before it answers its offset.
   */
  boolean enterKeylessWrite();

  /** The write {@link #enterKeylessWrite} counted has ended (MIGRATE: its keys moved). */
  void exitKeylessWrite();

  /** Whether a write's reply waits until enough replicas hold it (--min-replicas-to-ack). */
  boolean acksWrites();

  /** Why a write must be refused before it runs (too few replicas online), or null. */
  String writeRefusal();

  /** Whether enough replicas hold the stream up to {@code position} already. */
  boolean isReplicated(long position);

  /** Completes true once enough replicas hold the stream up to {@code position}, false at the ack timeout. */
  CompletableFuture<Boolean> whenReplicated(long position);
}

package io.atoll.kv.internal.command;

import java.util.List;

/**
 * Where commands are logged for replay at start (the append-only file), as the dispatcher and the
 * connections see it. Thread-safe.
 */
public interface CommandLog {

  /** No log: nothing is kept, nothing is awaited. */
  CommandLog NONE = new CommandLog() {
    @Override
    public void command(byte[][] args) {
    }

    @Override
    public String writeError() {
      return null;
    }

    @Override
    public boolean loading() {
      return false;
    }

    @Override
    public long position() {
      return 0;
    }

    @Override
    public boolean awaitLogged(long position) {
      return true;
    }

    @Override
    public boolean isLogged(long position) {
      return true;
    }

    @Override
    public List<String> info() {
      return List.of("aof_enabled:0");
    }
  };

  /**
   * Logs a command that replays to the same result from the same keys (called holding its slot's
   * lock, after it ran without error).
   */
  void command(byte[][] args);

  /** Why writes are refused (the log cannot be written), or null while they are not. */
  String writeError();

  /** Whether the node is still replaying its log at start. */
  boolean loading();

  /** How many bytes have been logged so far (0 without a log): a position to wait for. */
  long position();

  /**
   * Waits until the log up to {@code position} is as durable as the fsync policy promises before a
   * reply leaves; false if it cannot be (the log failed): the reply must not be sent.
   */
  boolean awaitLogged(long position);

  /**
   * Whether the log up to {@code position} is already as durable as a reply needs, without
   * waiting or writing (a failed log says true: {@link #awaitLogged} then says why not).
   */
  default boolean isLogged(long position) {
    return position == 0;
  }

  /** The {@code aof_*} fields of {@code INFO persistence}, {@code name:value} each. */
  List<String> info();

  /**
   * BGREWRITEAOF: starts rewriting the log in the background; Redis' reply text.
   *
   * @throws CommandError if it cannot start (no log, or a rewrite under way)
   */
  default String rewrite() {
    throw new CommandError("ERR appendonly is off on this node: there is no append only file to rewrite");
  }

  /** The fsync policy's name (CONFIG GET appendfsync). */
  default String appendfsync() {
    return "everysec";
  }
}

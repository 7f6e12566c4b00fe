package io.atoll.kv.internal.command;

import io.atoll.kv.internal.resp.Numbers;
import io.atoll.kv.internal.resp.Reply;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One command being executed: its arguments, the client's session, where the reply goes, the
 * time it started, and — for keyed commands — the slot it runs in, whose lock is held.
 */
public final class Call {
  final byte[][] args;
  final Session session;
  final Reply reply;
  final long now;
  Slot slot;
  /** Whether the command is a write (its reply must not leave if the log fails). */
  boolean write;
  /**
   * The reply tells of a hand-off (an {@code -ASK} to the target; in managed mode a step of a
   * return), so with replica acks on it leaves only once the replicas acknowledged what this node
   * changed before it, as a write's: a promoted replica then holds every deletion behind a key the
   * client was sent to find elsewhere, and every lend or mark a peer acts on.
   */
  boolean awaitsReplicas;
  CompletableFuture<Consumer<Reply>> deferred;
  /** Run by EXEC: it must answer now, as a command inside a transaction never blocks. */
  boolean inExec;
  /** PSYNC: what takes over the connection once this command's reply is out (null: nothing). */
  Consumer<io.netty.channel.Channel> takeover;

  Call(byte[][] args, Session session, Reply reply, long now) {
    this.args = args;
    this.session = session;
    this.reply = reply;
    this.now = now;
  }

  /** The reply of a command that finishes later (MIGRATE), or null. */
  public CompletableFuture<Consumer<Reply>> deferred() {
    return deferred;
  }

  /** What takes the connection over (PSYNC: the replication stream), or null. */
  public Consumer<io.netty.channel.Channel> takeover() {
    return takeover;
  }

  int argc() {
    return args.length;
  }

  byte[] arg(int i) {
    return args[i];
  }

  Key key(int i) {
    return new Key(args[i]);
  }

  String str(int i) {
    return new String(args[i], StandardCharsets.UTF_8);
  }

  /** The argument in upper case ASCII, for option names. */
  String opt(int i) {
    return str(i).toUpperCase(java.util.Locale.ROOT);
  }

  long integer(int i) {
    Long v = Numbers.parseLong(args[i]);
    if (v == null) {
      throw new CommandError(CommandError.NOT_INTEGER);
    }
    return v;
  }

  double dbl(int i) {
    Double v = Numbers.parseDouble(args[i]);
    if (v == null) {
      throw new CommandError(CommandError.NOT_FLOAT);
    }
    return v;
  }
}

package io.atoll.kv.internal.server;

import io.atoll.kv.internal.command.CommandLog;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.ArrayList;
import java.util.List;

/**
 * Group commit per event-loop turn: the connections of one event loop whose replies wait for the
 * log leave them here instead of each writing (and, under appendfsync always, syncing) the log on
 * its own; one task, run after the loop has read from every ready connection, writes and syncs
 * the log once, up to the furthest position any of them waits for, and then lets each flush. This
 * is Redis' one write and one fsync per event-loop turn, across connections: without it, each
 * connection's reply cost one fsync, and with 50 clients at one request each a node did an eighth
 * of Redis' writes per second. Confined to its event loop.
 */
final class TurnFlush {

  /** A connection's flush, once the log holds what its replies wait for. */
  interface Waiter {
    void flushNow();
  }

  private static final FastThreadLocal<TurnFlush> PER_LOOP = new FastThreadLocal<>();

  private final CommandLog log;
  private final List<Waiter> waiting = new ArrayList<>();
  private long furthest;
  private boolean scheduled;

  private TurnFlush(CommandLog log) {
    this.log = log;
  }

  /** The turn's flush of the calling event loop (one per loop and log). */
  static TurnFlush of(EventExecutor loop, CommandLog log) {
    TurnFlush t = PER_LOOP.get();
    if (t == null || t.log != log) {
      t = new TurnFlush(log);
      PER_LOOP.set(t);
    }
    return t;
  }

  /** {@code w} waits for the log up to {@code position}; it flushes at the end of this turn. */
  void add(EventExecutor loop, Waiter w, long position) {
    waiting.add(w);
    furthest = Math.max(furthest, position);
    if (!scheduled) {
      scheduled = true;
      loop.execute(this::run);
    }
  }

  private void run() {
    scheduled = false;
    List<Waiter> now = new ArrayList<>(waiting);
    waiting.clear();
    long target = furthest;
    furthest = 0;
    log.awaitLogged(target); // one write, one sync for all; each waiter checks its own outcome
    for (Waiter w : now) {
      w.flushNow();
    }
  }
}

package io.atoll.kv.internal.command;

import io.atoll.core.slots.KeySlots;
import io.atoll.kv.KvObserver;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.resp.Reply;
import io.atoll.kv.internal.store.SlotStore;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Executes one request: looks the command up, checks its arity (Redis' exact texts), routes a
 * keyed command by slot and runs it holding that slot's lock, and turns {@link CommandError}s
 * into error replies. Thread-safe: called from every event loop.
 */
public final class Dispatcher {
  private final CommandTable table;
  private final SlotStore store;
  private final ClusterState cluster;
  private final Stats stats;
  private final LongSupplier clock;
  private final long maxMemory;
  private final KvObserver observer;
  private final CommandLog log;
  private final Replication replication;
  /**
   * Write commands whose arguments do not replay to the same result: a time relative to now (SET EX,
   * EXPIRE, GETEX, RESTORE's ttl) or keys that leave for another node (MIGRATE). The changes they
   * make are logged one by one instead, as their effect (SET ... PXAT, PEXPIREAT, DEL).
   */
  private static final java.util.Set<String> LOGGED_BY_EFFECT = java.util.Set.of("set", "setex", "psetex", "getex",
      "getdel", "expire", "pexpire", "expireat", "pexpireat", "persist", "restore", "restore-asking", "migrate");
  /** What is served while the log replays at start; the rest answers -LOADING, as Redis does. */
  private static final java.util.Set<String> SERVED_WHILE_LOADING = java.util.Set.of("info", "auth", "hello", "command",
      "quit", "lastsave", "shutdown", "config", "client", "echo", "select");
  static final String LOADING = "LOADING Redis is loading the dataset in memory";
  static final String READONLY = "READONLY You can't write against a read only replica.";
  /**
   * Managed mode: the hand-offs' internal commands, refused to a connection that did not prove it
   * is a node (see {@code NodeKey}). Without a manager RESTORE-ASKING stays open, as Redis has it,
   * for MIGRATE between nodes that have no node key.
   */
  private static final java.util.Set<String> NODES_ONLY = java.util.Set.of("restore-asking",
      "cluster|atoll-importing", "cluster|atoll-return", "cluster|atoll-return-batch");

  /** A dispatcher over these parts; {@code maxMemory} 0 means no limit. */
  public Dispatcher(CommandTable table, SlotStore store, ClusterState cluster, Stats stats, LongSupplier clock,
      long maxMemory) {
    this(table, store, cluster, stats, clock, maxMemory, KvObserver.NONE);
  }

  /** A dispatcher that also reports each command's outcome and time to {@code observer}. */
  public Dispatcher(CommandTable table, SlotStore store, ClusterState cluster, Stats stats, LongSupplier clock,
      long maxMemory, KvObserver observer) {
    this(table, store, cluster, stats, clock, maxMemory, observer, CommandLog.NONE);
  }

  /** As above, logging every write to {@code log} for replay at start. */
  public Dispatcher(CommandTable table, SlotStore store, ClusterState cluster, Stats stats, LongSupplier clock,
      long maxMemory, KvObserver observer, CommandLog log) {
    this(table, store, cluster, stats, clock, maxMemory, observer, log, Replication.NONE);
  }

  /** As above; writes wait while {@code replication} pauses them (a manual failover). */
  public Dispatcher(CommandTable table, SlotStore store, ClusterState cluster, Stats stats, LongSupplier clock,
      long maxMemory, KvObserver observer, CommandLog log, Replication replication) {
    this.replication = replication;
    this.log = log;
    this.observer = observer;
    this.table = table;
    this.store = store;
    this.cluster = cluster;
    this.stats = stats;
    this.clock = clock;
    this.maxMemory = maxMemory;
  }

  /** Executes {@code args} for {@code session}, writing the reply to {@code reply}. */
  public Call execute(byte[][] args, Session session, Reply reply) {
    long start = observer == KvObserver.NONE ? 0 : System.nanoTime();
    long now = clock.getAsLong();
    Call c = new Call(args, session, reply, now);
    stats.commands.increment();
    int errorsBefore = reply.errorCount();
    try {
      run(c);
    } catch (CommandError e) {
      reply.error(e.getMessage());
    }
    // Its reply waits until the log holds all it could have seen: its own write, or another
    // connection's that it read (appended holding the slot's lock, before this command took it).
    session.logPosition(log.position());
    boolean error = reply.errorCount() != errorsBefore;
    if (c.write && !error) {
      session.wrote(); // refused, it changed nothing: its error may leave while the log fails
      stats.writes.increment();
      if (replication.acksWrites()) {
        session.replicaPosition(replication.offset()); // its reply waits for the replicas to hold it
      }
    } else if (c.awaitsReplicas && replication.acksWrites()) {
      session.replicaPosition(replication.offset()); // a hand-off's step: as a write's
    }
    if (error) {
      stats.errors.increment();
    }
    if (observer != KvObserver.NONE) {
      observer.command(error, System.nanoTime() - start);
    }
    return c;
  }

  /** Most commands one transaction may queue (Redis has no such bound; everything here has one). */
  static final int MAX_QUEUED = 10_000;
  /** What MULTI does not queue but runs at once, as Redis. */
  private static final java.util.Set<String> NOT_QUEUED = java.util.Set.of("exec", "discard", "multi", "watch",
      "quit", "reset");

  private void run(Call c) {
    try {
      runChecked(c);
    } catch (CommandError e) {
      if (c.session.queued != null) {
        c.session.queuedRefused = true; // as Redis: a command refused while queued aborts the EXEC
      }
      throw e;
    }
  }

  /** Whether {@code c} is to be queued by an open MULTI (then it is, and answered QUEUED). */
  private static boolean queue(Call c, String name, int slot) {
    return queue(c, name, slot, null, 0, 0, 0);
  }

  private static boolean queue(Call c, String name, int slot, CommandSpec spec, int first, int last, int step) {
    if (c.session.queued == null || NOT_QUEUED.contains(name)) {
      return false;
    }
    if (name.equals("migrate")) {
      throw new CommandError("ERR MIGRATE inside MULTI is not supported (expected: MIGRATE outside a transaction)");
    }
    if (c.session.queued.size() >= MAX_QUEUED) {
      throw new CommandError("ERR a transaction holds at most " + MAX_QUEUED + " commands");
    }
    if (!c.session.queuedRefused) { // as Redis: an aborted transaction keeps nothing more
      c.session.queued.add(new Session.Queued(c.args, slot, spec, first, last, step));
    }
    c.write = false; // queued, not run: EXEC counts it
    c.reply.simple("QUEUED");
    return true;
  }

  /** The handler MULTI, EXEC and DISCARD are registered with: the dispatcher runs them itself. */
  static final Handler TRANSACTION = c -> {
    throw new IllegalStateException("MULTI, EXEC and DISCARD are run by the dispatcher");
  };

  /** MULTI, EXEC and DISCARD (their arity is checked); false for any other command. */
  private boolean transaction(Call c, String name) {
    switch (name) {
      case "multi" -> {
        if (c.session.queued != null) {
          c.reply.error("ERR MULTI calls can not be nested"); // as Redis: the transaction stays good
          return true;
        }
        c.session.queued = new java.util.ArrayList<>();
        c.session.queuedRefused = false;
        c.reply.ok();
        return true;
      }
      case "discard" -> {
        if (c.session.queued == null) {
          throw new CommandError("ERR DISCARD without MULTI");
        }
        c.session.queued = null;
        unwatchAll(c.session);
        c.reply.ok();
        return true;
      }
      case "exec" -> {
        boolean open = c.session.queued != null;
        try {
          exec(c);
        } finally {
          if (open && c.deferred == null) {
            unwatchAll(c.session); // as Redis: EXEC of a transaction ends every watch, whatever its outcome
          }
        }
        return true;
      }
      case "unwatch" -> {
        if (c.session.queued != null) {
          return false; // queued, as Redis queues it (a no-op by then: EXEC unwatches first)
        }
        unwatchAll(c.session);
        c.reply.ok();
        return true;
      }
      default -> {
        return false;
      }
    }
  }

  /**
   * EXEC: runs the queued commands in order, answering an array of their replies. Keys of one
   * transaction are in one slot (as in Redis cluster: CROSSSLOT otherwise), and the slot's lock is
   * held throughout, so no other command on it sees the transaction half done. Routing is checked
   * again first: a slot that moved meanwhile answers EXEC with its redirection, nothing run.
   */
  private void exec(Call c) {
    java.util.List<Session.Queued> q = c.session.queued;
    if (q == null) {
      throw new CommandError("ERR EXEC without MULTI");
    }
    c.session.queued = null;
    int slot = -1;
    for (Session.Queued e : q) {
      if (e.slot() >= 0 && slot >= 0 && e.slot() != slot) {
        throw new CommandError(Router.CROSSSLOT); // Redis routes EXEC's queue before it looks at errors
      }
      slot = e.slot() >= 0 ? e.slot() : slot;
    }
    if (c.session.queuedRefused) {
      throw new CommandError("EXECABORT Transaction discarded because of previous errors.");
    }
    if (hasWrites(q)) {
      refuseWithoutReplicas(); // the whole transaction, before any of it runs (as Redis)
    }
    expireWatched(c, slot);
    if (slot >= 0) {
      for (Session.Queued e : q) {
        if (e.slot() < 0 && new String(e.args()[0], StandardCharsets.UTF_8).equalsIgnoreCase("cluster")
            && !CLUSTER_READS.contains(new String(e.args()[1], StandardCharsets.UTF_8).toLowerCase(Locale.ROOT))) {
          // A CLUSTER command that changes slots may wait for a slot's lock while holding the
          // cluster state, which this EXEC would wait for holding its slot's lock.
          throw new CommandError("ERR CLUSTER commands in a transaction with keyed commands are not supported"
              + " (expected: them in a transaction of their own)");
        }
      }
    }
    if (slot < 0) {
      if (c.session.watchedChanged) {
        c.reply.nilArray(); // a watched key changed: nothing runs
        return;
      }
      if (!hasWrites(q)) {
        runQueued(c, q);
        return;
      }
      if (!replication.enterKeylessWrite()) {
        if (execPaused(c, q)) {
          return;
        }
        throw new CommandError(PAUSED);
      }
      try {
        runQueued(c, q);
      } finally {
        replication.exitKeylessWrite();
      }
      return;
    }
    io.atoll.kv.internal.store.Slot locked = store.slot(slot);
    boolean keyless = false;
    for (Session.Queued e : q) {
      keyless |= e.slot() < 0;
    }
    if (!keyless) {
      execLocked(c, q, locked);
      return;
    }
    if (!replication.enterKeylessWrite()) {
      if (execPaused(c, q)) {
        return;
      }
      throw new CommandError(PAUSED);
    }
    try {
      // A keyless command (FLUSHALL, SCAN, CLUSTER ...) may take other slots' locks, one at a time,
      // while this transaction holds its own: two such transactions could each hold the lock the
      // other waits for. They run one at a time, taking this lock before any slot's.
      synchronized (multiSlotExec) {
        execLocked(c, q, locked);
      }
    } finally {
      replication.exitKeylessWrite();
    }
  }

  /** Most keys one connection may watch (Redis has no such bound; everything here has one). */
  static final int MAX_WATCHED = 10_000;

  /** WATCH key...: the keys (of one slot, routed as any keyed command) are watched until EXEC, DISCARD or UNWATCH. */
  static final Handler WATCH = c -> {
    if (c.session.queued != null) {
      c.reply.error("ERR WATCH inside MULTI is not allowed"); // as Redis: the transaction stays good
      return;
    }
    for (int i = 1; i < c.argc(); i++) {
      Session.Watched w = new Session.Watched(c.slot, c.key(i));
      if (c.session.watched.contains(w)) {
        continue;
      }
      if (c.session.watched.size() >= MAX_WATCHED) {
        throw new CommandError("ERR a connection watches at most " + MAX_WATCHED + " keys");
      }
      c.slot.get(w.key(), c.now); // one already expired goes now, not later as a change
      c.slot.watch(w.key(), c.session.watcher);
      c.session.watched.add(w);
    }
    c.reply.ok();
  };

  /**
   * Before EXEC looks at its watched keys: a watched key that expired since is removed now, which
   * counts as a change (as Redis' EXEC, which refuses to run past a watched key that expired). The
   * keys of other slots than the transaction's are looked at first, each under its own lock.
   */
  private void expireWatched(Call c, int txSlot) {
    for (Session.Watched w : c.session.watched) {
      if (w.slot().id() != txSlot) {
        synchronized (w.slot()) {
          w.slot().get(w.key(), c.now);
        }
      }
    }
    if (txSlot >= 0) {
      io.atoll.kv.internal.store.Slot s = store.slot(txSlot);
      synchronized (s) {
        for (Session.Watched w : c.session.watched) {
          if (w.slot() == s) {
            s.get(w.key(), c.now);
          }
        }
      }
    }
  }

  /** Ends every watch of {@code session} (EXEC, DISCARD, UNWATCH, RESET, its connection closing). */
  public void unwatchAll(Session session) {
    for (Session.Watched w : session.watched) {
      synchronized (w.slot()) {
        w.slot().unwatch(w.key(), session.watcher);
      }
    }
    session.watched.clear();
    session.watchedChanged = false;
  }

  /** CLUSTER subcommands that only read, allowed in a transaction with keyed commands. */
  private static final java.util.Set<String> CLUSTER_READS = java.util.Set.of("keyslot", "info", "nodes", "slots",
      "shards", "myid", "myshardid", "countkeysinslot", "getkeysinslot", "links");

  /** Taken before any slot's lock by an EXEC that holds one slot's lock and may take others. */
  private final Object multiSlotExec = new Object();

  private void execLocked(Call c, java.util.List<Session.Queued> q, io.atoll.kv.internal.store.Slot locked) {
    synchronized (locked) {
      if (!cluster.serving()) {
        throw new CommandError(Router.fenced(cluster.view(), locked.id(), c.session.tls()));
      }
      // Routed as a whole, as Redis routes EXEC: a redirection (the slot moved, or keys of it are
      // on their way to another node) answers EXEC, and nothing runs.
      if (execPaused(c, q)) {
        return; // under the slot's lock: a pause's sweep waits for a transaction that began before it
      }
      if (c.session.watchedChanged) {
        // Checked under the slot's lock: a write to a watched key of this slot either came before
        // (and said so) or waits until this transaction has run.
        c.reply.nilArray();
        return;
      }
      io.atoll.kv.internal.cluster.ClusterView view = cluster.view();
      for (Session.Queued e : q) {
        if (e.slot() >= 0) {
          Call probe = new Call(e.args(), c.session, c.reply, c.now);
          probe.slot = locked;
          String redirect = Router.check(view, probe, e.spec(), e.first(), e.last(), e.step());
          if (redirect != null) {
            c.awaitsReplicas = redirect.startsWith("ASK ");
            throw new CommandError(redirect);
          }
        }
      }
      runQueued(c, q); // each keyed command checks its routing again, under this same lock
    }
  }

  private void runQueued(Call c, java.util.List<Session.Queued> q) {
    c.reply.array(q.size());
    for (Session.Queued e : q) {
      Call inner = new Call(e.args(), c.session, c.reply, c.now);
      inner.inExec = true;
      int errors = c.reply.errorCount();
      try {
        runChecked(inner);
      } catch (CommandError err) {
        c.reply.error(err.getMessage());
      }
      if (inner.write && c.reply.errorCount() == errors) {
        c.session.wrote();
        stats.writes.increment();
        if (replication.acksWrites()) {
          c.session.replicaPosition(replication.offset());
        }
      }
    }
  }

  private void runChecked(Call c) {
    String name = new String(c.args[0], StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    CommandSpec spec = table.get(name);
    boolean asking = c.session.asking;
    c.session.asking = false;
    if (spec == null) {
      throw new CommandError(unknown(c));
    }
    if (!arityOk(spec, c.args.length)) {
      throw new CommandError("ERR wrong number of arguments for '" + name + "' command");
    }
    if (spec.subcommands() != null && c.args.length == 1) {
      if (!c.session.authenticated) {
        throw new CommandError(Auth.NOAUTH);
      }
      spec.handler().run(c); // COMMAND alone
      return;
    }
    if (spec.subcommands() != null) {
      String subName = new String(c.args[1], StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
      CommandSpec sub = spec.subcommands().get(subName);
      if (sub == null) {
        throw new CommandError("ERR unknown subcommand '" + clip(c.str(1), 128) + "'. Try "
            + name.toUpperCase(Locale.ROOT) + " HELP.");
      }
      if (!arityOk(sub, c.args.length)) {
        throw new CommandError("ERR wrong number of arguments for '" + name + "|" + subName + "' command");
      }
      spec = sub;
    }
    if (!c.session.authenticated && !spec.has("no_auth")) {
      throw new CommandError(Auth.NOAUTH); // after the name and arity checks, as Redis orders them
    }
    if (log.loading() && !SERVED_WHILE_LOADING.contains(name)) {
      throw new CommandError(LOADING);
    }
    boolean write = spec.has("write");
    c.write = write;
    if (write || name.equals("ping")) {
      String error = log.writeError();
      if (error != null) {
        throw new CommandError("MISCONF Errors writing to the AOF file: " + error);
      }
    }
    if (!c.session.node && NODES_ONLY.contains(spec.name()) && cluster.managedBy() != null) {
      // A client with the password must not wipe or drain a slot behind the manager's back (ASKING writes
      // stay open, as in Redis cluster: see NodeKey).
      throw new CommandError("NOPERM " + spec.name().replace('|', ' ').toUpperCase(Locale.ROOT) + " is sent"
          + " only by the other nodes of this cluster, in the shard manager's hand-offs (expected: a connection that"
          + " proved it is a node with CLUSTER ATOLL-NODE)");
    }
    c.session.touched(spec.name(), c.now);
    c.session.asking = asking;
    try {
      if (spec.handler() == TRANSACTION && transaction(c, name)) { // a reference test: nothing more per command
        return;
      }
      if (!spec.hasKeys(c.args.length)) {
        if (queue(c, name, -1)) {
          return;
        }
        if (!write) {
          spec.handler().run(c);
          return;
        }
        if (cluster.view().myPrimary() != null) {
          throw new CommandError(READONLY); // keyed writes get -MOVED to the primary, as in Redis
        }
        if (!c.inExec) {
          runKeylessWrite(c, spec);
          return;
        }
        spec.handler().run(c); // EXEC took the keyless writes' guard for the whole transaction
        return;
      }
      int first = spec.firstKey();
      int last = spec.lastKeyIndex(c.args.length);
      int step = spec.step();
      int slot = KeySlots.slotOf(c.args[first]);
      for (int i = first + step; i <= last; i += step) {
        if (KeySlots.slotOf(c.args[i]) != slot) {
          throw new CommandError(Router.CROSSSLOT);
        }
      }
      if (maxMemory > 0 && spec.has("denyoom") && store.usedMemory() > maxMemory && !Keys.restoreOnlyDeletes(spec
          .name(), c.args, c.now)) {
        throw new CommandError("OOM command not allowed when used memory > 'maxmemory'.");
      }
      if (!cluster.serving()) {
        throw new CommandError(Router.fenced(cluster.view(), slot, c.session.tls()));
      }
      c.slot = store.slot(slot);
      synchronized (c.slot) {
        String redirect = Router.check(cluster.view(), c, spec, first, last, step);
        if (redirect != null) {
          c.awaitsReplicas = redirect.startsWith("ASK ");
          throw new CommandError(redirect);
        }
        if (queue(c, name, slot, spec, first, last, step)) {
          return;
        }
        if (write && pausedFor(c)) {
          return;
        }
        if (write) {
          refuseWithoutReplicas(c);
        }
        boolean selfLogged = write && !LOGGED_BY_EFFECT.contains(spec.name());
        if (!selfLogged) {
          spec.handler().run(c);
        } else {
          c.slot.selfLogged(true);
          try {
            spec.handler().run(c);
          } finally {
            c.slot.selfLogged(false);
          }
          log.command(c.args); // ran without error, still holding the slot's lock: in the slot's order
        }
      }
    } finally {
      if (!spec.name().equals("asking")) {
        c.session.asking = false;
      }
    }
  }

  /**
   * Whether the write {@code c} waits, writes being paused (a manual failover of this primary):
   * then its reply is deferred until the pause ends, and it runs again then, routed anew (by then
   * its slot may be served by the replica that took over: -MOVED). Checked holding the slot's
   * lock, so once a pause has swept every slot's lock no write of before it is still running.
   */
  private boolean pausedFor(Call c) {
    if (c.inExec) {
      return false; // EXEC looked at the pause for the whole transaction, holding the same lock
    }
    CompletableFuture<Void> pause = replication.writesPaused();
    if (pause == null) {
      return false;
    }
    if (c.session.resumed) {
      throw new CommandError(PAUSED); // it waited once already
    }
    byte[][] args = c.args;
    Session session = c.session;
    boolean asking = session.asking;
    c.write = false;
    c.deferred = pause.thenApply(ignored -> reply -> {
      session.resumed = true;
      session.asking = asking;
      try {
        execute(args, session, reply);
      } finally {
        session.resumed = false;
      }
    });
    return true;
  }

  /** A write refused before it runs, as Redis' min-replicas-to-write: too few replicas online. */
  private void refuseWithoutReplicas() {
    refuseWithoutReplicas(null);
  }

  /** As above, except inside EXEC ({@code c}), which looked once for the whole transaction. */
  private void refuseWithoutReplicas(Call c) {
    if (c != null && c.inExec) {
      return;
    }
    String refusal = replication.writeRefusal();
    if (refusal != null) {
      throw new CommandError(refusal);
    }
  }

  static final String PAUSED = "TRYAGAIN writes are paused by a manual failover; retry";

  /**
   * A write without keys (FLUSHALL, MIGRATE): refused while writes are paused, and counted while it
   * runs (MIGRATE: until its keys have moved), so that a pause waits for it before it answers its
   * offset (see {@link Replication#pauseWrites}).
   */
  private void runKeylessWrite(Call c, CommandSpec spec) {
    refuseWithoutReplicas(c);
    if (!replication.enterKeylessWrite()) {
      throw new CommandError(PAUSED);
    }
    boolean handedOn = false;
    try {
      spec.handler().run(c);
      if (c.deferred != null) {
        c.deferred.whenComplete((r, e) -> replication.exitKeylessWrite());
        handedOn = true;
      }
    } finally {
      if (!handedOn) {
        replication.exitKeylessWrite();
      }
    }
  }

  /**
   * EXEC of a transaction with writes while writes are paused: it waits whole (its queue kept) and
   * runs again when the pause ends; true if so.
   */
  private boolean execPaused(Call c, java.util.List<Session.Queued> q) {
    if (!hasWrites(q) || replication.writesPaused() == null) {
      return false;
    }
    c.session.queued = q; // run again as it was
    boolean deferred = false;
    try {
      deferred = pausedFor(c);
      return deferred;
    } finally {
      if (!deferred) {
        c.session.queued = null;
      }
    }
  }

  private boolean hasWrites(java.util.List<Session.Queued> q) {
    for (Session.Queued e : q) {
      CommandSpec spec = table.get(new String(e.args()[0], StandardCharsets.UTF_8).toLowerCase(Locale.ROOT));
      if (spec != null && spec.has("write")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Applies one record of the replication stream on a replica: as {@link #replay}, no routing and
   * time standing still (a replica's keys expire by its primary's DEL), but logged, so the
   * replica's own log and stream hold what it applied.
   *
   * @throws IllegalArgumentException if the record is not one a stream holds
   */
  public void applyReplicated(byte[][] args, Session session, Reply sink) {
    String name = new String(args[0], StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    CommandSpec spec = table.get(name);
    if (spec == null || name.equals(FLUSH_SLOT) || name.equals(SET_HASH) || LOGGED_BY_EFFECT.contains(name)
        || name.startsWith("atoll-")) {
      replay(args, session, sink); // its changes are logged one by one, by the store's journal
      return;
    }
    if (!spec.has("write") || !spec.hasKeys(args.length) || !arityOk(spec, args.length)) {
      throw new IllegalArgumentException("'" + clip(name, 64) + "' is not a logged write command");
    }
    Call c = new Call(args, session, sink, 0);
    c.slot = store.slot(KeySlots.slotOf(args[spec.firstKey()]));
    synchronized (c.slot) {
      c.slot.selfLogged(true);
      try {
        spec.handler().run(c);
      } finally {
        c.slot.selfLogged(false);
      }
      log.command(args);
    }
  }

  /**
   * Replays one logged command at start: no routing, no limits, nothing logged again, and time
   * stands still at 0, so no key expires while the log replays (every expiry that happened is in
   * the log, as a DEL, where it happened).
   *
   * @throws IllegalArgumentException if the command is unknown or not one a log holds
   */
  public void replay(byte[][] args, Session session, Reply sink) {
    String name = new String(args[0], StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    if (name.equals(FLUSH_SLOT)) {
      Long n = args.length == 2 ? io.atoll.kv.internal.resp.Numbers.parseLong(args[1]) : null;
      if (n == null || n < 0 || n >= KeySlots.SLOT_COUNT) {
        throw new IllegalArgumentException("a malformed " + FLUSH_SLOT + " record");
      }
      io.atoll.kv.internal.store.Slot slot = store.slot(n.intValue());
      synchronized (slot) {
        slot.clear();
      }
      return;
    }
    if (name.equals(IMPORTED) || name.equals(LENT) || name.equals(SETTLED) || name.equals(RETURNED)
        || name.equals(MIGRATING_MARK) || name.equals(IMPORTING_MARK)) {
      replaySlotState(name, args);
      return;
    }
    if (name.equals(SET_HASH)) {
      Long at = args.length >= 3 && args.length % 2 == 1 ? io.atoll.kv.internal.resp.Numbers.parseLong(args[2]) : null;
      if (at == null || at < 0) {
        throw new IllegalArgumentException("a malformed " + SET_HASH + " record");
      }
      java.util.HashMap<io.atoll.kv.internal.store.Key, byte[]> h = new java.util.HashMap<>();
      for (int i = 3; i < args.length; i += 2) {
        h.put(new io.atoll.kv.internal.store.Key(args[i]), args[i + 1]);
      }
      io.atoll.kv.internal.store.Entry e = new io.atoll.kv.internal.store.Entry(h);
      e.expireAt = at;
      io.atoll.kv.internal.store.Slot slot = store.slot(KeySlots.slotOf(args[1]));
      synchronized (slot) {
        slot.put(new io.atoll.kv.internal.store.Key(args[1]), e);
      }
      return;
    }
    CommandSpec spec = table.get(name);
    if (spec == null || !spec.has("write") || !spec.hasKeys(args.length) || !arityOk(spec, args.length)) {
      throw new IllegalArgumentException("'" + clip(name, 64) + "' is not a logged write command");
    }
    Call c = new Call(args, session, sink, 0);
    c.slot = store.slot(KeySlots.slotOf(args[spec.firstKey()]));
    synchronized (c.slot) {
      spec.handler().run(c); // a CommandError goes to the caller, who counts it
    }
  }

  /**
   * A managed node's record of a slot's hand-off or return state read back: its import record
   * ({@link #IMPORTED}), a batch lent ({@link #LENT}) or settled ({@link #SETTLED}), or the last
   * returned batch stored ({@link #RETURNED}).
   */
  private void replaySlotState(String name, byte[][] args) {
    Long n = args.length >= 2 ? io.atoll.kv.internal.resp.Numbers.parseLong(args[1]) : null;
    if (n == null || n < 0 || n >= KeySlots.SLOT_COUNT) {
      throw new IllegalArgumentException("a malformed " + name + " record");
    }
    io.atoll.kv.internal.store.Slot slot = store.slot(n.intValue());
    synchronized (slot) {
      switch (name) {
        case LENT -> {
          Long batch = args.length >= 3 ? io.atoll.kv.internal.resp.Numbers.parseLong(args[2]) : null;
          if (batch == null || batch == 0) {
            throw new IllegalArgumentException("a malformed " + name + " record");
          }
          java.util.List<io.atoll.kv.internal.store.Key> keys = new java.util.ArrayList<>();
          for (int i = 3; i < args.length; i++) {
            keys.add(new io.atoll.kv.internal.store.Key(args[i]));
          }
          slot.relend(batch, keys);
        }
        case SETTLED -> slot.settle(slot.lentBatch());
        case IMPORTED -> slot.imported(peer(name, args), peerNumber(name, args));
        case MIGRATING_MARK -> slot.marks(peer(name, args), slot.importingFrom());
        case IMPORTING_MARK -> slot.marks(slot.migratingTo(), peer(name, args));
        default -> slot.returned(peer(name, args), peerNumber(name, args));
      }
    }
  }

  /** The peer of a {@code NAME slot [host port incarnation-hex n]} record, null without one. */
  private static io.atoll.core.PodId peer(String name, byte[][] args) {
    if (args.length == 2) {
      return null;
    }
    Long port = args.length == 6 ? io.atoll.kv.internal.resp.Numbers.parseLong(args[3]) : null;
    if (port == null) {
      throw new IllegalArgumentException("a malformed " + name + " record");
    }
    try {
      return new io.atoll.core.PodId(new io.atoll.core.PodAddress(new String(args[2], StandardCharsets.UTF_8),
          port.intValue()), Long.parseUnsignedLong(new String(args[4], StandardCharsets.US_ASCII), 16));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("a malformed " + name + " record: " + e.getMessage(), e);
    }
  }

  /** The number after the peer of such a record (0 without a peer). */
  private static long peerNumber(String name, byte[][] args) {
    if (args.length == 2) {
      return 0;
    }
    Long v = io.atoll.kv.internal.resp.Numbers.parseLong(args[5]);
    if (v == null || v < 0) {
      throw new IllegalArgumentException("a malformed " + name + " record");
    }
    return v;
  }

  /** Managed mode: keys of a slot lent to a return's source ({@code slot batch key...}). */
  public static final String LENT = "atoll-lent";
  /** Managed mode: the slot's lent batch was settled ({@code slot}). */
  public static final String SETTLED = "atoll-settled";
  /** Managed mode: the last returned batch of the slot stored here ({@code slot [host port incarnation-hex batch]}). */
  public static final String RETURNED = "atoll-returned";

  /**
   * The log's records of a managed node's migration marks of a slot (see {@code
   * cluster.MarkRecords}): {@code slot [host port incarnation-hex 0]}, none without a peer.
   */
  public static final String MIGRATING_MARK = "atoll-migrating-mark";
  /** As {@link #MIGRATING_MARK}, for the node the slot's keys arrive from. */
  public static final String IMPORTING_MARK = "atoll-importing-mark";

  /**
   * The log's record of a managed node's import record for a slot (a hand-off's keys arriving here,
   * see {@code cluster.Imports}): {@code slot [host port incarnation-hex floor]}, none without a source.
   */
  public static final String IMPORTED = "atoll-imported";

  /** The log's record of FLUSHALL, one per slot that held keys (Atoll's own; Redis has none). */
  public static final String FLUSH_SLOT = "atoll-flushslot";
  /**
   * The log's record of a hash stored whole (RESTORE, MIGRATE's arrival): key, expiry (0: none),
   * then fields and values; one record, so a crash cannot leave it half replaced.
   */
  public static final String SET_HASH = "atoll-sethash";

  private static boolean arityOk(CommandSpec spec, int argc) {
    int a = spec.arity();
    return a >= 0 ? argc == a : argc >= -a;
  }

  private static String unknown(Call c) {
    StringBuilder args = new StringBuilder();
    for (int i = 1; i < c.args.length && args.length() < 128; i++) {
      args.append('\'').append(clip(c.str(i), 128 - args.length())).append("' ");
    }
    return "ERR unknown command '" + clip(c.str(0), 128) + "', with args beginning with: " + args;
  }

  private static String clip(String s, int n) {
    return s.length() <= n ? s : s.substring(0, n);
  }
}

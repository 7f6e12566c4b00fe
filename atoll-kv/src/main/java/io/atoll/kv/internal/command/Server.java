package io.atoll.kv.internal.command;

import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/** Connection and server commands: PING, HELLO, INFO, CONFIG, CLIENT, COMMAND, SCAN, and the like. */
final class Server {
  static final String VERSION = "7.2.4";

  private final SlotStore store;
  private final Stats stats;
  private final Clients clients;
  private final ServerInfo info;
  private final Supplier<CommandTable> table;
  private final Auth auth;
  private final Runnable shutdown;

  Server(SlotStore store, Stats stats, Clients clients, ServerInfo info,
      Supplier<CommandTable> table, Auth auth, Runnable shutdown) {
    this.shutdown = shutdown;
    this.auth = auth;
    this.store = store;
    this.stats = stats;
    this.clients = clients;
    this.info = info;
    this.table = table;
  }

  void register(CommandTable.Builder b) {
    b.add("ping", -1, "fast", 0, 0, 0, c -> {
      if (c.argc() > 2) {
        throw new CommandError("ERR wrong number of arguments for 'ping' command");
      }
      if (c.argc() == 2) {
        c.reply.bulk(c.arg(1));
      } else {
        c.reply.simple("PONG");
      }
    })
        .add("echo", 2, "fast", 0, 0, 0, c -> c.reply.bulk(c.arg(1)))
        .add("quit", -1, "fast no_auth", 0, 0, 0, c -> {
          c.session.closeAfterReply = true;
          c.reply.ok();
        })
        .add("select", 2, "fast", 0, 0, 0, c -> {
          if (c.integer(1) != 0) {
            throw new CommandError("ERR SELECT is not allowed in cluster mode");
          }
          c.reply.ok();
        })
        .add("auth", -2, "fast no_auth", 0, 0, 0, c -> {
          if (c.argc() > 3) {
            throw new CommandError(CommandError.SYNTAX);
          }
          if (c.argc() == 2) {
            if (!auth.required()) {
              throw new CommandError(Auth.NO_PASSWORD);
            }
            auth.authenticate(c.session, "default", c.arg(1));
          } else {
            auth.authenticate(c.session, c.str(1), c.arg(2));
          }
          c.reply.ok();
        })
        .add("hello", -1, "fast no_auth", 0, 0, 0, this::hello)
        .add("readonly", 1, "fast", 0, 0, 0, c -> {
          c.session.readonly = true;
          c.reply.ok();
        })
        .add("readwrite", 1, "fast", 0, 0, 0, c -> {
          c.session.readonly = false;
          c.reply.ok();
        })
        // Run by the dispatcher, which holds the transaction's queue (Dispatcher.transaction).
        .add("multi", 1, "noscript loading stale fast allow_busy", 0, 0, 0, Dispatcher.TRANSACTION)
        .add("exec", 1, "noscript loading stale skip_slowlog", 0, 0, 0, Dispatcher.TRANSACTION)
        .add("discard", 1, "noscript loading stale fast allow_busy", 0, 0, 0, Dispatcher.TRANSACTION)
        .add("watch", -2, "noscript loading stale fast allow_busy", 1, -1, 1, Dispatcher.WATCH)
        .add("unwatch", 1, "noscript loading stale fast allow_busy", 0, 0, 0, Dispatcher.TRANSACTION)
        .add("asking", 1, "fast", 0, 0, 0, c -> {
          c.session.asking = true;
          c.reply.ok();
        })
        .add("wait", 3, "", 0, 0, 0, this::await)
        .add("psync", -3, "admin noscript no_async_loading no_multi", 0, 0, 0, c -> {
          Long offset = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(2));
          if (offset == null) {
            throw new CommandError(CommandError.NOT_INTEGER);
          }
          c.takeover = info.replication().psync(c.session, c.str(1), offset);
        })
        .add("sync", 1, "admin noscript", 0, 0, 0, c -> {
          throw new CommandError("ERR SYNC is not served: replicas of this node use PSYNC");
        })
        .add("replconf", -1, "admin noscript loading stale allow_busy", 0, 0, 0, c -> {
          info.replication().replconf(c.session, java.util.Arrays.copyOfRange(c.args, 1, c.argc()));
          if (c.argc() < 2 || !isAck(c.str(1))) {
            c.reply.ok();
          }
        })
        .add("role", 1, "noscript loading stale fast", 0, 0, 0, c -> info.replication().role(c.reply))
        .add("replicaof", 3, "admin noscript stale no_async_loading", 0, 0, 0, c -> {
          throw new CommandError("ERR REPLICAOF not allowed in cluster mode.");
        })
        .add("slaveof", 3, "admin noscript stale no_async_loading", 0, 0, 0, c -> {
          throw new CommandError("ERR REPLICAOF not allowed in cluster mode.");
        })
        .add("failover", -1, "admin noscript stale", 0, 0, 0, c -> {
          throw new CommandError("ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.");
        })
        .add("time", 1, "fast", 0, 0, 0, c -> {
          long micros = c.now * 1000;
          c.reply.array(2);
          c.reply.bulk(Long.toString(micros / 1_000_000));
          c.reply.bulk(Long.toString(micros % 1_000_000));
        })
        .add("dbsize", 1, "readonly fast", 0, 0, 0, c -> c.reply.integer(store.size()))
        .add("flushall", -1, "write", 0, 0, 0, this::flush)
        .add("flushdb", -1, "write", 0, 0, 0, this::flush)
        .add("scan", -2, "readonly", 0, 0, 0, this::scan)
        .add("keys", 2, "readonly", 0, 0, 0, this::keys)
        .add("info", -1, "", 0, 0, 0, this::info)
        .add("bgrewriteaof", 1, "", 0, 0, 0, c -> c.reply.simple(info.log().rewrite()))
        .add("shutdown", -1, "", 0, 0, 0, this::shutdown)
        .add("lastsave", 1, "fast", 0, 0, 0, c -> c.reply.integer(info.snapshots() == Snapshots.NONE
            ? info.startedAt() / 1000 : info.snapshots().lastSave()))
        .add("save", 1, "", 0, 0, 0, c -> {
          info.snapshots().save();
          c.reply.ok();
        })
        .add("bgsave", -1, "", 0, 0, 0, c -> {
          if (c.argc() > 2 || (c.argc() == 2 && !c.opt(1).equals("SCHEDULE"))) {
            throw new CommandError(CommandError.SYNTAX);
          }
          c.reply.simple(info.snapshots().bgsave());
        });
    b.container("config", Map.of(
        "get", CommandTable.Builder.sub("config", "get", -3, "", this::configGet),
        "set", CommandTable.Builder.sub("config", "set", -4, "", this::configSet),
        "resetstat", CommandTable.Builder.sub("config", "resetstat", 2, "", c -> c.reply.ok()),
        "rewrite", CommandTable.Builder.sub("config", "rewrite", 2, "", c -> c.reply.ok())));
    // Only what redis-cli --cluster fix asks: whether a key left on both sides of an interrupted
    // MIGRATE holds the same value on each (Redis' digest, so it compares with Redis nodes too).
    b.container("debug", Map.of(
        "digest-value", CommandTable.Builder.sub("debug", "digest-value", -2, "", this::digestValue)));
    b.container("client", Map.of(
        "setname", CommandTable.Builder.sub("client", "setname", 3, "", c -> {
          String n = c.str(2);
          for (char ch : n.toCharArray()) {
            if (ch <= ' ' || ch > '~') {
              throw new CommandError("ERR Client names cannot contain spaces, newlines or special characters.");
            }
          }
          c.session.name(n);
          c.reply.ok();
        }),
        "getname", CommandTable.Builder.sub("client", "getname", 2, "", c -> {
          String n = c.session.name();
          c.reply.bulk(n.isEmpty() ? null : n);
        }),
        "id", CommandTable.Builder.sub("client", "id", 2, "", c -> c.reply.integer(c.session.id())),
        "info", CommandTable.Builder.sub("client", "info", 2, "", c -> c.reply.bulk(c.session.describe(c.now) + "\n")),
        "list", CommandTable.Builder.sub("client", "list", -2, "", c -> {
          StringBuilder sb = new StringBuilder();
          for (Session s : clients.all()) {
            sb.append(s.describe(c.now)).append('\n');
          }
          c.reply.bulk(sb.toString());
        }),
        "setinfo", CommandTable.Builder.sub("client", "setinfo", 4, "", c -> {
          switch (c.opt(2)) {
            case "LIB-NAME" -> c.session.lib(c.str(3), null);
            case "LIB-VER" -> c.session.lib(null, c.str(3));
            default -> throw new CommandError("ERR Unrecognized option '" + c.str(2) + "'");
          }
          c.reply.ok();
        }),
        "no-evict", CommandTable.Builder.sub("client", "no-evict", 3, "", c -> c.reply.ok()),
        "no-touch", CommandTable.Builder.sub("client", "no-touch", 3, "", c -> c.reply.ok())));
    b.container("command", this::commandList, Map.of(
        "count", CommandTable.Builder.sub("command", "count", 2, "", c -> c.reply.integer(table.get().size())),
        "docs", CommandTable.Builder.sub("command", "docs", -2, "", c -> c.reply.map(0)),
        "info", CommandTable.Builder.sub("command", "info", -2, "", c -> {
          c.reply.array(c.argc() - 2);
          for (int i = 2; i < c.argc(); i++) {
            CommandSpec s = table.get().get(c.str(i).toLowerCase(Locale.ROOT));
            if (s == null) {
              c.reply.nilArray();
            } else {
              describe(c, s);
            }
          }
        }),
        "list", CommandTable.Builder.sub("command", "list", -2, "", c -> {
          c.reply.array(table.get().size());
          table.get().all().forEach(s -> c.reply.bulk(s.name()));
        })));
  }

  /** COMMAND with no subcommand lists every command. */
  private void commandList(Call c) {
    c.reply.array(table.get().size());
    table.get().all().forEach(s -> describe(c, s));
  }

  private static void describe(Call c, CommandSpec s) {
    c.reply.array(10);
    c.reply.bulk(s.name());
    c.reply.integer(s.arity());
    c.reply.set(s.flags().size());
    s.flags().stream().sorted().forEach(f -> c.reply.simple(f));
    c.reply.integer(s.firstKey());
    c.reply.integer(s.lastKey());
    c.reply.integer(s.step());
    c.reply.set(0);
    c.reply.array(0);
    c.reply.array(0);
    c.reply.array(0);
  }

  private void hello(Call c) {
    int proto = c.reply.protocol();
    if (c.argc() >= 2) {
      Long v = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(1));
      if (v == null) {
        throw new CommandError("ERR Protocol version is not an integer or out of range");
      }
      if (v != 2 && v != 3) {
        throw new CommandError("NOPROTO unsupported protocol version");
      }
      proto = v.intValue();
      // Options are read first and applied only once the caller is authenticated, as Redis does: a
      // HELLO that fails changes nothing.
      int authAt = -1;
      String name = null;
      for (int i = 2; i < c.argc(); i++) {
        String o = c.opt(i);
        if (o.equals("AUTH") && i + 2 < c.argc()) {
          authAt = i;
          i += 2;
        } else if (o.equals("SETNAME") && i + 1 < c.argc()) {
          name = c.str(++i);
        } else {
          throw new CommandError("ERR Syntax error in HELLO option '" + c.str(i) + "'");
        }
      }
      if (authAt >= 0) {
        auth.authenticate(c.session, c.str(authAt + 1), c.arg(authAt + 2));
      }
      if (!c.session.authenticated) {
        throw new CommandError(Auth.NOAUTH_HELLO);
      }
      if (name != null) {
        c.session.name(name);
      }
    }
    if (!c.session.authenticated) {
      throw new CommandError(Auth.NOAUTH_HELLO);
    }
    c.reply.protocol(proto);
    c.session.protocol(proto);
    c.reply.map(7);
    c.reply.bulk("server");
    c.reply.bulk("redis");
    c.reply.bulk("version");
    c.reply.bulk(VERSION);
    c.reply.bulk("proto");
    c.reply.integer(proto);
    c.reply.bulk("id");
    c.reply.integer(c.session.id());
    c.reply.bulk("mode");
    c.reply.bulk("cluster");
    c.reply.bulk("role");
    c.reply.bulk("master");
    c.reply.bulk("modules");
    c.reply.array(0);
  }

  /**
   * SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as Redis: the node stops (its log written and
   * synced first, under any policy) and the connection closes without a reply. SAVE writes a
   * snapshot first (a failure answers the error and the node goes on, unless FORCE); without it
   * none is written, as Redis without save points; NOSAVE says so.
   */
  private void shutdown(Call c) {
    boolean abort = false;
    boolean save = false;
    boolean nosave = false;
    boolean force = false;
    for (int i = 1; i < c.argc(); i++) {
      switch (c.opt(i)) {
        case "NOSAVE" -> nosave = true;
        case "SAVE" -> save = true;
        case "FORCE" -> force = true;
        case "NOW" -> { }
        case "ABORT" -> abort = true;
        default -> throw new CommandError(CommandError.SYNTAX);
      }
    }
    if (abort) {
      throw new CommandError("ERR No shutdown in progress.");
    }
    if (save && nosave) {
      throw new CommandError(CommandError.SYNTAX);
    }
    if (shutdown == null) {
      throw new CommandError("ERR SHUTDOWN is not served by this embedded node (its owner stops it)");
    }
    if (save) {
      try {
        info.snapshots().save();
      } catch (CommandError e) {
        if (!force) {
          throw new CommandError("ERR Errors trying to SHUTDOWN. Check logs. (" + e.getMessage() + ")");
        }
      }
    }
    c.session.closeAfterReply = true; // no reply: the connection just closes, as Redis does
    shutdown.run();
  }

  private static boolean isAck(String opt) {
    return opt.equalsIgnoreCase("ack") || opt.equalsIgnoreCase("getack");
  }

  /** WAIT numreplicas timeout: answered once enough replicas hold this client's writes, or at the timeout. */
  private void await(Call c) {
    Long n = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(1));
    if (n == null || n < 0 || n > Integer.MAX_VALUE) {
      throw new CommandError(CommandError.NOT_INTEGER);
    }
    Long timeout = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(2));
    if (timeout == null) {
      throw new CommandError("ERR timeout is not an integer or out of range");
    }
    if (timeout < 0) {
      throw new CommandError("ERR timeout is negative");
    }
    java.util.concurrent.CompletableFuture<Integer> done = info.replication().await(n.intValue(), timeout);
    if (done.isDone() || c.inExec) {
      c.reply.integer(done.getNow(0)); // as Redis: inside MULTI it never blocks
      return;
    }
    c.deferred = done.thenApply(count -> r -> r.integer(count));
  }

  private void flush(Call c) {
    if (c.argc() > 2 || (c.argc() == 2 && !c.opt(1).equals("SYNC") && !c.opt(1).equals("ASYNC"))) {
      throw new CommandError(CommandError.SYNTAX);
    }
    store.clear();
    c.reply.ok();
  }

  private void scan(Call c) {
    Long cursor = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(1));
    if (cursor == null || cursor < 0) {
      throw new CommandError("ERR invalid cursor");
    }
    byte[] pattern = null;
    long count = 10;
    String type = null;
    for (int i = 2; i < c.argc(); i++) {
      String o = c.opt(i);
      if (i + 1 >= c.argc()) {
        throw new CommandError(CommandError.SYNTAX);
      }
      switch (o) {
        case "MATCH" -> pattern = c.arg(++i);
        case "COUNT" -> {
          count = c.integer(++i);
          if (count < 1) {
            throw new CommandError(CommandError.SYNTAX);
          }
        }
        case "TYPE" -> type = c.str(++i).toLowerCase(Locale.ROOT);
        default -> throw new CommandError(CommandError.SYNTAX);
      }
    }
    // The cursor is a slot number: each call returns whole slots, so a key present for the whole
    // iteration is returned exactly once.
    List<byte[]> keys = new ArrayList<>();
    int slot = (int) Math.min(cursor, io.atoll.core.slots.KeySlots.SLOT_COUNT);
    long seen = 0;
    while (slot < io.atoll.core.slots.KeySlots.SLOT_COUNT && seen < count) {
      Slot s = store.slot(slot++);
      synchronized (s) {
        for (byte[] k : s.keys(c.now, Integer.MAX_VALUE)) {
          seen++;
          if (pattern != null && !Glob.matches(pattern, k)) {
            continue;
          }
          if (type != null) {
            Entry e = s.get(new io.atoll.kv.internal.store.Key(k), c.now);
            if (e == null || !e.typeName().equals(type)) {
              continue;
            }
          }
          keys.add(k);
        }
      }
    }
    c.reply.array(2);
    c.reply.bulk(Long.toString(slot >= io.atoll.core.slots.KeySlots.SLOT_COUNT ? 0 : slot));
    c.reply.bulks(keys);
  }

  private void keys(Call c) {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < io.atoll.core.slots.KeySlots.SLOT_COUNT; i++) {
      Slot s = store.slot(i);
      synchronized (s) {
        for (byte[] k : s.keys(c.now, Integer.MAX_VALUE)) {
          if (Glob.matches(c.arg(1), k)) {
            keys.add(k);
          }
        }
      }
    }
    c.reply.bulks(keys);
  }

  private Map<String, String> config() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("maxmemory", Long.toString(info.maxMemory()));
    m.put("maxmemory-policy", "noeviction");
    m.put("save", "");
    boolean aof = info.log() != CommandLog.NONE;
    m.put("appendonly", aof ? "yes" : "no");
    m.put("appendfsync", info.log().appendfsync());
    m.put("appenddirname", "appendonlydir");
    m.put("databases", "1");
    m.put("port", Integer.toString(info.tcpPort()));
    m.put("bind", info.bind());
    m.put("cluster-enabled", "yes");
    m.put("cluster-node-timeout", Long.toString(info.nodeTimeoutMillis()));
    m.put("cluster-require-full-coverage", "yes");
    m.put("proto-max-bulk-len", Long.toString(info.maxBulk()));
    m.put("client-query-buffer-limit", Long.toString(info.queryBufferLimit()));
    m.put("client-output-buffer-limit", "normal " + info.outputBufferLimit() + " " + info.outputBufferLimit() + " 0");
    m.put("maxclients", "10000");
    m.put("timeout", "0");
    m.put("slave-read-only", "yes");
    m.put("replica-read-only", "yes");
    return m;
  }

  private void configGet(Call c) {
    Map<String, String> all = config();
    Map<String, String> found = new LinkedHashMap<>();
    for (int i = 2; i < c.argc(); i++) {
      byte[] p = c.str(i).toLowerCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8);
      all.forEach((k, v) -> {
        if (Glob.matches(p, k.getBytes(StandardCharsets.UTF_8))) {
          found.put(k, v);
        }
      });
    }
    c.reply.map(found.size());
    found.forEach((k, v) -> {
      c.reply.bulk(k);
      c.reply.bulk(v);
    });
  }

  private void configSet(Call c) {
    if ((c.argc() - 2) % 2 != 0) {
      throw new CommandError("ERR wrong number of arguments for 'config|set' command");
    }
    for (int i = 2; i < c.argc(); i += 2) {
      String k = c.str(i).toLowerCase(Locale.ROOT);
      if (!config().containsKey(k)) {
        throw new CommandError("ERR Unknown option or number of arguments for CONFIG SET - '" + c.str(i) + "'");
      }
      if (!config().get(k).equals(c.str(i + 1))) {
        throw new CommandError("ERR CONFIG SET failed (possibly related to argument '" + c.str(i)
            + "') - Atoll KV takes this setting at start only");
      }
    }
    c.reply.ok();
  }

  private void info(Call c) {
    java.util.Set<String> want = new java.util.HashSet<>();
    for (int i = 1; i < c.argc(); i++) {
      want.add(c.str(i).toLowerCase(Locale.ROOT));
    }
    boolean all = want.isEmpty() || want.contains("all") || want.contains("everything") || want.contains("default");
    StringBuilder sb = new StringBuilder();
    long uptime = (c.now - info.startedAt()) / 1000;
    if (all || want.contains("server")) {
      sb.append("# Server\r\nredis_version:").append(VERSION).append("\r\nredis_mode:cluster\r\n")
          .append("atoll_kv:1\r\nos:").append(System.getProperty("os.name")).append("\r\narch_bits:64\r\n")
          .append("process_id:").append(ProcessHandle.current().pid()).append("\r\ntcp_port:").append(info.tcpPort())
          .append("\r\nuptime_in_seconds:").append(uptime).append("\r\nuptime_in_days:").append(uptime / 86400)
          .append("\r\n\r\n");
    }
    if (all || want.contains("clients")) {
      sb.append("# Clients\r\nconnected_clients:").append(clients.count())
          .append("\r\nblocked_clients:0\r\nmaxclients:10000\r\n\r\n");
    }
    if (all || want.contains("memory")) {
      Runtime rt = Runtime.getRuntime();
      long used = store.usedMemory();
      sb.append("# Memory\r\nused_memory:").append(used).append("\r\nused_memory_human:").append(human(used))
          .append("\r\nused_memory_heap:").append(rt.totalMemory() - rt.freeMemory())
          .append("\r\nmaxmemory:").append(info.maxMemory()).append("\r\nmaxmemory_human:")
          .append(human(info.maxMemory())).append("\r\nmaxmemory_policy:noeviction\r\n\r\n");
    }
    if (all || want.contains("persistence")) {
      sb.append("# Persistence\r\nloading:").append(info.log().loading() ? 1 : 0).append("\r\nasync_loading:0\r\n");
      for (String f : info.snapshots().info()) {
        sb.append(f).append("\r\n");
      }
      for (String f : info.log().info()) {
        sb.append(f).append("\r\n");
      }
      sb.append("\r\n");
    }
    if (all || want.contains("stats")) {
      sb.append("# Stats\r\ntotal_connections_received:").append(stats.connections.sum())
          .append("\r\ntotal_commands_processed:").append(stats.commands.sum())
          .append("\r\ninstantaneous_ops_per_sec:0\r\nexpired_keys:").append(stats.expired.sum())
          .append("\r\nevicted_keys:0\r\nkeyspace_hits:").append(stats.hits.sum())
          .append("\r\nkeyspace_misses:").append(stats.misses.sum())
          .append("\r\ntotal_error_replies:").append(stats.errors.sum())
          .append("\r\nacl_access_denied_auth:").append(auth.denied()).append("\r\n\r\n");
    }
    if (all || want.contains("replication")) {
      sb.append("# Replication\r\n");
      for (String f : info.replication().info()) {
        sb.append(f).append("\r\n");
      }
      sb.append("\r\n");
    }
    if (all || want.contains("cluster")) {
      sb.append("# Cluster\r\ncluster_enabled:1\r\n\r\n");
    }
    if (all || want.contains("keyspace")) {
      sb.append("# Keyspace\r\n");
      long keys = store.size();
      if (keys > 0) {
        sb.append("db0:keys=").append(keys).append(",expires=").append(store.volatileKeys())
            .append(",avg_ttl=0\r\n");
      }
    }
    c.reply.bulk(sb.toString().stripTrailing() + "\r\n");
  }

  private static String human(long bytes) {
    if (bytes < 1024) {
      return bytes + "B";
    }
    double v = bytes;
    String[] units = {"K", "M", "G", "T"};
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.2f%s", v, units[u]);
  }

  /**
   * DEBUG DIGEST-VALUE key...: for each key, Redis' digest of its value (type, value, whether it
   * has an expiry), 40 hex digits, or 40 zeros if there is none; an expired key not yet removed
   * counts, as in Redis.
   */
  private void digestValue(Call c) {
    c.reply.array(c.argc() - 2);
    for (int i = 2; i < c.argc(); i++) {
      Slot slot = store.slot(io.atoll.core.slots.KeySlots.slotOf(c.arg(i)));
      byte[] digest;
      synchronized (slot) {
        Entry e = slot.get(c.key(i), 0); // time 0: nothing counts as expired
        digest = e == null ? new byte[20] : ValueDigest.of(e);
      }
      c.reply.simple(java.util.HexFormat.of().formatHex(digest));
    }
  }
}

package io.atoll.kv.internal.command;

import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.slots.KeySlots;
import io.atoll.core.slots.SlotState;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.cluster.ClusterText;
import io.atoll.kv.internal.cluster.ClusterView;
import io.atoll.kv.internal.cluster.Health;
import io.atoll.kv.internal.cluster.Migrator;
import io.atoll.kv.internal.cluster.NodeKey;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** CLUSTER's subcommands and MIGRATE. */
final class ClusterCommands {

  /** Introduces this node to another's bus. */
  @FunctionalInterface
  interface Meet {
    void meet(String host, int busPort);
  }

  private final ClusterState cluster;
  private final Health health;
  private final Meet meet;
  private final SlotStore store;
  private final Supplier<Pod> newIdentity;
  private final Migrator migrator;
  private final Executor migrations;
  private final ReturnCommands returns;
  private final NodeKey nodeKey;
  private final Replication replication;

  ClusterCommands(ClusterState cluster, Health health, Meet meet, SlotStore store, Supplier<Pod> newIdentity,
      Migrator migrator, Executor migrations, NodeKey nodeKey, Replication replication) {
    this.replication = replication;
    this.nodeKey = nodeKey;
    this.cluster = cluster;
    this.health = health;
    this.meet = meet;
    this.store = store;
    this.newIdentity = newIdentity;
    this.migrator = migrator;
    this.migrations = migrations;
    this.returns = new ReturnCommands(cluster, store);
  }

  void register(CommandTable.Builder b) {
    Map<String, CommandSpec> subs = new HashMap<>();
    sub(subs, "info", 2, c -> c.reply.bulk(ClusterText.info(cluster.view(), health)
        + (cluster.managedBy() == null ? "" : "atoll_managed_by:" + cluster.managedBy() + "\r\n"
            + "atoll_serving:" + (cluster.serving() ? 1 : 0) + "\r\n"
            + "atoll_keys_handed_off:" + migrator.keysHandedOff() + "\r\n"
            + "atoll_keys_held:" + store.heldKeys() + "\r\n")));
    sub(subs, "myid", 2, c -> c.reply.bulk(cluster.view().myNodeId()));
    sub(subs, "myshardid", 2, c -> c.reply.bulk(cluster.view().myNodeId()));
    sub(subs, "nodes", 2, c -> c.reply.bulk(ClusterText.nodes(cluster.view(), health, c.session.tls())));
    sub(subs, "slots", 2, c -> ClusterText.slots(cluster.view(), c.reply, c.session.tls()));
    sub(subs, "shards", 2, c -> ClusterText.shards(cluster.view(), health, c.reply, replication.offset()));
    sub(subs, "keyslot", 3, c -> c.reply.integer(KeySlots.slotOf(c.arg(2))));
    sub(subs, "countkeysinslot", 3, c -> {
      long s = c.integer(2);
      if (s < 0 || s >= KeySlots.SLOT_COUNT) {
        throw new CommandError("ERR Invalid slot");
      }
      Slot slot = store.slot((int) s);
      synchronized (slot) {
        c.reply.integer(slot.keys(c.now, Integer.MAX_VALUE).size());
      }
    });
    sub(subs, "getkeysinslot", 4, c -> {
      long s = c.integer(2);
      long n = c.integer(3);
      if (s < 0 || s >= KeySlots.SLOT_COUNT || n < 0) {
        throw new CommandError("ERR Invalid slot or number of keys");
      }
      Slot slot = store.slot((int) s);
      List<byte[]> keys;
      synchronized (slot) {
        keys = slot.keys(c.now, (int) Math.min(n, Integer.MAX_VALUE));
      }
      c.reply.bulks(keys);
    });
    sub(subs, "meet", -4, this::meet);
    sub(subs, "addslots", -3, c -> {
      cluster.addSlots(slotArgs(c, 2));
      c.reply.ok();
    });
    sub(subs, "addslotsrange", -4, c -> {
      ClusterView v = cluster.view();
      cluster.addSlots(rangeArgs(c, s -> v.config().owner(s) != null ? "ERR Slot " + s + " is already busy" : null));
      c.reply.ok();
    });
    sub(subs, "delslots", -3, c -> {
      cluster.delSlots(slotArgs(c, 2));
      c.reply.ok();
    });
    sub(subs, "delslotsrange", -4, c -> {
      ClusterView v = cluster.view();
      cluster.delSlots(rangeArgs(c, s -> v.config().owner(s) == null ? "ERR Slot " + s + " is already unassigned" : null));
      c.reply.ok();
    });
    sub(subs, "setslot", -4, this::setslot);
    sub(subs, "bumpepoch", 2, c -> c.reply.simple(cluster.bumpEpoch()));
    sub(subs, "set-config-epoch", 3, c -> {
      cluster.setConfigEpoch(c.integer(2));
      c.reply.ok();
    });
    sub(subs, "forget", 3, c -> {
      cluster.forget(c.str(2));
      c.reply.ok();
    });
    sub(subs, "reset", -2, this::reset);
    sub(subs, "count-failure-reports", 3, c -> {
      PodEntry e = cluster.view().byNodeId(c.str(2));
      if (e == null) {
        throw new CommandError("ERR Unknown node " + c.str(2));
      }
      c.reply.integer(health.failureReports(e.id()));
    });
    sub(subs, "saveconfig", 2, c -> c.reply.ok());
    sub(subs, "replicas", 3, c -> replicas(c));
    sub(subs, "slaves", 3, c -> replicas(c));
    sub(subs, "links", 2, c -> c.reply.array(0));
    sub(subs, "replicate", 3, c -> {
      cluster.replicate(c.str(2), store.size() > 0);
      c.reply.ok();
    });
    sub(subs, "failover", -2, this::failover);
    // Sent by this cluster's replica whose manual failover starts: pauses writes, answers the offset.
    sub(subs, Replication.PAUSE_COMMAND.toLowerCase(Locale.ROOT), 3, c -> {
      long millis = c.integer(2);
      if (millis <= 0) {
        throw new CommandError("ERR the pause must be positive (milliseconds)");
      }
      if (c.inExec) {
        throw new CommandError("ERR CLUSTER " + Replication.PAUSE_COMMAND + " is not served inside a transaction");
      }
      // It waits for writes under way and takes every slot's lock once: not on an event loop.
      c.deferred = new CompletableFuture<>();
      CompletableFuture<Consumer<io.atoll.kv.internal.resp.Reply>> done = c.deferred;
      Thread.ofPlatform().name("kv-pause-writes").daemon(true).start(() -> {
        try {
          long offset = replication.pauseWrites(millis);
          done.complete(r -> r.integer(offset));
        } catch (CommandError e) {
          done.complete(r -> r.error(e.getMessage()));
        } catch (RuntimeException e) {
          done.completeExceptionally(e);
        }
      });
    });
    sub(subs, "help", 2, c -> {
      String[] lines = {"CLUSTER <subcommand> [<arg> ...]. Subcommands are:",
          "ADDSLOTS, ADDSLOTSRANGE, BUMPEPOCH, COUNT-FAILURE-REPORTS, COUNTKEYSINSLOT, DELSLOTS, DELSLOTSRANGE,",
          "FORGET, GETKEYSINSLOT, INFO, KEYSLOT, MEET, MYID, NODES, RESET, SET-CONFIG-EPOCH, SETSLOT, SHARDS, SLOTS"};
      c.reply.array(lines.length);
      for (String l : lines) {
        c.reply.simple(l);
      }
    });
    // Managed mode's own, between the source and the target of a hand-off (ReturnCommands):
    // IMPORTING marks; a return pulls the keys that reached the target back to the source.
    sub(subs, "atoll-node", -2, this::node);
    sub(subs, "atoll-importing", -9, c -> returns.importing(c, slotArgs(c, ReturnCommands.importingSlotsFrom(c))));
    sub(subs, "atoll-return", -7, c -> returns.begin(c, slotArgs(c, 6)));
    sub(subs, "atoll-return-batch", 5, c -> returns.batch(c, slot(c, 3)));
    b.container("cluster", subs);
    b.add("migrate", -6, "write", 0, 0, 0, c -> {
      String manager = cluster.managedBy();
      if (manager != null) {
        throw new CommandError(managedRefusal("MIGRATE", manager));
      }
      migrate(c);
    });
  }

  /** Operator slot and membership commands: refused in managed mode, where the manager decides. */
  private static final Set<String> OPERATOR = Set.of("meet", "addslots", "addslotsrange", "delslots",
      "delslotsrange", "setslot", "bumpepoch", "set-config-epoch", "forget", "reset", "replicate", "failover",
      Replication.PAUSE_COMMAND.toLowerCase(Locale.ROOT));

  /**
   * CLUSTER ATOLL-NODE [proof]: without an argument, a fresh nonce for this connection; with one,
   * the proof for that nonce, which then makes the connection another node's of this cluster, which
   * may send the hand-offs' internal commands (see {@link NodeKey}). A nonce serves one proof, right
   * or wrong, so a proof seen on the wire cannot be replayed.
   */
  private void node(Call c) {
    if (cluster.managedBy() == null) {
      throw new CommandError("ERR CLUSTER ATOLL-NODE is used by the shard manager's hand-offs only"
          + " (expected: a node started with --manager)");
    }
    if (!nodeKey.known()) {
      throw new CommandError("NOPERM this node has no node key yet (expected: a node registered with a shard"
          + " manager that gives one)");
    }
    if (c.args.length == 2) {
      String nonce = NodeKey.nonce();
      c.session.nodeNonce = nonce;
      c.reply.bulk(nonce);
      return;
    }
    if (c.args.length != 3) {
      throw new CommandError("ERR wrong number of arguments for 'cluster|atoll-node' command (expected: no"
          + " argument for a nonce, or the proof)");
    }
    String nonce = c.session.nodeNonce;
    c.session.nodeNonce = null; // one use, whatever the outcome
    if (nonce == null) {
      throw new CommandError("NOPERM no node challenge pending on this connection (expected: CLUSTER ATOLL-NODE"
          + " without an argument first, then the proof for the nonce it answered, once)");
    }
    if (!nodeKey.verifies(cluster.view().myNodeId(), nonce, c.arg(2))) {
      throw new CommandError("NOPERM wrong node proof for node " + cluster.view().myNodeId() + " (expected: the"
          + " HMAC of this node's id and the nonce it answered, under the key the shard manager gives the nodes of"
          + " this cluster)");
    }
    c.session.node = true;
    c.reply.ok();
  }

  private void sub(Map<String, CommandSpec> subs, String name, int arity, Handler h) {
    subs.put(name, CommandTable.Builder.sub("cluster", name, arity, "", c -> {
      String manager = cluster.managedBy();
      if (manager != null && OPERATOR.contains(name)) {
        throw new CommandError(managedRefusal("CLUSTER " + name.toUpperCase(Locale.ROOT), manager));
      }
      try {
        h.run(c);
      } catch (ClusterState.Refused e) {
        throw new CommandError(e.getMessage());
      }
    }));
  }

  static String managedRefusal(String command, String manager) {
    return "ERR " + command + " is refused: this node's slots are placed by the shard manager at " + manager
        + " (managed mode), which moves slots and their keys itself; run the node without --manager to place"
        + " slots by hand";
  }

  /** CLUSTER REPLICAS id: the CLUSTER NODES line of each of its replicas. */
  private void replicas(Call c) {
    ClusterView v = cluster.view();
    PodEntry e = v.byNodeId(c.str(2));
    if (e == null) {
      throw new CommandError("ERR Unknown node " + c.str(2));
    }
    if (v.primaryOf(e.id()) != null) {
      throw new CommandError("ERR The specified node is not a master");
    }
    List<String> lines = new ArrayList<>();
    for (String line : ClusterText.nodes(v, health, c.session.tls()).split("\n")) {
      String[] f = line.split(" ", 5);
      if (f.length > 3 && f[3].equals(c.str(2))) {
        lines.add(line);
      }
    }
    c.reply.array(lines.size());
    for (String l : lines) {
      c.reply.bulk(l);
    }
  }

  /** CLUSTER FAILOVER [FORCE|TAKEOVER], sent to a replica. */
  private void failover(Call c) {
    String mode = "";
    if (c.argc() == 3) {
      mode = c.opt(2);
      if (!mode.equals("FORCE") && !mode.equals("TAKEOVER")) {
        throw new CommandError(CommandError.SYNTAX);
      }
    } else if (c.argc() > 3) {
      throw new CommandError(CommandError.SYNTAX);
    }
    replication.failover(mode);
    c.reply.ok();
  }

  private static int slot(Call c, int i) {
    Long s = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(i));
    if (s == null || s < 0 || s >= KeySlots.SLOT_COUNT) {
      throw new CommandError("ERR Invalid or out of range slot");
    }
    return s.intValue();
  }

  private static int[] slotArgs(Call c, int from) {
    int[] slots = new int[c.argc() - from];
    for (int i = from; i < c.argc(); i++) {
      slots[i - from] = slot(c, i);
    }
    return slots;
  }

  /** The slots of ADDSLOTSRANGE/DELSLOTSRANGE; {@code refuse} names a slot's error, or null. */
  private static int[] rangeArgs(Call c, java.util.function.IntFunction<String> refuse) {
    if ((c.argc() - 2) % 2 != 0) {
      throw new CommandError("ERR wrong number of arguments for '" + "cluster|" + c.str(1).toLowerCase(Locale.ROOT)
          + "' command");
    }
    Ranges slots = new Ranges(refuse);
    for (int i = 2; i < c.argc(); i += 2) {
      slots.add(slot(c, i), slot(c, i + 1));
    }
    return slots.toArray();
  }

  /**
   * The slots of several ranges, each at most once: a repeated slot is refused as Redis refuses it,
   * so many overlapping ranges in one request cannot expand past 16384 slots.
   */
  private static final class Ranges {
    private final boolean[] seen = new boolean[KeySlots.SLOT_COUNT];
    private final java.util.function.IntFunction<String> refuse;
    private int[] slots = new int[64];
    private int n;

    void add(int start, int end) {
      if (start > end) {
        throw new CommandError("ERR start slot number " + start + " is greater than end slot number " + end);
      }
      for (int s = start; s <= end; s++) {
        String error = refuse.apply(s);
        if (error != null) {
          throw new CommandError(error);
        }
        if (seen[s]) {
          throw new CommandError("ERR Slot " + s + " specified multiple times");
        }
        seen[s] = true;
        if (n == slots.length) {
          slots = java.util.Arrays.copyOf(slots, Math.min(KeySlots.SLOT_COUNT, n * 2));
        }
        slots[n++] = s;
      }
    }

    Ranges(java.util.function.IntFunction<String> refuse) {
      this.refuse = refuse;
    }

    int[] toArray() {
      return java.util.Arrays.copyOf(slots, n);
    }
  }

  private void meet(Call c) {
    if (c.argc() > 5) {
      throw new CommandError("ERR wrong number of arguments for 'cluster|meet' command");
    }
    Long port = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(3));
    if (port == null) {
      throw new CommandError("ERR Invalid TCP base port specified: " + c.str(3));
    }
    long bus = port + 10000;
    if (c.argc() == 5) {
      Long b = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(4));
      if (b == null) {
        throw new CommandError("ERR Invalid TCP bus port specified: " + c.str(4));
      }
      bus = b;
    }
    String host = c.str(2);
    if (port < 0 || port > 65535 || bus < 1 || bus > 65535 || host.isBlank() || !host.matches("[0-9A-Za-z.:\\-]+")) {
      throw new CommandError("ERR Invalid node address specified: " + host + ":" + c.str(3));
    }
    meet.meet(host, (int) bus);
    c.reply.ok();
  }

  private void setslot(Call c) {
    int s = slot(c, 2);
    String action = c.opt(3);
    switch (action) {
      case "IMPORTING", "MIGRATING" -> {
        if (c.argc() != 5) {
          throw new CommandError("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
        }
        cluster.setSlotMigration(s, SlotState.valueOf(action), c.str(4));
      }
      case "STABLE" -> {
        if (c.argc() != 4) {
          throw new CommandError("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
        }
        cluster.setSlotStable(s);
      }
      case "NODE" -> {
        if (c.argc() != 5) {
          throw new CommandError("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
        }
        cluster.setSlotNode(s, c.str(4), x -> {
          Slot slot = store.slot(x);
          synchronized (slot) {
            return !slot.keys(c.now, 1).isEmpty();
          }
        });
      }
      default -> throw new CommandError("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
    }
    c.reply.ok();
  }

  private void reset(Call c) {
    boolean hard = false;
    if (c.argc() == 3) {
      switch (c.opt(2)) {
        case "HARD" -> hard = true;
        case "SOFT" -> hard = false;
        default -> throw new CommandError(CommandError.SYNTAX);
      }
    } else if (c.argc() > 3) {
      throw new CommandError(CommandError.SYNTAX);
    }
    ClusterView v = cluster.view();
    boolean replica = v.myPrimary() != null;
    if (!replica && store.size() > 0) {
      throw new CommandError("ERR CLUSTER RESET can't be called with master nodes containing keys");
    }
    Pod me = hard ? newIdentity.get() : v.config().pod(v.me()).orElseThrow().pod();
    cluster.reset(me, hard); // a replica stops following here
    if (replica) {
      store.clear(); // a replica reset is an empty primary, as in Redis
    }
    c.reply.ok();
  }

  private void migrate(Call c) {
    String host = c.str(1);
    Long port = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(2));
    if (port == null || port < 1 || port > 65535) {
      throw new CommandError(CommandError.NOT_INTEGER);
    }
    c.integer(4); // destination db
    long timeout = c.integer(5);
    if (timeout <= 0) {
      timeout = 1000;
    }
    boolean copy = false;
    boolean replace = false;
    List<byte[]> auth = List.of();
    List<byte[]> keys = new ArrayList<>();
    int[] slots = null;
    for (int i = 6; i < c.argc(); i++) {
      String o = c.opt(i);
      switch (o) {
        case "COPY" -> copy = true;
        case "REPLACE" -> replace = true;
        case "AUTH" -> {
          if (i + 1 >= c.argc()) {
            throw new CommandError(CommandError.SYNTAX);
          }
          auth = List.of(bytes("AUTH"), c.arg(++i));
        }
        case "AUTH2" -> {
          if (i + 2 >= c.argc()) {
            throw new CommandError(CommandError.SYNTAX);
          }
          auth = List.of(bytes("AUTH"), c.arg(i + 1), c.arg(i + 2));
          i += 2;
        }
        case "KEYS", "SLOTS", "SLOTSRANGE" -> {
          if (c.arg(3).length != 0) {
            throw new CommandError("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
          }
          if (o.equals("KEYS")) {
            for (i++; i < c.argc(); i++) {
              keys.add(c.arg(i));
            }
          } else {
            String[] rest = new String[c.argc() - i - 1];
            for (int k = 0; k < rest.length; k++) {
              rest[k] = c.str(i + 1 + k);
            }
            slots = o.equals("SLOTS") ? slotList(rest) : rangeList(rest);
            i = c.argc();
          }
        }
        default -> throw new CommandError(CommandError.SYNTAX);
      }
    }
    if (keys.isEmpty() && slots == null) {
      if (c.arg(3).length == 0) {
        throw new CommandError(CommandError.SYNTAX);
      }
      keys.add(c.arg(3));
    }
    Migrator.Target t = new Migrator.Target(host, port.intValue(), auth, (int) Math.min(timeout, Integer.MAX_VALUE),
        copy, replace);
    int[] slotsToMove = slots;
    c.deferred = CompletableFuture.supplyAsync(() -> {
      String result = slotsToMove != null ? migrator.migrateSlots(t, slotsToMove) : migrator.migrateKeys(t, keys);
      Consumer<io.atoll.kv.internal.resp.Reply> reply = r -> {
        if (result.equals("OK") || result.equals("NOKEY")) {
          r.simple(result);
        } else {
          r.error(result);
        }
      };
      return reply;
    }, migrations);
  }

  private static int[] slotList(String[] args) {
    if (args.length == 0) {
      throw new CommandError(CommandError.SYNTAX);
    }
    int[] r = new int[args.length];
    for (int i = 0; i < args.length; i++) {
      r[i] = parseSlot(args[i]);
    }
    return r;
  }

  private static int[] rangeList(String[] args) {
    if (args.length == 0 || args.length % 2 != 0) {
      throw new CommandError(CommandError.SYNTAX);
    }
    Ranges r = new Ranges(s -> null);
    for (int i = 0; i < args.length; i += 2) {
      r.add(parseSlot(args[i]), parseSlot(args[i + 1]));
    }
    return r.toArray();
  }

  private static int parseSlot(String s) {
    Long v = io.atoll.kv.internal.resp.Numbers.parseLong(s.getBytes(StandardCharsets.US_ASCII));
    if (v == null || v < 0 || v >= KeySlots.SLOT_COUNT) {
      throw new CommandError("ERR Invalid or out of range slot");
    }
    return v.intValue();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}

package io.atoll.kv.internal.command;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.cluster.ClusterView;
import io.atoll.kv.internal.cluster.Dump;
import io.atoll.kv.internal.cluster.Imports;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Managed mode's internal commands on the target of a hand-off, sent by its source:
 * {@code CLUSTER ATOLL-IMPORTING} (the keys of these slots are on their way here; see {@link Imports}
 * for when keys left by an earlier hand-off go) and the two of a
 * <em>return</em>, the reverse of a hand-off that stopped part way, which the source runs before it
 * hands the slot to another node ({@code Migrator.pullBack}):
 * <ul>
 *   <li>{@code CLUSTER ATOLL-RETURN host port incarnation token slot...}: this node returns these
 *       slots' keys to the source named; {@code token} names the return, and requests of an older
 *       one are refused.
 *   <li>{@code CLUSTER ATOLL-RETURN-BATCH token slot ack}: settles the batch {@code ack} (the
 *       source stored it; 0 for none), then answers the batch lent and not yet settled, or lends a
 *       new one: {@code [id, key, ttl-ms, payload, ...]}; {@code [0]} once no key of the slot is
 *       left here (the slot's marks then go).
 * </ul>
 * A lent key is out of the slot until settled, so no command changes it while it is on its way;
 * a batch answered but not settled is answered again, and the source keeps its own copy of a key
 * it already has, so a lost answer or a lost settlement loses nothing. Lent keys are never live
 * here again: {@code ATOLL-IMPORTING} is refused while a batch is lent (the source finishes a
 * return before it hands the slot here again).
 */
final class ReturnCommands {
  /** Keys per batch, as a hand-off's. */
  static final int BATCH = 256;
  /** Bytes of values per batch, past which a batch ends early (one key always goes). */
  static final long BATCH_BYTES = 8L << 20;
  /**
   * Batch ids, from a random start: a node restarted (or its heir) lends new batches, and the source
   * skips a batch whose sender and id it stored last; ids counted from 1 again could repeat that one.
   */
  private static final AtomicLong BATCHES = new AtomicLong(
      java.util.concurrent.ThreadLocalRandom.current().nextLong(1, 1L << 62));

  private final ClusterState cluster;
  private final SlotStore store;

  ReturnCommands(ClusterState cluster, SlotStore store) {
    this.cluster = cluster;
    this.store = store;
  }

  private void checkManaged(String name) {
    if (cluster.managedBy() == null) {
      throw new CommandError("ERR CLUSTER " + name + " is used by the shard manager's hand-offs only"
          + " (expected: a node started with --manager)");
    }
  }

  private static PodId source(Call c) {
    try {
      return new PodId(new PodAddress(c.str(2), Integer.parseInt(c.str(3))), Long.parseUnsignedLong(c.str(4), 16));
    } catch (IllegalArgumentException e) {
      throw new CommandError("ERR Invalid source node: " + e.getMessage()
          + " (expected: host port incarnation-in-hex ...)");
    }
  }

  private static long number(Call c, int i, String what) {
    Long n = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(i));
    if (n == null) {
      throw new CommandError("ERR Invalid " + what + ": " + c.str(i) + " (expected: an integer)");
    }
    return n;
  }

  /** Where ATOLL-IMPORTING's slots begin: after {@code TOKEN t} when it names one. */
  static int importingSlotsFrom(Call c) {
    if (!c.str(8).equalsIgnoreCase("TOKEN")) {
      return 8; // a source that predates tokens
    }
    if (c.argc() < 11) {
      throw new CommandError("ERR wrong number of arguments for 'cluster|atoll-importing' command (got: " + c.argc()
          + " with TOKEN; expected: ... target-incarnation TOKEN token slot...)");
    }
    return 10;
  }

  /** The token ATOLL-IMPORTING names, or 0 if it names none. */
  private static long handOffToken(Call c) {
    if (importingSlotsFrom(c) == 8) {
      return 0;
    }
    Long t = io.atoll.kv.internal.resp.Numbers.parseLong(c.arg(9));
    if (t == null || t <= 0) {
      throw new CommandError("ERR Invalid hand-off token: " + c.str(9) + " (expected: an integer > 0)");
    }
    return t;
  }

  /**
   * CLUSTER ATOLL-IMPORTING host port incarnation epoch FRESH|RESUME target-incarnation [TOKEN t] slot...: a hand-off
   * starts or resumes, made under the source's config at {@code epoch} (in which it owns the slots). FRESH:
   * the source has no MIGRATING mark naming this node for these slots, so keys here from an earlier
   * hand-off are found by nobody and go first ({@link Imports#begin}); RESUME: the keys already
   * here are the ones it sends clients to. {@code TOKEN t} names this attempt: from this answer on,
   * each slot stores only this connection's restores, and those of an older attempt (whose answers
   * timed out at the source, which holds those keys) are refused. Without it (a source that
   * predates tokens) the slot's token is 0: this connection's restores store until a tokened attempt
   * fences them.
   */
  void importing(Call c, int[] slots) {
    checkManaged("ATOLL-IMPORTING");
    long token = handOffToken(c);
    PodId source = source(c);
    long epoch = number(c, 5, "config epoch");
    String mode = c.str(6).toUpperCase(java.util.Locale.ROOT);
    if (epoch < 0 || !mode.equals("FRESH") && !mode.equals("RESUME")) {
      throw new CommandError("ERR Invalid hand-off: epoch " + c.str(5) + ", " + c.str(6) + " (expected: an epoch >= 0"
          + " and FRESH or RESUME)");
    }
    // The hand-off is for the node the source's config names, not for whatever answers at its
    // address: a node restarted there (a new incarnation, before the manager declared the old one
    // dead) would take keys the manager never sees it hold, and the slot would go elsewhere.
    long me = cluster.view().me().incarnation();
    long addressed;
    try {
      addressed = Long.parseUnsignedLong(c.str(7), 16);
    } catch (NumberFormatException e) {
      throw new CommandError("ERR Invalid target incarnation: " + c.str(7) + " (expected: an incarnation in hex)");
    }
    if (addressed != me) {
      throw new CommandError("ERR this hand-off is for incarnation " + c.str(7) + " of this address; this node is"
          + " incarnation " + Long.toHexString(me) + " (expected: the node the source's config names)");
    }
    for (int s : slots) {
      Slot slot = store.slot(s);
      String refused;
      synchronized (slot) {
        refused = Imports.begin(slot, cluster.view(), source, epoch, mode.equals("FRESH"));
        if (refused == null) {
          slot.handOffToken(token); // fences the older attempt, under the lock its restores take
        }
      }
      if (refused != null) {
        throw new CommandError(refused);
      }
    }
    cluster.markImporting(slots, source);
    c.session.handOffToken = token;
    c.awaitsReplicas = true; // what it changed (a record, marks) reaches the replicas before the answer
    c.reply.ok();
  }

  /** CLUSTER ATOLL-RETURN host port incarnation token slot...: a return starts or resumes. */
  void begin(Call c, int[] slots) {
    checkManaged("ATOLL-RETURN");
    PodId source = source(c);
    long token = number(c, 5, "return token");
    if (token == 0) {
      throw new CommandError("ERR Invalid return token: 0 (expected: a nonzero integer)");
    }
    int[] paired = cluster.markReturning(slots, source);
    java.util.Set<Integer> returning = new java.util.HashSet<>();
    for (int s : paired) {
      returning.add(s);
      Slot slot = store.slot(s);
      synchronized (slot) {
        // A return fences every hand-off attempt of a slot it takes back: a restore of one arriving
        // late would put back a key the source holds as its own (its batch timed out). Slots it
        // does not take back (imported from another node, or not at all) keep their attempt.
        slot.handOffToken(0);
        slot.returnToken(token);
      }
    }
    ClusterView v = cluster.view();
    for (int s : slots) {
      if (returning.contains(s)) {
        continue;
      }
      Slot slot = store.slot(s);
      synchronized (slot) {
        // Nothing here to return is fine (its batch answers [0]); keys of a slot this node does
        // not import from that node are not the source's to take.
        if (!slot.keys(c.now, 1).isEmpty() || slot.lentBatch() != 0) {
          throw new CommandError("ERR slot " + s + " is not being imported from " + source + " here (importing from "
              + v.importing().get(s) + ", owner " + v.config().owner(s) + "), and it has keys (expected: a slot"
              + " this node was importing from that node)");
        }
      }
    }
    c.awaitsReplicas = true; // what it changed (a record, marks) reaches the replicas before the answer
    c.reply.ok();
  }

  /** CLUSTER ATOLL-RETURN-BATCH token slot ack. */
  void batch(Call c, int s) {
    checkManaged("ATOLL-RETURN-BATCH");
    long token = number(c, 2, "return token");
    long ack = number(c, 4, "batch id");
    Slot slot = store.slot(s);
    PodId peer;
    boolean done = false;
    List<byte[]> reply = new ArrayList<>();
    synchronized (slot) {
      ClusterView v = cluster.view();
      peer = v.migrating().get(s);
      boolean returning = peer != null && peer.equals(v.importing().get(s)) && peer.equals(v.config().owner(s));
      if (returning && slot.returnToken() == token) {
        slot.settle(ack);
        if (slot.lentBatch() == 0) {
          lend(slot, c.now);
        }
      } else if (!slot.keys(c.now, 1).isEmpty() || slot.lentBatch() != 0) {
        throw new CommandError("ERR slot " + s + " has no return " + token + " under way here (expected: CLUSTER"
            + " ATOLL-RETURN first)");
      } // else: nothing here (a return that ended and whose answer was lost, or no key ever came)
      if (slot.lentBatch() != 0) {
        reply.add(bytes(Long.toString(slot.lentBatch())));
        for (Map.Entry<Key, Entry> e : slot.lentEntries(c.now).entrySet()) {
          long at = e.getValue().expireAt;
          reply.add(e.getKey().bytes());
          reply.add(bytes(Long.toString(at == 0 ? 0 : Math.max(1, at - c.now))));
          reply.add(Dump.dump(e.getValue()));
        }
      } else {
        slot.returnToken(0);
        reply.add(bytes("0"));
        done = true;
      }
    }
    if (done && peer != null) { // not a lent batch whose keys all expired: [id] alone
      cluster.endReturn(s, peer); // outside the slot's lock: the state's lock is never taken inside one
    }
    c.awaitsReplicas = true; // a lend or a settlement reaches the replicas before the answer
    c.reply.bulks(reply);
  }

  /** Lends the next batch: up to {@link #BATCH} keys and about {@link #BATCH_BYTES} of values. */
  private static void lend(Slot slot, long now) {
    List<byte[]> keys = slot.keys(now, BATCH);
    long bytes = 0;
    int n = 0;
    for (byte[] k : keys) {
      Entry e = slot.get(new Key(k), now);
      n++;
      if (e != null && (bytes += e.valueBytes()) >= BATCH_BYTES) {
        break;
      }
    }
    slot.lend(now, n, BATCHES.incrementAndGet());
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}

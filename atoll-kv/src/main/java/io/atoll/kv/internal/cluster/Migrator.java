package io.atoll.kv.internal.cluster;

import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.slots.KeySlots;
import io.atoll.core.slots.SlotState;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * MIGRATE's sending side. Keys move one slot at a time while that slot's lock is held, as Redis
 * blocks its whole server during MIGRATE: a key is dumped, restored on the target with
 * RESTORE-ASKING, and deleted here only after the target said OK, so a write acknowledged on
 * either side is never lost. The whole-slot form (Garnet's {@code MIGRATE ... SLOTS}) runs the
 * SETSLOT dance itself: IMPORTING on the target, MIGRATING here, every key, then NODE on both.
 * Blocking; run it off the event loops.
 */
public final class Migrator {
  private static final int BATCH = 256;

  private final SlotStore store;
  private final ClusterState cluster;
  private final LongSupplier clock;
  private final java.util.concurrent.atomic.LongAdder handedOff = new java.util.concurrent.atomic.LongAdder();

  /** A migrator for this node. */
  public Migrator(SlotStore store, ClusterState cluster, LongSupplier clock) {
    this(store, cluster, clock, () -> true);
  }

  /**
   * As above, with {@code logged}: waits until this node's log holds every change made so far
   * (false if it cannot be written). A return settles a batch with its sender only once the keys it
   * stored are logged: the sender drops them when settled, so they must survive a crash here.
   */
  public Migrator(SlotStore store, ClusterState cluster, LongSupplier clock, java.util.function.BooleanSupplier logged) {
    this.store = store;
    this.cluster = cluster;
    this.clock = clock;
    this.logged = logged;
  }

  private final java.util.function.BooleanSupplier logged;

  /** Where to and how. {@code auth}: empty, or the AUTH command's arguments. */
  public record Target(String host, int port, List<byte[]> auth, int timeoutMillis, boolean copy, boolean replace) {}

  /**
   * Moves {@code keys}; returns "OK", "NOKEY" if none of them exists, or the error to reply.
   */
  public String migrateKeys(Target t, List<byte[]> keys) {
    Map<Integer, List<byte[]>> bySlot = new LinkedHashMap<>();
    for (byte[] k : keys) {
      bySlot.computeIfAbsent(KeySlots.slotOf(k), s -> new ArrayList<>()).add(k);
    }
    if (!anyPresent(bySlot)) {
      return "NOKEY"; // as Redis, without connecting to the target
    }
    try (RespClient client = connect(t)) {
      int moved = 0;
      for (Map.Entry<Integer, List<byte[]>> e : bySlot.entrySet()) {
        moved += moveBatch(client, t, store.slot(e.getKey()), e.getValue());
      }
      return moved == 0 ? "NOKEY" : "OK";
    } catch (IOException e) {
      return ioError(t, e);
    } catch (RestoreBatch.TargetError e) {
      return e.getMessage();
    }
  }

  private boolean anyPresent(Map<Integer, List<byte[]>> bySlot) {
    long now = clock.getAsLong();
    for (Map.Entry<Integer, List<byte[]>> e : bySlot.entrySet()) {
      Slot slot = store.slot(e.getKey());
      synchronized (slot) {
        for (byte[] k : e.getValue()) {
          if (slot.get(new Key(k), now) != null) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** Moves whole slots to the node at the target address; "OK" or the error. */
  public String migrateSlots(Target t, int[] slots) {
    ClusterView v = cluster.view();
    PodEntry target = null;
    for (PodEntry e : v.config().pods()) {
      if (e.id().address().host().equals(t.host()) && e.id().address().port() == t.port()) {
        target = e;
      }
    }
    if (target == null) {
      return "ERR Unknown node " + t.host() + ":" + t.port() + " (expected: a node of this cluster)";
    }
    String targetId = v.nodeId(target.id());
    for (int s : slots) {
      if (!v.me().equals(v.config().owner(s))) {
        return "ERR I'm not the owner of hash slot " + s;
      }
    }
    try (RespClient client = connect(t)) {
      for (int s : slots) {
        call(client, "CLUSTER", "SETSLOT", Integer.toString(s), "IMPORTING", v.myNodeId());
        cluster.setSlotMigration(s, SlotState.MIGRATING, targetId);
        Slot slot = store.slot(s);
        while (true) {
          List<byte[]> keys;
          synchronized (slot) {
            keys = slot.keys(clock.getAsLong(), BATCH);
          }
          if (keys.isEmpty()) {
            break;
          }
          moveBatch(client, t, slot, keys);
        }
        call(client, "CLUSTER", "SETSLOT", Integer.toString(s), "NODE", targetId);
        cluster.setSlotNode(s, targetId, x -> {
          synchronized (store.slot(x)) {
            return store.slot(x).size() > 0;
          }
        });
      }
      return "OK";
    } catch (IOException e) {
      return ioError(t, e);
    } catch (RestoreBatch.TargetError | ClusterState.Refused e) {
      return e.getMessage();
    }
  }

  /**
   * Managed mode's hand-off of {@code slots} over {@code client}, a connection to {@code target}:
   * the target marks them IMPORTING from this node (one request), this node marks them MIGRATING,
   * and the keys move slot by slot in batches as MIGRATE moves them (each deleted here only after
   * the target's OK; REPLACE, since a copy at the target of a key still here can only be from an
   * earlier attempt). Ends when every slot is empty here; the MIGRATING marks stay (clients are
   * sent -ASK) until the manager's config gives the slots to the target. Run again after a
   * failure, it resumes; a return from the same target that stopped part way is finished first
   * ({@link #pullBack}).
   *
   * @param moved counts the keys moved, as they go
   * @throws IOException if the connection failed; keys moved so far are at the target, the rest
   *     here, and the marks route clients to both; the keys of a batch left unanswered are held
   *     here (TRYAGAIN) until the next attempt, which names a new token and so fences this one at
   *     the target, sent them again (see {@link RestoreBatch})
   * @throws IllegalStateException if the target refused, with its error
   */
  public void handOff(RespClient client, Target t, int[] slots, PodId target, java.util.function.LongConsumer moved)
      throws IOException {
    ClusterView v = cluster.view();
    // A return from this target that stopped part way is finished first (its keys come back, then
    // go forward with the rest): the last batch it lent may be stored here with its settlement
    // lost, and a forward start on the target must not put those keys back live, a key deleted
    // here since among them.
    int[] returning = java.util.Arrays.stream(slots)
        .filter(s -> target.equals(v.migrating().get(s)) && target.equals(v.importing().get(s))).toArray();
    if (returning.length > 0) {
      pullBack(client, returning, target, n -> { });
    }
    // The target learns the config this hand-off is made under (its epoch, in which this node owns
    // every slot) and whether clients are already sent there (RESUME: this node's MIGRATING mark
    // names it) or not (FRESH: keys there are from an earlier hand-off, found by nobody, and go);
    // see Imports.
    ClusterView now = cluster.view();
    List<String> fresh = new ArrayList<>();
    List<String> resumed = new ArrayList<>();
    for (int slot : slots) {
      if (!now.me().equals(now.config().owner(slot))) {
        throw new IllegalStateException("slot " + slot + " is not this node's in its config at epoch "
            + now.config().epoch() + " (owner " + now.config().owner(slot) + "; expected: this node)");
      }
      (target.equals(now.migrating().get(slot)) ? resumed : fresh).add(Integer.toString(slot));
    }
    // Keys held for another target that clients are still sent to must be settled with it first
    // (a return), and this is known before the target is asked: it must not be left IMPORTING
    // for an attempt that will not send a key.
    for (int slot : slots) {
      Slot s = store.slot(slot);
      PodId seen = s.heldFor(); // volatile: the slot's lock only when keys are held for another node
      if (seen == null || seen.equals(target)) {
        continue;
      }
      synchronized (s) {
        PodId heldFor = s.heldFor();
        if (heldFor != null && !heldFor.equals(target) && target.equals(now.heir(heldFor))) {
          s.holdFor(target); // that node died; its heir holds what of the batch arrived: sent again there
          continue;
        }
        if (heldFor != null && !heldFor.equals(target)) {
          if (heldFor.equals(now.migrating().get(slot))) {
            throw new IllegalStateException("slot " + slot + " holds keys of a batch to " + heldFor + " that timed out"
                + " (expected: a return from that node before a hand-off to " + target + ")");
          }
          // This node's mark no longer names that node (declared dead, or its return ended): nobody
          // is sent there, so these keys are this node's alone again.
          s.releaseHeld();
        }
      }
    }
    // A token for this attempt: the target accepts this connection's restores only while the
    // slot's token is this one, so the restores of an older attempt whose answers timed out are
    // refused from the moment this request is answered, and keys held since can be sent again.
    String token = Long.toString(java.util.concurrent.ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE));
    try {
      for (List<String> part : List.of(fresh, resumed)) {
        if (part.isEmpty()) {
          continue;
        }
        List<String> args = new ArrayList<>(List.of("CLUSTER", "ATOLL-IMPORTING", now.me().address().host(),
            Integer.toString(now.me().address().port()), Long.toHexString(now.me().incarnation()),
            Long.toString(now.config().epoch()), part == fresh ? "FRESH" : "RESUME",
            Long.toHexString(target.incarnation()), "TOKEN", token));
        args.addAll(part);
        call(client, args.toArray(new String[0]));
      }
    } catch (RestoreBatch.TargetError e) {
      throw new IllegalStateException(e.getMessage());
    }
    cluster.markMigrating(slots, target);
    for (int slot : slots) {
      Slot s = store.slot(slot);
      while (true) {
        List<byte[]> keys;
        synchronized (s) {
          keys = RestoreBatch.next(s, clock.getAsLong(), BATCH);
        }
        if (keys.isEmpty()) {
          break;
        }
        try {
          int n = RestoreBatch.move(client, s, keys, clock, t.copy(), t.replace(), target);
          handedOff.add(n);
          moved.accept(n);
        } catch (RestoreBatch.TargetError e) {
          throw new IllegalStateException(e.getMessage());
        }
      }
    }
  }

  /**
   * Managed mode's return of {@code slots}, this node's, from {@code from}, over {@code client} (a
   * connection to it): the reverse of a hand-off to it that stopped part way, run before the slots
   * go to another node. Both nodes pair their marks ({@link ClusterState#markReturning}), then,
   * slot by slot, the target lends its keys back in batches; each key is stored here unless this
   * node has it already (a copy here is the one clients were served: a key is served by the
   * target only while this node lacks it), and the batch is settled with the next request. A slot
   * whose last key came back loses both marks on both nodes and is this node's alone again.
   *
   * @param moved counts the keys brought back, as they come
   * @return the slots whose return ended (every slot, unless it throws)
   * @throws IOException if the connection failed: the keys not brought back are still on the target,
   *     found there by -ASK, and the next return resumes
   * @throws IllegalStateException if the target refused, with its error, or this node's marks of
   *     a slot went while it ran (nothing more of it is stored)
   */
  public int[] pullBack(RespClient client, int[] slots, PodId from, java.util.function.LongConsumer moved)
      throws IOException {
    ClusterView v = cluster.view();
    int[] paired = cluster.markReturning(slots, from);
    if (paired.length == 0) {
      return paired;
    }
    long token = java.util.concurrent.ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    List<String> args = new ArrayList<>(List.of("CLUSTER", "ATOLL-RETURN", v.me().address().host(),
        Integer.toString(v.me().address().port()), Long.toHexString(v.me().incarnation()), Long.toString(token)));
    for (int slot : paired) {
      args.add(Integer.toString(slot));
    }
    try {
      call(client, args.toArray(new String[0]));
    } catch (RestoreBatch.TargetError e) {
      // Refused: no return runs, so the marks go back to the hand-off's (a node left paired would
      // take a return for under way at its next start).
      cluster.markMigrating(paired, from);
      throw new IllegalStateException(e.getMessage());
    }
    for (int slot : paired) {
      long ack = 0;
      while (true) {
        if (ack != 0 && !logged.getAsBoolean()) {
          throw new IOException("the log cannot be written: batch " + ack + " of slot " + slot + " is not settled"
              + " (its keys stay lent on " + from + ")");
        }
        client.send(bytes("CLUSTER", "ATOLL-RETURN-BATCH", Long.toString(token), Integer.toString(slot),
            Long.toString(ack)));
        client.flush();
        List<byte[]> batch = client.readBulks(1 + 3 * BATCH, Integer.MAX_VALUE - 64);
        if (batch.isEmpty() || batch.size() % 3 != 1) {
          throw new IOException("return batch of " + batch.size() + " items (expected: 1 + 3 per key)");
        }
        ack = parseId(batch.get(0));
        if (ack == 0) {
          break;
        }
        moved.accept(storeReturned(store.slot(slot), batch, new Stored(from, ack)));
      }
      Slot ended = store.slot(slot);
      synchronized (ended) {
        ended.returned(null, 0);
        ended.releaseHeld(); // every key of the target is back: no late copy is left there
      }
      cluster.endReturn(slot, from);
    }
    return paired;
  }

  /** A returned batch this node stored: its sender and id. */
  private record Stored(PodId from, long batch) {}

  // Per slot, the last returned batch stored here is the slot's (Slot#returned, logged). The
  // target answers a batch again until it is settled, so a settlement lost with its connection
  // (or with a restart of this node) brings the same batch again: it must not be stored twice, or
  // a key deleted here in between would come back.

  /** Stores the keys of a returned batch this node lacks, under the slot's lock; how many. */
  private int storeReturned(Slot slot, List<byte[]> batch, Stored id) throws IOException {
    int n = 0;
    synchronized (slot) {
      // The sender may be the heir of the one recorded (that target died, its replica answers the
      // batch it mirrored, under the same id).
      ClusterView v = cluster.view();
      PodId stored = slot.returnedFrom();
      if (v.standsFor(id.from(), stored) && id.batch() == slot.returnedBatch()) {
        return 0; // stored already (also before a restart: it is logged); this request settles it
      }
      // The return stands only while both marks name the target: once they went (the target
      // declared dead, say) this node serves the slot alone, and a key it lacks may have been
      // deleted here since; storing the target's old copy would bring it back.
      if (!id.from().equals(v.migrating().get(slot.id())) || !id.from().equals(v.importing().get(slot.id()))) {
        throw new IllegalStateException("the return of slot " + slot.id() + " from " + id.from() + " ended here"
            + " (marks: migrating to " + v.migrating().get(slot.id()) + ", importing from "
            + v.importing().get(slot.id()) + "; expected: both naming it)");
      }
      long now = clock.getAsLong();
      for (int i = 1; i < batch.size(); i += 3) {
        Key key = new Key(batch.get(i));
        long ttl = parseId(batch.get(i + 1));
        Entry e = Dump.restore(batch.get(i + 2));
        if (e == null) {
          throw new IOException("a returned key's payload is malformed (expected: DUMP's format)");
        }
        // A held key (its batch to the target timed out) is this node's as it is here, there or
        // gone: the target's copy of it can only be that batch, applied late.
        if (slot.get(key, now) == null && !(slot.isHeld(key) && v.standsFor(id.from(), slot.heldFor()))) {
          e.expireAt = ttl == 0 ? 0 : now + ttl;
          slot.put(key, e);
          n++;
        }
      }
      slot.returned(id.from(), id.batch()); // logged after the keys, under the same lock
    }
    return n;
  }

  private static long parseId(byte[] b) throws IOException {
    Long n = io.atoll.kv.internal.resp.Numbers.parseLong(b);
    if (n == null || n < 0) {
      throw new IOException("'" + new String(b, StandardCharsets.UTF_8) + "' in a return batch (expected: an"
          + " integer >= 0)");
    }
    return n;
  }

  private static List<byte[]> bytes(String... args) {
    List<byte[]> a = new ArrayList<>(args.length);
    for (String s : args) {
      a.add(s.getBytes(StandardCharsets.UTF_8));
    }
    return a;
  }

  /** Keys moved away by managed hand-offs since start (CLUSTER INFO's atoll_keys_handed_off). */
  public long keysHandedOff() {
    return handedOff.sum();
  }

  private RespClient connect(Target t) throws IOException {
    RespClient client = new RespClient(t.host(), t.port(), t.timeoutMillis());
    if (!t.auth().isEmpty()) {
      client.send(t.auth());
      client.flush();
      String err = client.read();
      if (err != null) {
        client.close();
        throw new RestoreBatch.TargetError("ERR Target instance replied with error: " + err);
      }
    }
    return client;
  }

  private static void call(RespClient client, String... args) throws IOException {
    List<byte[]> a = new ArrayList<>();
    for (String s : args) {
      a.add(s.getBytes(StandardCharsets.UTF_8));
    }
    client.send(a);
    client.flush();
    String err = client.read();
    if (err != null) {
      throw new RestoreBatch.TargetError("ERR Target instance replied with error: " + err);
    }
  }

  /** Moves the keys of one slot under its lock (MIGRATE); how many existed. */
  private int moveBatch(RespClient client, Target t, Slot slot, List<byte[]> keys) throws IOException {
    return RestoreBatch.move(client, slot, keys, clock, t.copy(), t.replace(), null);
  }

  private static String ioError(Target t, IOException e) {
    return "IOERR error or timeout " + (e instanceof java.net.SocketTimeoutException ? "reading" : "connecting")
        + " to target instance " + t.host() + ":" + t.port();
  }

}

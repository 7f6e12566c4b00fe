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
    this.store = store;
    this.cluster = cluster;
    this.clock = clock;
  }

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
    } catch (TargetError e) {
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
    } catch (TargetError | ClusterState.Refused e) {
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
   * failure, it resumes.
   *
   * @param moved counts the keys moved, as they go
   * @throws IOException if the connection failed; keys moved so far are at the target, the rest
   *     here, and the marks route clients to both
   * @throws IllegalStateException if the target refused, with its error
   */
  public void handOff(RespClient client, Target t, int[] slots, PodId target, java.util.function.LongConsumer moved)
      throws IOException {
    ClusterView v = cluster.view();
    List<String> args = new ArrayList<>(List.of("CLUSTER", "ATOLL-IMPORTING", v.me().address().host(),
        Integer.toString(v.me().address().port()), Long.toHexString(v.me().incarnation())));
    for (int slot : slots) {
      args.add(Integer.toString(slot));
    }
    try {
      call(client, args.toArray(new String[0]));
    } catch (TargetError e) {
      throw new IllegalStateException(e.getMessage());
    }
    cluster.markMigrating(slots, target);
    for (int slot : slots) {
      Slot s = store.slot(slot);
      while (true) {
        List<byte[]> keys;
        synchronized (s) {
          keys = s.keys(clock.getAsLong(), BATCH);
        }
        if (keys.isEmpty()) {
          break;
        }
        try {
          int n = moveBatch(client, t, s, keys);
          handedOff.add(n);
          moved.accept(n);
        } catch (TargetError e) {
          throw new IllegalStateException(e.getMessage());
        }
      }
    }
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
        throw new TargetError("ERR Target instance replied with error: " + err);
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
      throw new TargetError("ERR Target instance replied with error: " + err);
    }
  }

  /** Moves the keys of one slot under its lock; how many existed. */
  private int moveBatch(RespClient client, Target t, Slot slot, List<byte[]> keys) throws IOException {
    synchronized (slot) {
      long now = clock.getAsLong();
      List<Key> present = new ArrayList<>();
      for (byte[] k : keys) {
        Key key = new Key(k);
        Entry e = slot.get(key, now);
        if (e == null) {
          continue;
        }
        present.add(key);
        List<byte[]> cmd = new ArrayList<>(6);
        cmd.add("RESTORE-ASKING".getBytes(StandardCharsets.US_ASCII));
        cmd.add(k);
        cmd.add(Long.toString(e.expireAt == 0 ? 0 : Math.max(1, e.expireAt - now)).getBytes(StandardCharsets.US_ASCII));
        cmd.add(Dump.dump(e));
        if (t.replace()) {
          cmd.add("REPLACE".getBytes(StandardCharsets.US_ASCII));
        }
        client.send(cmd);
      }
      if (present.isEmpty()) {
        return 0;
      }
      client.flush();
      String firstError = null;
      for (Key key : present) {
        String err = client.read();
        if (err == null) {
          if (!t.copy()) {
            slot.remove(key);
          }
        } else if (firstError == null) {
          firstError = err;
        }
      }
      if (firstError != null) {
        throw new TargetError("ERR Target instance replied with error: " + firstError);
      }
      return present.size();
    }
  }

  private static String ioError(Target t, IOException e) {
    return "IOERR error or timeout " + (e instanceof java.net.SocketTimeoutException ? "reading" : "connecting")
        + " to target instance " + t.host() + ":" + t.port();
  }

  private static final class TargetError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TargetError(String message) {
      super(message, null, false, false);
    }
  }
}

package io.atoll.kv.internal.managed;

import io.atoll.core.PodId;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.cluster.ClusterView;
import io.atoll.kv.internal.cluster.Migrator;
import io.atoll.kv.internal.cluster.NodeKey;
import io.atoll.kv.internal.cluster.Nodes;
import io.atoll.kv.internal.cluster.RespClient;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the manager's hand-offs (Unassign with targets) into live migrations: each slot's keys
 * move to its target ({@link Migrator#handOff}), up to {@link #PARALLEL} slots at a time, and a
 * slot is reported released only once no key of it is left here. Slots not started when half the
 * manager's termination timeout has passed are kept (the manager plans them again in its next
 * round); a slot that failed part way keeps its marks, so each of its keys is found on exactly
 * one side (-ASK), and the next hand-off to the same target resumes it. A hand-off of such a slot
 * to another target first brings the keys that reached the first one back ({@link
 * Migrator#pullBack}, a return), then hands the slot on; while the first target cannot be reached
 * the slot is kept, until it answers or the manager's config drops it (declared dead: its keys
 * died with it, and the marks go).
 *
 * <p>A node with a TLS port hands off over the target's TLS port with its own certificate (mutual
 * TLS with the cluster's CA; the target must hold a pod certificate), and refuses to hand off to
 * a node without one rather than send the password and keys in clear.
 *
 * <p>One hand-off request at a time (the manager runs one round at a time).
 */
final class HandOffs {
  private static final Logger LOG = LoggerFactory.getLogger(HandOffs.class);
  /** How many slots move at once. */
  static final int PARALLEL = 8;
  private static final int TIMEOUT_MILLIS = 5000;

  private final SlotStore store;
  private final ClusterState cluster;
  private final Migrator migrator;
  private final ExecutorService workers;
  private final LongSupplier clock;
  private final LongSupplier nanoClock;
  /** AUTH and the nodes' password, or empty: what a hand-off connection sends first. */
  private final List<byte[]> auth;
  /** Mutual TLS to the targets' TLS ports with this node's certificate, or null: the plaintext ports. */
  private final SSLSocketFactory tls;
  private final ConfigWait configWait;
  /** Proves to each target that a hand-off connection is a node's (CLUSTER ATOLL-NODE). */
  private final NodeKey nodeKey;
  private final LongAdder keysMoved = new LongAdder();
  private final LongAdder slotsMoved = new LongAdder();
  private final LongAdder keysReturned = new LongAdder();
  /**
   * When each slot was last in a hand-off request, or first seen marked MIGRATING with none (a
   * node restarted with its marks): what {@link #returnStalled} measures a stall from. Read and
   * written under this object's monitor.
   */
  private final Map<Integer, Long> touched = new HashMap<>();
  /** Slots released to their target and still marked (the manager's next config ends the mark). */
  private final Map<Integer, Long> released = new HashMap<>();

  HandOffs(SlotStore store, ClusterState cluster, Migrator migrator, ExecutorService workers, LongSupplier clock,
      LongSupplier nanoClock, String password, SSLSocketFactory tls, NodeKey nodeKey, ConfigWait configWait) {
    this.nodeKey = nodeKey;
    this.configWait = configWait;
    this.tls = tls;
    this.auth = password == null ? List.of() : List.of("AUTH".getBytes(java.nio.charset.StandardCharsets.UTF_8),
        password.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    this.clock = clock;
    this.store = store;
    this.cluster = cluster;
    this.migrator = migrator;
    this.workers = workers;
    this.nanoClock = nanoClock;
  }

  /** Keys moved away by hand-offs since start. */
  long keysMoved() {
    return keysMoved.sum();
  }

  /** Keys brought back from the target of a hand-off that stopped part way, since start. */
  long keysReturned() {
    return keysReturned.sum();
  }

  /** Slots handed off since start. */
  long slotsMoved() {
    return slotsMoved.sum();
  }

  /** Slots handed off together: one IMPORTING request, one MIGRATING mark, then their keys. */
  static final int CHUNK = 128;

  /** Slots handed to {@code target}; first returned from {@code from} if not null (see {@link #run}). */
  private record Item(PodId from, PodId target, int[] slots) {}

  private record Route(PodId from, PodId target) {}

  /** Waits until this node's config has at least an epoch, within a time; whether it has. */
  @FunctionalInterface
  interface ConfigWait {
    boolean await(long epoch, long nanos);
  }

  /**
   * Hands off {@code shards} (manager shard ids, slot + 1) to {@code targets} (the manager's pod
   * ids, parallel; empty if the manager did not say) within about {@code budgetMillis}. {@code
   * planned} is the epoch of the manager's config the moves were planned on (the Unassign's new
   * epoch less one; 0 if unknown): a slot moves only under a config at least that new in which
   * it is this node's, so that the epoch the target is told ({@link Migrator#handOff}) is one of
   * this node's current ownership; the others are kept and the manager plans them again.
   *
   * @return the shards released: no key of them is left here
   */
  synchronized Set<Integer> run(List<Integer> shards, List<PodId> targets, long planned, long budgetMillis) {
    Set<Integer> released = ConcurrentHashMap.newKeySet();
    try {
      return runTouched(shards, targets, planned, budgetMillis, released);
    } finally {
      long end = nanoClock.getAsLong(); // a stall is measured from the end of the last request
      for (int shard : shards) {
        touched.put(shard - 1, end);
      }
      for (int shard : released) {
        this.released.put(shard - 1, end);
      }
    }
  }

  private Set<Integer> runTouched(List<Integer> shards, List<PodId> targets, long planned, long budgetMillis,
      Set<Integer> released) {
    ConcurrentLinkedQueue<Item> queue = new ConcurrentLinkedQueue<>();
    long startBy = nanoClock.getAsLong() + budgetMillis * 500_000L;
    if (!configWait.await(planned, budgetMillis * 250_000L)) {
      LOG.warn("kv: the manager's config at epoch {}, on which it planned these hand-offs, has not reached this node"
          + " (it has epoch {}); {} slots kept for the next round", planned, cluster.view().config().epoch(),
          shards.size());
      return released;
    }
    ClusterView v = cluster.view();
    Map<Route, List<Integer>> byTarget = new java.util.LinkedHashMap<>();
    for (int i = 0; i < shards.size(); i++) {
      int shard = shards.get(i);
      int slot = shard - 1;
      if (slot < 0 || slot >= v.config().size()) {
        continue;
      }
      PodId target = i < targets.size() ? ManagedConfigs.toKv(targets.get(i)) : null;
      PodId marked = v.migrating().get(slot);
      boolean elsewhere = target != null && !target.equals(v.me());
      if (elsewhere && !v.me().equals(v.config().owner(slot))) {
        LOG.warn("kv: the manager asked for slot {}, which is not this node's in its config at epoch {}; kept", slot,
            v.config().epoch());
        continue;
      }
      if (marked != null && !marked.equals(target) && elsewhere) {
        // A hand-off to another node stopped part way: its keys come back first (a return), then
        // the slot goes where the manager says. The marks of a node no longer active are gone
        // (ClusterState.adopt), so the first target is a live member here.
        byTarget.computeIfAbsent(new Route(marked, target), k -> new ArrayList<>()).add(slot);
        continue;
      }
      if (!elsewhere) {
        if (isEmpty(slot) && marked == null) {
          released.add(shard);
        } else {
          LOG.warn("kv: the manager asked for slot {} without saying where it goes; it has keys, kept", slot);
        }
        continue;
      }
      byTarget.computeIfAbsent(new Route(null, target), k -> new ArrayList<>()).add(slot);
    }
    byTarget.forEach((route, slots) -> {
      for (int from = 0; from < slots.size(); from += CHUNK) {
        queue.add(new Item(route.from(), route.target(), slots.subList(from, Math.min(slots.size(), from + CHUNK))
            .stream().mapToInt(Integer::intValue).toArray()));
      }
    });
    int n = Math.min(PARALLEL, queue.size());
    CountDownLatch done = new CountDownLatch(n);
    for (int w = 0; w < n; w++) {
      workers.execute(() -> {
        try {
          work(queue, startBy, released);
        } finally {
          done.countDown();
        }
      });
    }
    try {
      done.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return released;
  }

  /**
   * Brings back the keys of every slot of this node that a hand-off left part way (marked
   * MIGRATING, some keys on the target) and that no hand-off request has touched for {@code
   * idleNanos}: a return ({@link Migrator#pullBack}), as before a hand-off to another node. The
   * manager plans moves by count, not by slot, so once the nodes are balanced it may never send
   * such a slot again, and its keys would stay split, those of a batch that timed out unserved
   * (TRYAGAIN), for good. The manager is not asked: the slot stays this node's, whole again. A
   * target that cannot be reached keeps its slots marked, tried again at the next call.
   *
   * @return how many slots it tried to bring back
   */
  synchronized int returnStalled(long idleNanos) {
    ClusterView v = cluster.view();
    long now = nanoClock.getAsLong();
    touched.keySet().removeIf(slot -> !v.migrating().containsKey(slot));
    released.keySet().removeIf(slot -> !v.migrating().containsKey(slot));
    if (!cluster.serving()) {
      return 0; // no lease (or declared dead): the slots may be another node's by now
    }
    Map<PodId, List<Integer>> byPeer = new java.util.LinkedHashMap<>();
    for (Map.Entry<Integer, PodId> e : v.migrating().entrySet()) {
      int slot = e.getKey();
      Long since = touched.putIfAbsent(slot, now);
      // A slot released to its target keeps its mark until the manager's next config: never
      // taken back (the manager gives it to the target, which would then hold nothing). One not
      // released is this node's still, even if every key of it is on the target (a target that
      // leaves would take them with it).
      if (since != null && now - since - idleNanos >= 0 && v.me().equals(v.config().owner(slot))
          && !released.containsKey(slot)) {
        byPeer.computeIfAbsent(e.getValue(), k -> new ArrayList<>()).add(slot);
      }
    }
    int ended = 0;
    Map<PodId, RespClient> clients = new HashMap<>();
    try {
      for (Map.Entry<PodId, List<Integer>> e : byPeer.entrySet()) {
        List<Integer> slots = e.getValue();
        for (int from = 0; from < slots.size(); from += CHUNK) {
          int[] chunk = slots.subList(from, Math.min(slots.size(), from + CHUNK)).stream().mapToInt(Integer::intValue)
              .toArray();
          try {
            ended += migrator.pullBack(client(clients, e.getKey()), chunk, e.getKey(), keysReturned::add).length;
          } catch (IOException | RuntimeException ex) {
            LOG.warn("kv: bringing back the keys of {} slots from {} (a hand-off to it stopped part way, and no request"
                + " resumed it) failed ({}); tried again later", chunk.length, e.getKey(), ex.toString());
            closeQuietly(clients.remove(e.getKey()));
            break;
          }
        }
      }
    } finally {
      clients.values().forEach(HandOffs::closeQuietly);
    }
    if (ended > 0) {
      LOG.info("kv: brought back the keys of {} slots whose hand-off stopped part way and was not resumed", ended);
    }
    int tried = 0;
    for (List<Integer> slots : byPeer.values()) {
      tried += slots.size();
    }
    return tried;
  }

  private void work(ConcurrentLinkedQueue<Item> queue, long startBy, Set<Integer> released) {
    Map<PodId, RespClient> clients = new HashMap<>();
    List<PodId> broken = new ArrayList<>();
    try {
      Item item;
      while (nanoClock.getAsLong() - startBy < 0 && (item = queue.poll()) != null) {
        if (broken.contains(item.target()) || item.from() != null && broken.contains(item.from())) {
          continue;
        }
        int[] slots = item.slots();
        if (item.from() != null) {
          try {
            slots = migrator.pullBack(client(clients, item.from()), slots, item.from(), keysReturned::add);
          } catch (IOException | RuntimeException e) {
            LOG.warn("kv: bringing back the keys of {} slots from {} (a hand-off to it stopped part way) failed ({});"
                + " they are kept, their keys findable on both sides, and the next hand-off resumes it",
                slots.length, item.from(), e.toString());
            broken.add(item.from());
            closeQuietly(clients.remove(item.from()));
            continue;
          }
        }
        try {
          Migrator.Target t = new Migrator.Target(item.target().address().host(), item.target().address().port(),
              List.of(), TIMEOUT_MILLIS, false, true);
          migrator.handOff(client(clients, item.target()), t, slots, item.target(), keysMoved::add);
          for (int slot : slots) {
            if (isEmpty(slot)) {
              released.add(slot + 1);
              slotsMoved.increment();
            }
          }
        } catch (IOException | RuntimeException e) {
          LOG.warn("kv: moving {} slots to {} failed part way ({}); their keys stay findable on both sides and the"
              + " next hand-off resumes it", slots.length, item.target(), e.toString());
          broken.add(item.target());
          closeQuietly(clients.remove(item.target()));
        }
      }
    } finally {
      clients.values().forEach(HandOffs::closeQuietly);
    }
  }

  /** This worker's connection to {@code node}, opened (and authenticated) on first use. */
  private RespClient client(Map<PodId, RespClient> clients, PodId node) throws IOException {
    RespClient client = clients.get(node);
    if (client == null) {
      client = connect(node);
      clients.put(node, client);
      if (!auth.isEmpty()) {
        client.send(auth);
        client.flush();
        String err = client.read();
        if (err != null) {
          throw new IOException("AUTH refused by " + node + ": " + err + " (expected: the same password on every node)");
        }
      }
      if (!nodeKey.known()) {
        throw new IOException("no node key to prove this node to " + node + " (expected: one from the shard"
            + " manager's Register answer; a manager that predates it cannot drive hand-offs)");
      }
      // Challenge and response: the target's nonce makes a proof seen on the wire useless later.
      client.send(List.of(ascii("CLUSTER"), ascii("ATOLL-NODE")));
      client.flush();
      String nonce;
      try {
        nonce = new String(client.readBulk(4 * NodeKey.NONCE_BYTES), java.nio.charset.StandardCharsets.US_ASCII);
      } catch (IllegalStateException e) {
        throw new IOException("CLUSTER ATOLL-NODE refused by " + node + ": " + e.getMessage()
            + " (expected: every node registered with a manager of this cluster, of this version)");
      }
      client.send(List.of(ascii("CLUSTER"), ascii("ATOLL-NODE"), ascii(nodeKey.proofFor(Nodes.nodeId(node), nonce))));
      client.flush();
      String err = client.read();
      if (err != null) {
        throw new IOException("CLUSTER ATOLL-NODE refused by " + node + ": " + err
            + " (expected: every node registered with a manager of this cluster)");
      }
    }
    return client;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  /**
   * A connection to {@code target}'s client port: with TLS, its TLS port (as the manager's config
   * names it), never its plaintext one, so the password and the keys do not cross the network in
   * clear.
   */
  private RespClient connect(PodId target) throws IOException {
    String host = target.address().host();
    if (tls == null) {
      return new RespClient(host, target.address().port(), TIMEOUT_MILLIS);
    }
    int port = cluster.view().config().pod(target).map(e -> Nodes.tlsPort(e.pod())).orElse(0);
    if (port == 0) {
      throw new IOException("node " + target + " has no TLS port in the manager's config; not sending the password"
          + " and keys to its plaintext port (expected: a TLS port on every node when one has it)");
    }
    return new RespClient(host, port, TIMEOUT_MILLIS, tls);
  }

  private boolean isEmpty(int slot) {
    Slot s = store.slot(slot);
    synchronized (s) {
      // Keys held for the marked target (their batch timed out; Migrator) may be on neither side
      // until they are sent again: the slot is not released with them.
      PodId held = s.heldFor();
      io.atoll.kv.internal.cluster.ClusterView v = cluster.view();
      PodId marked = v.migrating().get(slot);
      return s.keys(clock.getAsLong(), 1).isEmpty() && (marked == null || !v.standsFor(marked, held));
    }
  }

  private static void closeQuietly(RespClient c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        // closing
      }
    }
  }
}

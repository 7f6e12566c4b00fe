package io.atoll.kv.internal.managed;

import io.atoll.core.PodId;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.cluster.ClusterView;
import io.atoll.kv.internal.cluster.Migrator;
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
 * one side (-ASK), and the next hand-off to the same target resumes it.
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
  private final LongAdder keysMoved = new LongAdder();
  private final LongAdder slotsMoved = new LongAdder();

  HandOffs(SlotStore store, ClusterState cluster, Migrator migrator, ExecutorService workers, LongSupplier clock,
      LongSupplier nanoClock, String password, SSLSocketFactory tls) {
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

  /** Slots handed off since start. */
  long slotsMoved() {
    return slotsMoved.sum();
  }

  /** Slots handed off together: one IMPORTING request, one MIGRATING mark, then their keys. */
  static final int CHUNK = 128;

  private record Item(PodId target, int[] slots) {}

  /**
   * Hands off {@code shards} (manager shard ids, slot + 1) to {@code targets} (the manager's pod
   * ids, parallel; empty if the manager did not say) within about {@code budgetMillis}.
   *
   * @return the shards released: no key of them is left here
   */
  synchronized Set<Integer> run(List<Integer> shards, List<PodId> targets, long budgetMillis) {
    Set<Integer> released = ConcurrentHashMap.newKeySet();
    ConcurrentLinkedQueue<Item> queue = new ConcurrentLinkedQueue<>();
    ClusterView v = cluster.view();
    Map<PodId, List<Integer>> byTarget = new java.util.LinkedHashMap<>();
    for (int i = 0; i < shards.size(); i++) {
      int shard = shards.get(i);
      int slot = shard - 1;
      if (slot < 0 || slot >= v.config().size()) {
        continue;
      }
      PodId target = i < targets.size() ? ManagedConfigs.toKv(targets.get(i)) : null;
      PodId marked = v.migrating().get(slot);
      if (marked != null && !marked.equals(target)) {
        LOG.warn("kv: slot {} is still moving to {}; not handing it to {} (its keys are on both nodes until that"
            + " move ends)", slot, marked, target);
        continue;
      }
      if (target == null || target.equals(v.me())) {
        if (isEmpty(slot) && marked == null) {
          released.add(shard);
        } else {
          LOG.warn("kv: the manager asked for slot {} without saying where it goes; it has keys, kept", slot);
        }
        continue;
      }
      byTarget.computeIfAbsent(target, k -> new ArrayList<>()).add(slot);
    }
    byTarget.forEach((target, slots) -> {
      for (int from = 0; from < slots.size(); from += CHUNK) {
        queue.add(new Item(target, slots.subList(from, Math.min(slots.size(), from + CHUNK)).stream()
            .mapToInt(Integer::intValue).toArray()));
      }
    });
    int n = Math.min(PARALLEL, queue.size());
    long startBy = nanoClock.getAsLong() + budgetMillis * 500_000L;
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

  private void work(ConcurrentLinkedQueue<Item> queue, long startBy, Set<Integer> released) {
    Map<PodId, RespClient> clients = new HashMap<>();
    List<PodId> broken = new ArrayList<>();
    try {
      Item item;
      while (nanoClock.getAsLong() - startBy < 0 && (item = queue.poll()) != null) {
        if (broken.contains(item.target())) {
          continue;
        }
        try {
          RespClient client = clients.get(item.target());
          if (client == null) {
            client = connect(item.target());
            clients.put(item.target(), client);
            if (!auth.isEmpty()) {
              client.send(auth);
              client.flush();
              String err = client.read();
              if (err != null) {
                throw new IOException("AUTH refused by " + item.target() + ": " + err
                    + " (expected: the same password on every node)");
              }
            }
          }
          Migrator.Target t = new Migrator.Target(item.target().address().host(), item.target().address().port(),
              List.of(), TIMEOUT_MILLIS, false, true);
          migrator.handOff(client, t, item.slots(), item.target(), keysMoved::add);
          for (int slot : item.slots()) {
            if (isEmpty(slot)) {
              released.add(slot + 1);
              slotsMoved.increment();
            }
          }
        } catch (IOException | RuntimeException e) {
          LOG.warn("kv: moving {} slots to {} failed part way ({}); their keys stay findable on both sides and the"
              + " next hand-off resumes it", item.slots().length, item.target(), e.toString());
          broken.add(item.target());
          RespClient c = clients.remove(item.target());
          closeQuietly(c);
        }
      }
    } finally {
      clients.values().forEach(HandOffs::closeQuietly);
    }
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
      return s.keys(clock.getAsLong(), 1).isEmpty();
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

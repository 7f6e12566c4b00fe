package io.atoll.runtime.internal.send;

import io.atoll.core.ClusterId;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;
import io.atoll.runtime.internal.cluster.PeerChannels;
import io.atoll.runtime.internal.util.PodContext;
import io.atoll.runtime.internal.util.Scheduler;
import io.grpc.ManagedChannel;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * This pod's clients of other pods, one per pod id, made on first use; their channels also carry
 * gossip and pings. A pod declared gone is retired: nothing more is sent to it, and its client
 * closes once its answers are in. Thread-safe.
 */
public final class PeerClients implements PeerChannels {

  private static final long RETIRE_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  /**
   * How long a retired pod's answers may still come in. A pod is GONE in the config only once it
   * can handle nothing more: a pod that left stopped its entities before it unregistered (so its
   * answers were already on their way), and a pod declared dead had its lease run out (a frozen or
   * cut-off pod will answer nothing in time). Waiting longer, up to the send timeout, held every
   * later message to its shards behind the unanswered ones: a pod frozen for 6 s kept its shards
   * from their new owners for 6 s, though they took over after 4.
   */
  static final long RETIRE_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

  private final PodContext ctx;
  private final Ticker ticker;
  private final Scheduler scheduler;
  private final PeerClient.Callback callback;
  private final Supplier<ClusterId> cluster;
  private final Map<PodId, PeerClient> clients = new ConcurrentHashMap<>();
  private volatile boolean closed;

  PeerClients(PodContext ctx, Supplier<ClusterId> cluster, PeerClient.Callback callback) {
    this.ctx = ctx;
    this.cluster = cluster;
    this.ticker = ctx.ticker();
    this.scheduler = ctx.scheduler();
    this.callback = callback;
  }

  /** The client of {@code peer}, made on first use. */
  PeerClient client(PodId peer) {
    PeerClient c = clients.get(peer);
    if (c == null) {
      c = clients.computeIfAbsent(peer, p -> new PeerClient(ctx, p, cluster, callback));
    }
    return c;
  }

  @Override
  public ManagedChannel channel(PodId peer) {
    return client(peer).channel();
  }

  /**
   * {@code peer} left the config (it left, or was declared dead): what never left goes back to its
   * route now; the client closes once the answers to what did are in, or after {@link
   * #RETIRE_GRACE_NANOS}, failing what is still unanswered as outcome unknown.
   */
  public void retire(PodId peer) {
    PeerClient c = clients.remove(peer);
    if (c != null) {
      c.stopSending();
      closeWhenAnswered(c, ticker.nanoTime() + Math.min(RETIRE_GRACE_NANOS, ctx.settings().sendTimeout().toNanos()));
    }
  }

  private void closeWhenAnswered(PeerClient c, long deadline) {
    if (c.inflight() == 0 || ticker.nanoTime() - deadline > 0 || closed) {
      if (c.inflight() > 0) {
        c.abandonUnanswered("is no longer a member of the cluster (it left or was declared dead)");
      }
      c.close();
      return;
    }
    scheduler.schedule(() -> closeWhenAnswered(c, deadline), RETIRE_CHECK_NANOS);
  }

  /**
   * Retires the client of every pod not in {@code live} (the active peers of the current view),
   * so the table holds at most one client per pod of the config, whatever left it unseen (a pod
   * whose GONE entry this pod never saw before the manager pruned it).
   */
  public void retainOnly(Set<PodId> live) {
    for (PodId p : clients.keySet()) {
      if (!live.contains(p)) {
        retire(p);
      }
    }
  }

  /** How many clients are open. */
  int size() {
    return clients.size();
  }

  /**
   * Sweeps the client of each pod still a {@code member} for messages whose shard moved off it
   * (see {@link PeerClient#abandonMoved}); {@code owns} says whether a pod owns a shard now.
   */
  public void abandonMoved(java.util.function.Predicate<PodId> member,
      java.util.function.BiPredicate<PodId, Integer> owns) {
    long now = ticker.nanoTime();
    clients.forEach((peer, c) -> {
      if ((c.inflight() > 0 || c.hasQueued()) && member.test(peer)) {
        c.abandonMoved(shard -> owns.test(peer, shard), now, MOVED_GRACE_NANOS);
      }
    });
  }

  /**
   * How long a message may stay unanswered at a pod that released its shard before it is given
   * up as outcome unknown. A pod answers what it handled before it answers the Unassign, so its
   * answers are normally in before the new config; this leaves room for a busy one.
   */
  static final long MOVED_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /** Closes every client; messages still queued go back to their routes. */
  public void closeAll() {
    closed = true;
    clients.values().forEach(PeerClient::close);
    clients.clear();
  }
}

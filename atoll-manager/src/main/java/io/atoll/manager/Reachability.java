package io.atoll.manager;

import io.atoll.core.PodId;
import io.atoll.manager.pods.Pods;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds pods that renew their lease but that the manager cannot reach on their port: traffic into
 * them is cut while their own connections work (a one-way partition, a firewall, a relay that
 * drops). Nothing else moves their shards: they are alive, so their leases never run out, and
 * every message to their shards waits for as long as the cut lasts. A pod cut off is drained (its
 * shards move to pods the manager reaches, by hand-offs whose Unassign travels in the answers to
 * its renewals, see {@link Pods#unassignByRenewal}); once it answers again, the next periodic
 * rebalance gives it shards again (not at once: a link that flaps would move shards to and fro).
 *
 * <p>Safety is not at stake here: a shard still moves only once its owner has said it released it.
 * What this trades is churn: a pod whose port is cut for longer than the threshold loses its
 * shards, and gets others back later.
 *
 * <p>Loop-confined; the pings run off it and their answers come back to it.
 */
@GuardedBy("loop")
final class Reachability {

  private static final Logger log = LoggerFactory.getLogger(Reachability.class);

  private final Pods pods;
  private final io.atoll.core.Ticker ticker;
  private final Loop loop;
  private final Duration timeout;
  private final int failuresToCut;
  private final Consumer<String> rebalance;
  private final Map<PodId, Integer> failures = new HashMap<>();
  /** When the first ping of each pod's current run of failures was sent. */
  private final Map<PodId, Long> failingSince = new HashMap<>();
  /** When each pod watched last renewed, as of the last probe. */
  private Map<PodId, Long> renewed = Map.of();
  private final Set<PodId> cutOff = new HashSet<>();
  private final Set<PodId> inFlight = new HashSet<>();
  /** Pods found unreachable while too many others were (logged once each, until reachable again). */
  private final Set<PodId> overLimitLogged = new HashSet<>();

  /**
   * @param timeout how long a ping may take
   * @param failuresToCut pings in a row unanswered before a renewing pod counts as cut off
   * @param rebalance asks for a rebalance round, with its reason
   */
  Reachability(Pods pods, Loop loop, io.atoll.core.Ticker ticker, Duration timeout, int failuresToCut,
      Consumer<String> rebalance) {
    this.ticker = ticker;
    this.pods = pods;
    this.loop = loop;
    this.timeout = timeout;
    this.failuresToCut = failuresToCut;
    this.rebalance = rebalance;
  }

  /**
   * Pings each of {@code renewing}: the active pods that renewed lately and take unassigns in
   * their renewals' answers, with when each last renewed. A pod no longer among them is forgotten
   * (it stopped renewing: its lease decides now).
   */
  void probe(Map<PodId, Long> renewing) {
    loop.checkOnLoop();
    renewed = renewing;
    failures.keySet().retainAll(renewing.keySet());
    failingSince.keySet().retainAll(renewing.keySet());
    overLimitLogged.retainAll(renewing.keySet());
    for (java.util.Iterator<PodId> it = cutOff.iterator(); it.hasNext(); ) {
      PodId p = it.next();
      if (!renewing.containsKey(p)) {
        // It stopped renewing (died, or was declared gone): a hand-off waiting for its renewal
        // would hold the round up until its deadline; its lease decides now.
        it.remove();
        pods.withdrawRelayed(p);
      }
    }
    for (PodId p : renewing.keySet()) {
      if (inFlight.add(p)) {
        long sent = ticker.nanoTime();
        pods.ping(p, timeout).exceptionally(e -> false).thenAcceptAsync(ok -> answered(p, ok, sent), loop);
      }
    }
  }

  private void answered(PodId pod, boolean ok, long sent) {
    inFlight.remove(pod);
    if (ok) {
      failures.remove(pod);
      failingSince.remove(pod);
      overLimitLogged.remove(pod);
      if (cutOff.remove(pod)) {
        // Not at once: a link that flaps would move shards to and fro; the periodic one balances.
        log.info("shard manager: pod {} answers on its port again; the next periodic rebalance gives it shards", pod);
      }
      return;
    }
    int n = failures.merge(pod, 1, Integer::sum);
    long since = failingSince.computeIfAbsent(pod, p -> sent);
    Long last = renewed.get(pod);
    // Alive: it renewed after its pings began to fail. A pod that died meanwhile has not, and is
    // left to its lease (draining it would only hold a round up waiting for its renewal).
    if (n < failuresToCut || last == null || last - since <= 0 || cutOff.contains(pod)) {
      return;
    }
    // Never a majority of the pods watched: when the manager reaches so few, the fault is more
    // likely its own (its network, its host) than theirs, and moving everything onto the rest
    // would only pile their load on a few.
    if (2 * (cutOff.size() + 1) > Math.max(2, renewed.size())) {
      if (!overLimitLogged.contains(pod)) {
        overLimitLogged.add(pod);
        log.warn("shard manager: pod {} renews but does not answer on its port, as {} others do: more likely this"
            + " manager's own network; their shards stay", pod, cutOff.size());
      }
      return;
    }
    overLimitLogged.remove(pod);
    if (cutOff.add(pod)) {
      log.warn("shard manager: pod {} renews its lease but has not answered on its port for {} pings of {} ms;"
          + " its shards move to pods that can be reached (hand-offs through its renewals)", pod, n,
          timeout.toMillis());
      rebalance.accept("pod " + pod + " cannot be reached while it renews");
    }
  }

  /** The pods cut off now. */
  Set<PodId> cutOff() {
    loop.checkOnLoop();
    return Set.copyOf(cutOff);
  }
}

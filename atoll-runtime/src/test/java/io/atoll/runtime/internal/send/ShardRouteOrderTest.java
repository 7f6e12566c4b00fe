package io.atoll.runtime.internal.send;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Random histories of one shard's route: sends, owners appearing, moving and vanishing, claims
 * renewed, receivers that handle or refuse (and, like a real stream, keep refusing until a message
 * marked resume), and time passing. Whatever happens, the messages handled are handled in send
 * order, and once an owner stays, every message is handled exactly once.
 */
class ShardRouteOrderTest {

  private static final PodId[] PODS = {
      new PodId(new PodAddress("a", 1), 1), new PodId(new PodAddress("b", 2), 2), new PodId(new PodAddress("c", 3), 3)};

  /** The router side: owners and per-pod streams in arrival order. */
  static final class Cluster implements ShardRoute.Callback {
    PodId owner;
    long epoch = 1;
    final Map<PodId, ArrayDeque<Pending>> streams = new HashMap<>();
    final Map<PodId, Boolean> refusing = new HashMap<>();

    @Override
    public PodId ownerOf(int shard) {
      return owner;
    }

    @Override
    public long claimEpoch(int shard) {
      return epoch;
    }

    @Override
    public boolean dispatch(Pending p, PodId to) {
      streams.computeIfAbsent(to, k -> new ArrayDeque<>()).add(p);
      return true;
    }

    @Override
    public void holding(ShardRoute route, boolean on) {}
  }

  @Property(tries = 300)
  void handledInSendOrderAndNothingLost(@ForAll long seed) {
    Random random = new Random(seed);
    Fakes.VirtualTime time = new Fakes.VirtualTime();
    Cluster cluster = new Cluster();
    Fakes.Owner owner = new Fakes.Owner();
    ShardRoute route = new ShardRoute(1, 1_000, time, time, cluster);
    owner.route = route;
    List<Integer> handled = new ArrayList<>();
    int sent = 0;
    for (int step = 0; step < 400; step++) {
      int action = random.nextInt(100);
      if (action < 35) {
        route.send(Fakes.pending(owner, time.nanoTime(), 1_000_000, Integer.toString(sent++)));
      } else if (action < 75) {
        receive(cluster, PODS[random.nextInt(PODS.length)], random.nextInt(4) == 0, handled);
      } else if (action < 83) {
        int o = random.nextInt(PODS.length + 1);
        cluster.owner = o == PODS.length ? null : PODS[o];
        if (random.nextBoolean()) {
          cluster.epoch++;
        }
        route.kick();
      } else {
        time.advance(TimeUnit.MILLISECONDS.toNanos(1 + random.nextInt(5)));
      }
      assertThat(handled).as("seed %s: handled in send order", seed).isSorted();
    }
    // Quiet: one owner that handles everything.
    cluster.owner = PODS[0];
    cluster.epoch++;
    route.kick();
    for (int round = 0; round < 10_000 && handled.size() < sent; round++) {
      for (PodId pod : PODS) {
        receive(cluster, pod, false, handled);
      }
      time.advance(TimeUnit.MILLISECONDS.toNanos(1));
    }
    assertThat(handled).as("seed %s: every message handled once, in order", seed)
        .hasSize(sent).isSorted().doesNotHaveDuplicates();
  }

  /** The pod takes the next message off its stream: handles it, or refuses it (and what follows). */
  private static void receive(Cluster cluster, PodId pod, boolean refuse, List<Integer> handled) {
    ArrayDeque<Pending> stream = cluster.streams.get(pod);
    Pending p = stream == null ? null : stream.poll();
    if (p == null) {
      return;
    }
    boolean wasRefusing = cluster.refusing.getOrDefault(pod, false);
    boolean owns = pod.equals(cluster.owner);
    if (p.resume) {
      wasRefusing = false;
    }
    if (refuse || wasRefusing || !owns) {
      cluster.refusing.put(pod, true);
      p.bounce();
    } else {
      cluster.refusing.put(pod, false);
      handled.add(Integer.parseInt((String) p.message));
      p.handled();
    }
  }
}

package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One pod incarnation in the simulation, modelling what the manager relies on in the real pod:
 * the lease it holds by its own clock, the configs it has seen, and per shard whether it serves
 * it, under which epoch, and below which epoch it must never serve it again (releases). The rules
 * of {@code onView} and {@code release} are those of the runtime's entity host.
 */
final class SimPod {

  final Pod pod;
  boolean alive = true;
  boolean partitioned;
  /** Nothing reaches the pod (the manager's calls, peers' gossip), while its own calls go through. */
  boolean cutOff;
  boolean stopping;
  boolean registered;
  long leaseUntil = Long.MIN_VALUE;
  /** The lease length the manager granted last (the runtime renews every third of it). */
  long ttlNanos = Simulation.TTL.toNanos();
  long termSeen;
  ClusterConfig view;
  // Grown with the view's layout: spaces appended at run time add positions at the end.
  private boolean[] active;
  private long[] epoch;
  private long[] releasedBelow;

  SimPod(Pod pod, int shards) {
    this.pod = pod;
    this.active = new boolean[shards];
    this.epoch = new long[shards];
    this.releasedBelow = new long[shards];
  }

  PodId id() {
    return pod.id();
  }

  /** Whether this pod could handle a message of the shard at {@code position} now. */
  boolean serving(int position, long now) {
    return alive && now < leaseUntil && position < active.length && active[position];
  }

  boolean reachable() {
    return alive && !partitioned;
  }

  /** Whether a call made to the pod (not by it) reaches it. */
  boolean reachableByOthers() {
    return reachable() && !cutOff;
  }

  /** Merges a config into the view and applies it. */
  void onView(ClusterConfig c) {
    if (!alive) {
      return;
    }
    view = view == null ? c : view.merge(c);
    grow(view.size());
    apply();
  }

  private void grow(int size) {
    if (size > active.length) {
      int was = active.length;
      active = Arrays.copyOf(active, size);
      epoch = Arrays.copyOf(epoch, size);
      releasedBelow = Arrays.copyOf(releasedBelow, size);
      if (stopping) {
        Arrays.fill(releasedBelow, was, size, Long.MAX_VALUE);
      }
    }
  }

  private void apply() {
    if (view == null) {
      return;
    }
    boolean selfActive = view.isActive(id());
    for (int pos = 0; pos < active.length; pos++) {
      boolean mine = selfActive && id().equals(view.owner(pos));
      long e = view.epoch(pos);
      if (mine) {
        if (!active[pos] && e >= releasedBelow[pos] && !stopping) {
          active[pos] = true;
          epoch[pos] = e;
        } else if (active[pos] && e > epoch[pos]) {
          epoch[pos] = e;
        }
      } else {
        active[pos] = false;
      }
    }
  }

  /** A hand-off: the shards it stops serving (all asked for, except any held under a claim at least as new). */
  List<Integer> release(List<Integer> shards, long newEpoch) {
    List<Integer> released = new ArrayList<>();
    grow(shards.stream().mapToInt(Integer::intValue).max().orElse(0));
    for (int s : shards) {
      int pos = s - 1;
      releasedBelow[pos] = Math.max(releasedBelow[pos], newEpoch);
      if (active[pos] && epoch[pos] >= newEpoch) {
        continue;
      }
      active[pos] = false;
      released.add(s);
    }
    apply(); // a claim that gave a shard back meanwhile takes effect now
    return released;
  }

  /** A graceful stop: serves nothing from now on. */
  void releaseAll() {
    stopping = true;
    Arrays.fill(active, false);
    Arrays.fill(releasedBelow, Long.MAX_VALUE);
  }

  /** What it serves, for failure reports. */
  String describe(long now) {
    StringBuilder b = new StringBuilder(id() + " v" + pod.version() + (alive ? "" : " DEAD")
        + (partitioned ? " PARTITIONED" : "") + (cutOff ? " CUT-OFF" : "") + (stopping ? " STOPPING" : "") + " lease "
        + (leaseUntil == Long.MIN_VALUE ? "none" : ((leaseUntil - now) / 1_000_000) + " ms") + " serves [");
    for (int pos = 0; pos < active.length; pos++) {
      if (active[pos]) {
        b.append(pos + 1).append('@').append(epoch[pos]).append(' ');
      }
    }
    return b.append(']').toString();
  }
}

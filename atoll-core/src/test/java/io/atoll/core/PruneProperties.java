package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.constraints.IntRange;

/**
 * Tombstones the manager pruned leave the pods' views: {@link ClusterConfig#withoutPrunedBy} on
 * any configs, and on histories of one manager with churn and pruning, gossiped in random order.
 * (Merge itself is unchanged; its laws are {@link ClusterConfigProperties}.)
 */
class PruneProperties {

  @Provide
  Arbitrary<ClusterConfig> configs() {
    return Configs.configs(12);
  }

  @Property
  void dropsOnlyOldEntriesTheAuthorityDoesNotListAndNoClaimNames(@ForAll("configs") ClusterConfig v,
      @ForAll("configs") ClusterConfig m) {
    ClusterConfig p = v.withoutPrunedBy(m);
    List<PodId> named = new ArrayList<>();
    for (int i = 0; i < v.size(); i++) {
      assertThat(p.claim(i)).as("claims are untouched").isEqualTo(v.claim(i));
      named.add(v.claim(i).owner());
      named.add(v.claim(i).peer());
    }
    for (PodEntry e : v.pods()) {
      boolean kept = p.pod(e.id()).isPresent();
      boolean mayGo = e.epoch() <= m.epoch() && m.pod(e.id()).isEmpty() && !named.contains(e.id());
      assertThat(kept).as("%s in %s pruned by %s", e, v, m).isEqualTo(!mayGo);
      if (kept) {
        assertThat(p.pod(e.id())).contains(e);
      }
    }
    assertThat(p.pods()).hasSizeLessThanOrEqualTo(v.pods().size());
  }

  @Property
  void pruningIsIdempotentAndAllocatesNothingWhenNothingGoes(@ForAll("configs") ClusterConfig v,
      @ForAll("configs") ClusterConfig m) {
    ClusterConfig p = v.withoutPrunedBy(m);
    assertThat(p.withoutPrunedBy(m)).isSameAs(p);
    assertThat(v.withoutPrunedBy(v)).isSameAs(v);
  }

  @Property
  void aMergedViewPrunedByTheAuthorityIsAFixedPointOfMergingItAgain(@ForAll("configs") ClusterConfig v,
      @ForAll("configs") ClusterConfig m) {
    if (!v.clusterId().equals(m.clusterId()) && !v.clusterId().isNone() && !m.clusterId().isNone()) {
      return; // two clusters never merge
    }
    ClusterConfig once = v.merge(m).withoutPrunedBy(m);
    assertThat(once.merge(m).withoutPrunedBy(m)).isEqualTo(once);
    assertThat(once.epoch()).as("a view's epoch never falls").isEqualTo(v.merge(m).epoch());
  }

  /**
   * One manager's history: pods join, die (their shards move, a tombstone stays) and tombstones
   * past {@code keep} are pruned, as the manager does. Pods see some of its configs and gossip in
   * a random order; once each has the latest, every view is exactly the manager's config (no
   * tombstone it pruned is left, none came back).
   */
  @Property(tries = 200)
  void afterTheManagersLatestConfigEveryViewIsExactlyIt(@ForAll long seed, @ForAll @IntRange(min = 0, max = 3) int keep) {
    Random rnd = new Random(seed);
    int size = 8;
    List<ClusterConfig> published = new ArrayList<>();
    ClusterConfig m = ClusterConfig.empty(size, Configs.CLUSTER);
    List<PodId> live = new ArrayList<>();
    int next = 1;
    for (int step = 0; step < 60; step++) {
      long e = m.epoch() + 1;
      ClusterConfig.Builder b = m.toBuilder();
      if (live.isEmpty() || (live.size() < 4 && rnd.nextBoolean())) {
        PodId id = new PodId(new PodAddress("127.0.0.1", 7000 + next), next++);
        b.pod(new PodEntry(new Pod(id, PodVersion.of("1")), PodStatus.ACTIVE, e));
        live.add(id);
        b.claim(rnd.nextInt(size), Claim.stable(id, e));
      } else {
        PodId dead = live.remove(rnd.nextInt(live.size()));
        b.pod(new PodEntry(m.pod(dead).orElseThrow().pod(), PodStatus.GONE, e));
        for (int pos = 0; pos < size; pos++) {
          if (dead.equals(m.owner(pos)) || dead.equals(m.claim(pos).peer())) {
            b.claim(pos, live.isEmpty() ? Claim.offline(e) : Claim.stable(live.get(rnd.nextInt(live.size())), e));
          }
        }
      }
      m = prune(b.build(), keep);
      published.add(m);
    }
    ClusterConfig latest = m;
    int pods = 3;
    List<ClusterConfig> views = new ArrayList<>();
    for (int i = 0; i < pods; i++) {
      views.add(ClusterConfig.empty(size));
    }
    for (int k = 0; k < 400; k++) {
      int i = rnd.nextInt(pods);
      ClusterConfig v = views.get(i);
      if (rnd.nextBoolean()) {
        ClusterConfig from = published.get(rnd.nextInt(published.size()));
        v = v.merge(from).withoutPrunedBy(from);
      } else {
        v = v.merge(views.get(rnd.nextInt(pods))); // gossip: a merge only
      }
      views.set(i, v);
    }
    for (int i = 0; i < pods; i++) {
      ClusterConfig v = views.get(i).merge(latest).withoutPrunedBy(latest);
      assertThat(v).as("view %d after the latest config (seed %d)", i, seed).isEqualTo(latest);
    }
  }

  /** The manager's pruning: the oldest tombstones past {@code keep} that no claim names. */
  private static ClusterConfig prune(ClusterConfig c, int keep) {
    List<PodEntry> gone = new ArrayList<>(c.pods().stream().filter(p -> p.status() == PodStatus.GONE).toList());
    gone.sort(java.util.Comparator.comparingLong(PodEntry::epoch));
    ClusterConfig.Builder b = c.toBuilder();
    int extra = gone.size() - keep;
    for (PodEntry e : gone) {
      if (extra <= 0) {
        break;
      }
      boolean named = false;
      for (int pos = 0; pos < c.size(); pos++) {
        named |= e.id().equals(c.owner(pos)) || e.id().equals(c.claim(pos).peer());
      }
      if (!named && e.epoch() < c.epoch()) {
        b.removePod(e.id());
        extra--;
      }
    }
    return b.build();
  }
}

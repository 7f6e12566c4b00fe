package io.atoll.runtime.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The view: merges configs, acts on them under its guard, and says what changed. */
class ViewTest {

  private static final PodId SELF = new PodId(new PodAddress("10.0.0.1", 7000), 1);
  private static final PodId PEER = new PodId(new PodAddress("10.0.0.2", 7000), 2);

  private final List<String> events = new ArrayList<>();
  private View view;

  private final View.Callback callback = new View.Callback() {
    @Override
    public void grow(io.atoll.core.Spaces longer) {
      assertThat(Thread.holdsLock(view.guard())).as("grown under the guard").isTrue();
      assertThat(view.config().spaces()).as("grown before the longer config is published").isNotEqualTo(longer);
      events.add("grow " + longer);
    }

    @Override
    public void apply(ClusterConfig config, PodId self, boolean selfActive) {
      assertThat(Thread.holdsLock(view.guard())).as("applied under the guard").isTrue();
      events.add("apply " + config.epoch() + (selfActive ? " active" : " inactive"));
    }

    @Override
    public void podGone(PodId pod) {
      assertThat(Thread.holdsLock(view.guard())).isTrue();
      events.add("gone " + pod.address().host());
    }

    @Override
    public void changed() {
      assertThat(Thread.holdsLock(view.guard())).as("kicks run outside the guard").isFalse();
      events.add("changed");
    }

    @Override
    public void selfDeclaredGone() {
      assertThat(Thread.holdsLock(view.guard())).isFalse();
      events.add("self gone");
    }
  };

  private static PodEntry entry(PodId id, PodStatus status, long epoch) {
    return new PodEntry(new Pod(id, PodVersion.of("1")), status, epoch);
  }

  private static ClusterConfig twoPods(long epoch, PodStatus self, PodStatus peer) {
    return ClusterConfig.empty(4).toBuilder()
        .pod(entry(SELF, self, epoch))
        .pod(entry(PEER, peer, epoch))
        .claim(0, Claim.stable(SELF, 1))
        .claim(1, Claim.stable(SELF, 1))
        .claim(2, Claim.stable(PEER, 1))
        .claim(3, Claim.stable(PEER, 1))
        .build();
  }

  private View started() {
    view = new View(ClusterConfig.empty(4), null, callback);
    view.identify(SELF);
    return view;
  }

  @Test
  void aNewerConfigIsMergedAppliedAndAnnounced() {
    View v = started();
    ClusterConfig incoming = twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE);
    v.onConfig(incoming);
    assertThat(v.config().epoch()).isEqualTo(incoming.epoch());
    assertThat(v.selfEntry()).as("this pod's entry, by identity").isSameAs(v.config().pod(SELF).orElseThrow());
    assertThat(v.peers()).containsExactly(PEER);
    assertThat(v.isActive(PEER)).isTrue();
    assertThat(events).containsExactly("apply " + incoming.epoch() + " active", "changed");
  }

  @Test
  void aConfigAlreadyKnownChangesNothing() {
    View v = started();
    v.onConfig(twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE));
    events.clear();
    v.onConfig(twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE));
    assertThat(events).isEmpty();
  }

  @Test
  void aConfigOfAnotherSizeIsIgnored() {
    View v = started();
    v.onConfig(ClusterConfig.empty(8).toBuilder().pod(entry(SELF, PodStatus.ACTIVE, 1)).build());
    assertThat(v.config().size()).isEqualTo(4);
    assertThat(events).isEmpty();
  }

  @Test
  void aConfigWithSpacesAppendedGrowsTheViewFirstAndAShorterOneMergesAsItsPrefix() {
    View v = started();
    v.onConfig(twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE));
    events.clear();
    io.atoll.core.Spaces grown = io.atoll.core.Spaces.parse("default=4,worker=2");
    ClusterConfig longer = twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE).extendTo(grown).toBuilder()
        .claim(4, Claim.stable(PEER, 2)).build();
    v.onConfig(longer);
    assertThat(v.spaces()).isEqualTo(grown);
    assertThat(v.numberOfShards()).isEqualTo(6);
    assertThat(v.config().owner(4)).isEqualTo(PEER);
    assertThat(events).containsExactly("grow default=4,worker=2", "apply " + v.config().epoch() + " active",
        "changed");
    events.clear();
    // A peer that has not heard of the new space yet: its news merge in, the layout stays.
    v.onConfig(twoPods(3, PodStatus.ACTIVE, PodStatus.ACTIVE));
    assertThat(v.spaces()).isEqualTo(grown);
    assertThat(v.config().owner(4)).isEqualTo(PEER);
    assertThat(events).doesNotContain("grow default=4,worker=2").contains("changed");
  }

  @Test
  void aConfigOfALayoutThatIsNoPrefixNorExtensionIsIgnored() {
    View v = started();
    v.onConfig(ClusterConfig.empty(io.atoll.core.Spaces.parse("worker=4")).toBuilder()
        .pod(entry(SELF, PodStatus.ACTIVE, 1)).build());
    assertThat(v.spaces()).isEqualTo(io.atoll.core.Spaces.single(4));
    assertThat(events).isEmpty();
  }

  @Test
  void aGonePeerIsRetiredAndAGoneSelfJoinsAgain() {
    View v = started();
    v.onConfig(twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE));
    events.clear();
    v.onConfig(twoPods(2, PodStatus.ACTIVE, PodStatus.GONE));
    assertThat(events).contains("gone 10.0.0.2").doesNotContain("self gone");
    assertThat(v.peers()).isEmpty();
    events.clear();
    v.onConfig(twoPods(3, PodStatus.GONE, PodStatus.GONE));
    assertThat(events.get(0)).endsWith("inactive");
    assertThat(events).endsWith("changed", "self gone");
  }

  @Test
  void aNewIncarnationForgetsItsEntry() {
    View v = started();
    v.onConfig(twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE));
    PodId next = new PodId(SELF.address(), 99);
    synchronized (v.guard()) {
      v.newIncarnationLocked(next);
    }
    assertThat(v.self()).isEqualTo(next);
    assertThat(v.selfEntry()).isNull();
    events.clear();
    v.reapply();
    assertThat(events).as("the old incarnation's claims are not this pod's").containsExactly(
        "apply " + v.config().epoch() + " inactive", "changed");
  }

  @Test
  void tombstonesTheManagerPrunedLeaveTheViewAndDoNotComeBackForGood() {
    View v = started();
    PodId late = new PodId(new PodAddress("10.0.0.3", 7000), 3);
    v.onManagerConfig(twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE));
    ClusterConfig peerGone = twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE).toBuilder()
        .pod(entry(PEER, PodStatus.GONE, 2)).claim(2, Claim.stable(SELF, 2)).claim(3, Claim.stable(SELF, 2)).build();
    v.onManagerConfig(peerGone);
    assertThat(v.config().pod(PEER)).map(PodEntry::status).contains(PodStatus.GONE);
    // A pod that registered after the manager's next config was made (its entry is newer).
    v.onConfig(ClusterConfig.empty(4).toBuilder().pod(entry(late, PodStatus.ACTIVE, 9)).build());

    // The manager prunes the peer's tombstone; its config is at epoch 3.
    ClusterConfig pruned = peerGone.toBuilder().removePod(PEER).claim(0, Claim.stable(SELF, 3)).build();
    assertThat(pruned.epoch()).isEqualTo(3);
    v.onManagerConfig(pruned);
    assertThat(v.config().pod(PEER)).as("the pruned tombstone left the view").isEmpty();
    assertThat(v.config().pod(late)).as("a newer entry the manager's config could not know stays").isPresent();
    assertThat(v.config().pod(SELF)).isPresent();

    // A peer that slept through it gossips its old view, where the peer was still active.
    v.onConfig(twoPods(1, PodStatus.ACTIVE, PodStatus.ACTIVE));
    assertThat(v.config().pod(PEER)).as("gossip can bring it back for a while").isPresent();
    v.onManagerConfig(pruned);
    assertThat(v.config().pod(PEER)).as("the manager's next config takes it out again").isEmpty();
    assertThat(v.isActive(PEER)).isFalse();
  }
}

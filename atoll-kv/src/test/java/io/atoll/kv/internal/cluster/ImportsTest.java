package io.atoll.kv.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.slots.KeySlots;
import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A managed node as the target of hand-offs ({@link Imports}), on a real cluster state and slot
 * store fed the manager's configs as it would get them, late and out of order included: keys left
 * by a hand-off whose source died go before the slot can reach this node again, and no config,
 * however late, deletes the keys of a hand-off that succeeded.
 */
class ImportsTest {
  private static final int SLOT = 77;
  private final Pod me = Nodes.pod("127.0.0.1", 7001, 1, 17001);
  private final Pod source = Nodes.pod("127.0.0.1", 7002, 2, 17002);
  private final Pod third = Nodes.pod("127.0.0.1", 7003, 3, 17003);
  private final Pod former = Nodes.pod("127.0.0.1", 7004, 4, 17004);
  private final SlotStore store = new SlotStore();
  private final ClusterState cluster = new ClusterState(ClusterState.fresh(me), System::currentTimeMillis, v -> { });
  private final Slot slot = store.slot(SLOT);

  ImportsTest() {
    cluster.managed("manager", () -> true);
  }

  /**
   * The manager's config at {@code epoch}: the four nodes (those in {@code gone} as tombstones),
   * SLOT owned by {@code owner} at {@code claim}; slot 0, this node's, carries the config's epoch.
   */
  private ClusterConfig config(long epoch, Pod owner, long claim, Pod... gone) {
    return config(epoch, owner, null, claim, gone);
  }

  /** As above, the claim recording {@code previous} as the slot's owner before {@code owner} (null: none). */
  private ClusterConfig config(long epoch, Pod owner, Pod previous, long claim, Pod... gone) {
    ClusterConfig.Builder b = ClusterConfig.empty(KeySlots.SLOT_COUNT).toBuilder();
    for (Pod p : new Pod[] {me, source, third, former}) {
      boolean dead = Set.of(gone).contains(p);
      b.pod(new PodEntry(p, dead ? PodStatus.GONE : PodStatus.ACTIVE, dead ? epoch : 1));
    }
    b.claim(0, Claim.stable(me.id(), epoch));
    b.claim(SLOT, Claim.stable(owner.id(), previous == null ? null : previous.id(), claim));
    return b.build();
  }

  /** Adopts {@code c} as {@code ManagedNode} does: the view, then the import records. */
  private int adopt(ClusterConfig c) {
    assertThat(cluster.adopt(c)).as("adopted epoch %d", c.epoch()).isTrue();
    return Imports.settle(store, cluster.view());
  }

  /** {@code CLUSTER ATOLL-IMPORTING} from {@code from} for SLOT, as {@code ReturnCommands} runs it. */
  private String handOff(Pod from, long epoch, boolean fresh) {
    String refused;
    synchronized (slot) {
      refused = Imports.begin(slot, cluster.view(), from.id(), epoch, fresh);
    }
    if (refused == null) {
      cluster.markImporting(new int[] {SLOT}, from.id());
    }
    return refused;
  }

  /** A key arriving by RESTORE-ASKING. */
  private void restore(String key, String value) {
    synchronized (slot) {
      slot.put(new Key(b(key)), new Entry(b(value)));
    }
  }

  private String get(String key) {
    synchronized (slot) {
      Entry e = slot.get(new Key(b(key)), System.currentTimeMillis());
      return e == null ? null : new String(e.string(), StandardCharsets.UTF_8);
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void keysLeftByASourceThatDiedAreGoneBeforeTheSlotsNewOwnerHandsItHere() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "old");
    // The source dies part way; its IMPORTING mark goes here, k stays out of sight.
    adopt(config(6, source, 5, source));
    assertThat(cluster.view().importing()).doesNotContainKey(SLOT);
    // The manager gives the slot to the third node (it never had k; a client may delete k there).
    assertThat(adopt(config(7, third, 7, source))).isEqualTo(1);
    assertThat(get("k")).as("k, lost with the source, is not kept to be found later").isNull();
    // The third node hands the slot here: -ASK from it finds nothing of the dead source's.
    assertThat(handOff(third, 8, true)).isNull();
    assertThat(get("k")).isNull();
  }

  @Test
  void keysLeftByASourceThatDiedGoWhenTheNewOwnerHandsTheSlotHereEvenIfItsConfigNeverCame() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "old");
    // This node's watch skipped every config of the third node's time: only its hand-off arrives.
    assertThat(handOff(third, 9, true)).isNull();
    assertThat(get("k")).isNull();
    assertThat(cluster.view().importing()).containsEntry(SLOT, third.id());
  }

  @Test
  void keysLeftByASourceThatDiedGoWhenAThirdNodeHeldTheSlotAndDiedBeforeItWasPlacedHereUnseen() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "old");
    // Unseen here (the watch skipped every config of that time): the source died, the manager gave
    // the slot to the third node (whose clients deleted k, which it never had), the third node
    // died, and the manager placed the slot here directly, recording the third node before it.
    assertThat(adopt(config(9, me, third, 9, source, third))).isEqualTo(1);
    assertThat(get("k")).as("deleted at the third node: it must not come back").isNull();
    synchronized (slot) {
      assertThat(slot.importedFrom()).isNull();
    }
  }

  @Test
  void keysOfASourceThatDiedStayWhenTheManagerPlacedTheSlotHereStraightFromIt() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "moved");
    // The source died part way (or released the slot): the slot comes here straight from it.
    assertThat(adopt(config(9, me, source, 9, source))).isZero();
    assertThat(get("k")).as("clients were sent here for k: the only copy").isEqualTo("moved");
  }

  @Test
  void aSourceThatMovesTheSlotHereAgainWithoutRoutingClientsHereDropsWhatAnEarlierHandOffLeft() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "old");
    // Resumed (the source's MIGRATING mark names this node): k is one of the keys it sends here.
    assertThat(handOff(source, 6, false)).isNull();
    assertThat(get("k")).isEqualTo("old");
    // Fresh (the source has no such mark: the slot came back to it since, and k is nobody's).
    assertThat(handOff(source, 9, true)).isNull();
    assertThat(get("k")).isNull();
  }

  @Test
  void aLateCopyOfTheRequestThatBeganAHandOffDeletesNothingItMovedHere() {
    adopt(config(5, source, 5));
    // The first request's answer timed out at the source, which kept the slot and, the manager
    // planning it again on the same config, began again on another connection.
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "moved"); // the source deleted k once this node had it
    // The first request, held up in the network, arrives now: same source, same epoch.
    assertThat(handOff(source, 5, true)).isNull();
    assertThat(get("k")).as("the only copy of k").isEqualTo("moved");
    assertThat(cluster.view().importing()).containsEntry(SLOT, source.id());
  }

  @Test
  void lateAndReorderedConfigsNeverDeleteTheKeysOfAHandOffThatSucceeded() {
    // This node knows the slot as a former owner's; the source owns it since claim 5 and hands it
    // here under its config at epoch 6, which this node has not seen.
    adopt(config(3, former, 2));
    assertThat(handOff(source, 6, true)).isNull();
    restore("k", "only copy");
    // A late config naming the former owner: its claim is older than the hand-off's config.
    assertThat(adopt(config(4, former, 2))).isZero();
    // The source re-issued (a new manager term) or regranted: the move is still under way.
    assertThat(adopt(config(7, source, 7))).isZero();
    // The source GONE in the config saved just before the one that gives the slot here.
    assertThat(adopt(config(8, source, 7, source))).isZero();
    assertThat(cluster.view().importing()).as("the mark went").doesNotContainKey(SLOT);
    assertThat(get("k")).as("the keys did not").isEqualTo("only copy");
    assertThat(adopt(config(9, me, 9, source))).isZero();
    assertThat(get("k")).isEqualTo("only copy");
    synchronized (slot) {
      assertThat(slot.importedFrom()).as("the keys are this node's own").isNull();
    }
    // Much later the slot goes to the third node (this node released it): nothing to clear.
    assertThat(adopt(config(12, third, 12, source))).isZero();
  }

  @Test
  void aHandOffMadeUnderAnOlderConfigThanOneAlreadyHereIsRefused() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 6, true)).isNull();
    restore("k", "v");
    assertThat(handOff(third, 5, true)).as("another source, older").contains("under the config at epoch 6");
    assertThat(handOff(source, 5, false)).as("the same source, an older request").isNotNull();
    assertThat(get("k")).isEqualTo("v");
    adopt(config(8, source, 8));
    assertThat(handOff(source, 7, false)).as("older than a claim known here").contains("claim at epoch 8");
    assertThat(get("k")).isEqualTo("v");
  }

  @Test
  void aBatchLentToAReturnNeverComesBackWhenTheSlotBecomesThisNodes() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("lent", "1");
    restore("kept", "2");
    synchronized (slot) {
      slot.lend(System.currentTimeMillis(), 1, 42);
    }
    String lent = get("lent") == null ? "lent" : "kept";
    String kept = lent.equals("lent") ? "kept" : "lent";
    // The source dies while it pulls the keys back; the manager gives the slot here.
    adopt(config(6, source, 5, source));
    adopt(config(7, me, 7, source));
    synchronized (slot) {
      assertThat(slot.lentBatch()).isZero();
      assertThat(slot.isLent(new Key(b(lent)))).isFalse();
    }
    assertThat(get(lent)).as("the source may have stored it, and a client deleted it there").isNull();
    assertThat(get(kept)).as("never left here: the latest copy").isNotNull();
  }

  @Test
  void aSlotThisNodeOwnsIsNotClearedByAHandOffRecord() {
    // A claim of this node newer than the hand-off's config ends the record; later configs of
    // other owners leave its keys alone (it hands them over itself when asked).
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "v");
    adopt(config(6, me, 6));
    restore("mine", "w");
    PodId owner = cluster.view().config().owner(SLOT);
    assertThat(owner).isEqualTo(me.id());
    assertThat(adopt(config(7, third, 7))).isZero();
    assertThat(get("mine")).isEqualTo("w");
  }

  /**
   * The manager's config at {@code epoch} after the source died with {@code third} as its replica:
   * SLOT still the dead source's ({@code promoted} false), or taken over by its replica, the
   * source's tombstone naming it as heir, as {@code ManagedConfigs} renders the manager's.
   */
  private ClusterConfig sourceDied(long epoch, boolean promoted) {
    ClusterConfig.Builder b = ClusterConfig.empty(KeySlots.SLOT_COUNT).toBuilder();
    b.pod(new PodEntry(me, PodStatus.ACTIVE, 1));
    b.pod(new PodEntry(promoted ? Nodes.withHeir(source, Nodes.nodeId(third.id())) : source, PodStatus.GONE, epoch));
    b.pod(new PodEntry(promoted ? third : Nodes.withPrimary(third, Nodes.nodeId(source.id())), PodStatus.ACTIVE,
        promoted ? epoch : 1));
    b.claim(0, Claim.stable(me.id(), epoch));
    b.claim(SLOT, promoted ? Claim.stable(third.id(), epoch) : Claim.stable(source.id(), 5));
    return b.build();
  }

  @Test
  void keysOfASourceThatDiedStayWhenItsReplicaTakesOverAndTheHandOffGoesOnWithIt() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "moved");
    // The source is declared dead; its replica lives: the mark stays until the manager promotes it.
    assertThat(adopt(sourceDied(6, false))).isZero();
    assertThat(cluster.view().importing()).containsEntry(SLOT, source.id());
    // Promoted, the replica holds the source's marks and routes clients here: keys, record and
    // mark go on with it.
    assertThat(adopt(sourceDied(7, true))).isZero();
    assertThat(get("k")).isEqualTo("moved");
    assertThat(cluster.view().importing()).containsEntry(SLOT, third.id());
    synchronized (slot) {
      assertThat(slot.importedFrom()).isEqualTo(third.id());
      assertThat(slot.importFloor()).isEqualTo(5);
    }
    // It resumes the hand-off: the keys are kept, as for the source's own RESUME.
    assertThat(handOff(third, 8, false)).isNull();
    assertThat(get("k")).isEqualTo("moved");
  }

  @Test
  void keysOfASourceThatDiedStayWhenThisNodeSkippedTheConfigThatDeclaredItDead() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "moved");
    assertThat(adopt(sourceDied(7, true))).isZero();
    assertThat(get("k")).isEqualTo("moved");
    assertThat(cluster.view().importing()).containsEntry(SLOT, third.id());
  }

  @Test
  void aPromotedReplicaThatStartsAFreshHandOffHereClearsWhatItsPredecessorLeft() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "moved");
    adopt(sourceDied(7, true));
    // No mark naming this node on the heir (the source's mark never reached it): FRESH clears.
    assertThat(handOff(third, 8, true)).isNull();
    assertThat(get("k")).isNull();
  }

  @Test
  void aHandOffThatSucceededKeepsItsKeysWhenTheSourceHasAnHeirByTheTimeThisNodeSeesItsClaim() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "moved");
    // The slot came here from the source (the claim names it as previous owner); by the time this
    // node sees that claim, the source has died and its replica took over.
    ClusterConfig.Builder b = ClusterConfig.empty(KeySlots.SLOT_COUNT).toBuilder();
    b.pod(new PodEntry(me, PodStatus.ACTIVE, 1));
    b.pod(new PodEntry(Nodes.withHeir(source, Nodes.nodeId(third.id())), PodStatus.GONE, 8));
    b.pod(new PodEntry(third, PodStatus.ACTIVE, 8));
    b.claim(0, Claim.stable(me.id(), 8));
    b.claim(SLOT, Claim.stable(me.id(), source.id(), 6));
    assertThat(adopt(b.build())).isZero();
    assertThat(get("k")).isEqualTo("moved");
    synchronized (slot) {
      assertThat(slot.importedFrom()).as("the record ended").isNull();
    }
  }

  @Test
  void anHeirResumingBeforeThisNodeHasTheConfigThatPromotedItIsAskedToRetryAndNothingIsCleared() {
    adopt(config(5, source, 5));
    assertThat(handOff(source, 5, true)).isNull();
    restore("k", "moved");
    // The promoted replica resumes under the config at epoch 8; this node still has epoch 5.
    assertThat(handOff(third, 8, false)).contains("older than the one at epoch 8").contains("retry");
    assertThat(get("k")).isEqualTo("moved");
    adopt(sourceDied(7, true));
    assertThat(handOff(third, 8, false)).isNull();
    assertThat(get("k")).isEqualTo("moved");
  }
}

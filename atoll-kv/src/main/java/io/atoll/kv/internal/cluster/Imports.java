package io.atoll.kv.internal.cluster;

import io.atoll.core.PodId;
import io.atoll.kv.internal.store.Slot;
import io.atoll.kv.internal.store.SlotStore;

/**
 * Managed mode, on the target of hand-offs: which keys a node holds for a slot it imports without
 * owning it, and when they go. Each slot keeps an <em>import record</em> ({@link Slot#importedFrom},
 * {@link Slot#importFloor}): the source of the hand-off whose keys are here, and the epoch {@code
 * f} of the manager's config the source handed off under (a config, at least as new as the one
 * the manager planned the move on, in which the source owns the slot). Records live under the
 * slot's lock, as the keys do; nothing here takes another lock.
 *
 * <p>Why a record and not the IMPORTING mark: the mark follows configs for routing and is dropped
 * by any config that does not show the move under way, a late one included (the source GONE in
 * the config saved just before the one that gives the slot here, or one naming a former owner);
 * the keys must outlive such a config, since the hand-off may have succeeded and they are then the
 * only copies. The record is cleared only on evidence that can never come from a hand-off that
 * succeeded:
 *
 * <ol>
 *   <li><b>A config with a claim of the slot newer than {@code f} naming a third node</b> (neither
 *       this node nor the source). The manager writes every claim at an epoch above its config's,
 *       so that claim was made after the source owned the slot at {@code f}: the slot left the
 *       source and this node for the third one. It leaves the source only when the source released
 *       it (after bringing back whatever reached this node: a return, {@code Migrator.pullBack}) or
 *       was declared dead (its keys are lost with it, and these were out of sight from the moment
 *       the third node got the slot); it leaves this node only when this node released it (with no
 *       key left) or was declared dead. Either way no key held here under the record is still
 *       found by routing, and none can become findable again. A late or reordered config carries
 *       no such claim: claims older than {@code f} do not count, and a claim of the source itself
 *       (a new term's re-issue, a regrant after a lost answer) is the move still under way.
 *   <li><b>A new hand-off of the slot here</b> ({@link #begin}) from another source, planned on a
 *       newer config (that source owns the slot after the first one: as above), or from the same
 *       source when it has no MIGRATING mark naming this node (<em>fresh</em>): the source routes
 *       clients here only by that mark, and it keeps the mark from the first key it moves until
 *       the slot leaves it or this node's keys come back, so keys here that it does not route to
 *       are from an earlier hand-off and found by nobody.
 * </ol>
 *
 * <p>A hand-off planned on a config older than the record's, or than a claim of the slot this node
 * has seen, is refused: its source acted on a stale picture (a request that arrived late), and its
 * keys must not mix with newer ones. A claim of the slot for this node newer than {@code f} ends
 * the record. The keys are this node's own (the hand-off succeeded, or the source died and the
 * manager gave the slot here) when the claim's {@linkplain io.atoll.core.Claim#previousOwner
 * previous owner}, which the manager records on every KV claim, is the source: a batch still lent
 * to a return then never becomes live again (the source may have stored it). When it names a third
 * node, that node held the slot after the source (and died, or it would have handed the slot here
 * with {@code ATOLL-IMPORTING}), so the keys are cleared as in rule 1, even if this node adopted no
 * config of that node's time. A claim that records none (written by a manager that predates the
 * record) keeps them, as before.
 *
 * <p>A source declared dead whose replica the manager promoted is replaced in the record by that
 * replica, its <em>heir</em> (the dead node's tombstone names it): the heir mirrored the source's
 * stream, migration marks and deletions included, so it routes clients to the keys here as the
 * source did, and the rules above apply to it as to the source.
 *
 * <p>A RESTORE-ASKING that arrives after its source gave up on it (its batch timed out) is refused
 * by the slot's hand-off token ({@code Slot#handOffToken}): a new {@code ATOLL-IMPORTING} or
 * {@code ATOLL-RETURN} for the slot, or the end of its record here, fences the older attempt; the
 * source holds such a batch's keys until it sent them again (see {@code RestoreBatch}).
 */
public final class Imports {
  private Imports() {}

  /**
   * {@code CLUSTER ATOLL-IMPORTING} for one slot, under its lock: records the hand-off from {@code
   * source} planned on the config at {@code floor}, first clearing keys and a lent batch that
   * belong to an earlier one ({@code fresh}: the source routes no client here yet).
   *
   * @return null if the hand-off may go on, else why not (an error text for the source)
   */
  public static String begin(Slot slot, ClusterView v, PodId source, long floor, boolean fresh) {
    int s = slot.id();
    long known = v.config().epoch(s);
    if (known > floor) {
      return "ERR slot " + s + " has a claim at epoch " + known + " here, newer than the config at epoch " + floor
          + " this hand-off was made under (expected: a hand-off under a config at least as new)";
    }
    PodId from = successor(slot, v);
    if (!fresh && from != null && !from.equals(source) && v.config().epoch() < floor) {
      // Another source resumes (it routes clients here), and this node has not seen the config the
      // hand-off was made under: the source may be its recorded source's heir, promoted in a config
      // not here yet, and the keys here the ones it routes clients to. Only a config at least as
      // new can tell; the source tries again. (A FRESH source routes nobody here: rule 2 holds.)
      return "ERR slot " + s + " holds keys of a hand-off from " + from + "; this node has the config at epoch "
          + v.config().epoch() + ", older than the one at epoch " + floor + " this hand-off was made under"
          + " (expected: a retry once it has that config)";
    }
    if (from != null && (floor < slot.importFloor() || floor == slot.importFloor() && !from.equals(source))) {
      return "ERR slot " + s + " holds keys of a hand-off from " + from + " under the config at epoch "
          + slot.importFloor() + " (got: one from " + source + " under epoch " + floor + "; expected: a newer one)";
    }
    // A FRESH from the recorded source under the recorded epoch may be a late copy of the request
    // that began this very hand-off (its answer timed out, the source sent it again on another
    // connection and has moved keys here since): with no newer config, the source can only have
    // lost its mark by finishing a return, which leaves nothing here, so there is nothing to clear.
    boolean sameHandOff = source.equals(from) && floor == slot.importFloor();
    if (fresh && !sameHandOff || from != null && !from.equals(source)) {
      slot.clear(); // with a lent batch: nobody finds these keys any more, and they must not come back
    } else if (slot.lentBatch() != 0) {
      // Lent keys are never put back live: the source may have stored them, and a client may have
      // deleted one there since. The source finishes a return before it hands the slot here again.
      return "ERR slot " + s + " has keys lent to a return that is not settled (expected: the return finished"
          + " before the slot is handed here)";
    }
    slot.returnToken(0); // requests of a return before this hand-off are refused from now on
    slot.imported(source, floor);
    return null;
  }

  /**
   * The slot's recorded source, under its lock; a source declared dead whose replica took its
   * slots over is replaced by that heir first ({@link ClusterView#heir}), keeping the floor: the
   * heir mirrored the source's stream, so it holds the source's migration mark naming this node
   * and routes clients here as the source did, and it goes on with the hand-off.
   */
  private static PodId successor(Slot slot, ClusterView v) {
    PodId from = slot.importedFrom();
    PodId heir = from == null ? null : v.heir(from);
    if (heir == null || heir.equals(v.me())) {
      return from;
    }
    slot.imported(heir, slot.importFloor()); // logged: a restart goes on with the heir too
    return heir;
  }

  /**
   * A node restarted with the keys it kept, at its first config: clears every slot that holds keys
   * but is neither this node's nor imported here (no import record). Only a hand-off's removals
   * lost with the machine's unsynced writes leave such keys (a slot leaves only once its keys have
   * moved), and the slot's new owner holds them, newer.
   *
   * @return how many slots were cleared
   */
  public static int clearOrphans(SlotStore store, ClusterView v) {
    int cleared = 0;
    for (int s = 0; s < v.config().size(); s++) {
      Slot slot = store.slot(s);
      synchronized (slot) {
        if (slot.size() > 0 && slot.importedFrom() == null && !v.me().equals(v.config().owner(s))) {
          slot.clear();
          cleared++;
        }
      }
    }
    return cleared;
  }

  /**
   * A node that replicated and replicates no more without owning a slot: clears every slot's
   * keys, import record, lent batch and migration marks (all its primary's, mirrored; their owners
   * hold them).
   *
   * @return how many slots were cleared
   */
  public static int clearAll(SlotStore store) {
    int cleared = 0;
    for (int s = 0; s < io.atoll.core.slots.KeySlots.SLOT_COUNT; s++) {
      Slot slot = store.slot(s);
      synchronized (slot) {
        if (slot.size() > 0 || slot.importedFrom() != null || slot.lentBatch() != 0) {
          if (slot.lentBatch() != 0) {
            slot.settle(slot.lentBatch());
          }
          slot.clear();
          slot.returnToken(0);
          slot.handOffToken(0);
          slot.imported(null, 0);
          cleared++;
        }
        slot.marks(null, null);
        slot.returned(null, 0);
      }
    }
    return cleared;
  }

  /**
   * After a config is adopted: ends every import record that config decides (see the class
   * comment), clearing the keys of those whose slot went to a third node.
   *
   * @return how many slots were cleared
   */
  public static int settle(SlotStore store, ClusterView v) {
    int cleared = 0;
    for (int s = 0; s < v.config().size(); s++) {
      Slot slot = store.slot(s);
      synchronized (slot) {
        PodId from = successor(slot, v);
        if (from == null || v.config().epoch(s) <= slot.importFloor()) {
          continue;
        }
        PodId owner = v.config().owner(s);
        if (v.me().equals(owner)) {
          PodId previous = v.config().claim(s).previousOwner();
          // The claim may name the source itself where the record names its heir.
          if (previous != null && !previous.equals(from) && !previous.equals(owner)
              && !from.equals(v.heir(previous))) {
            // The manager says the slot came here from a third node, which owned it after the
            // source: as in rule 1, nobody finds these keys since, and a client may have deleted
            // one there. This node cannot learn it from configs it skipped.
            slot.clear();
            cleared++;
          } else if (slot.lentBatch() != 0) {
            slot.settle(slot.lentBatch()); // dropped, never live again
          }
          slot.returnToken(0);
          slot.handOffToken(0); // restores of the ended hand-off arriving late are refused
          slot.imported(null, 0);
        } else if (owner != null && !owner.equals(from)) {
          slot.clear();
          slot.returnToken(0);
          slot.handOffToken(0); // restores of the ended hand-off arriving late are refused
          slot.imported(null, 0);
          cleared++;
        }
      }
    }
    return cleared;
  }
}

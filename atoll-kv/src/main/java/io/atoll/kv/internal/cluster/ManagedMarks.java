package io.atoll.kv.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Managed mode's migration marks as pure functions: a view and a change in, the next view out.
 * {@link ClusterState} runs each under its monitor and publishes the result, so the rules for
 * when a MIGRATING or IMPORTING mark is made, paired into a return, or dropped live here, apart
 * from the state that holds them.
 */
final class ManagedMarks {
  private ManagedMarks() {}

  /** The slots paired for a return, and the view with their marks. */
  record Returning(ClusterView view, int[] slots) {}

  /**
   * {@code v} with the manager's {@code config} and the marks it leaves: a slot no longer owned
   * here loses its MIGRATING mark (the move is made); an IMPORTING mark goes when the slot is owned
   * here (the move is made) or by a third node (the source lost it). A mark on a slot the manager
   * gave back to its source stays, so that keys already moved are still found (-ASK) until the
   * move is resumed, unless its peer is no longer an active member (left, or declared dead): the
   * keys that reached it are gone with it, and the mark would keep sending clients to a dead node
   * and the slot from being handed to anyone else. The mark was made for a hand-off the manager
   * planned on a config listing the peer, and this node follows the same manager's configs in
   * order, so a peer missing from a newer config has left. A peer declared dead whose replica took
   * its slots over is replaced by that heir first ({@link #heirs}), and the rules apply to it.
   */
  static ClusterView adopt(ClusterView v, ClusterConfig config) {
    ClusterView next = new ClusterView(config, v.me(), Map.of(), Map.of(), v.failed());
    Map<Integer, PodId> wasMig = heirs(next, v.migrating());
    Map<Integer, PodId> wasImp = heirs(next, v.importing());
    Map<Integer, PodId> mig = new HashMap<>(wasMig);
    Map<Integer, PodId> imp = new HashMap<>(wasImp);
    mig.entrySet().removeIf(e -> {
      PodId owner = config.owner(e.getKey());
      if (e.getValue().equals(wasImp.get(e.getKey()))) {
        return !returnHolds(config, v.me(), owner, e.getValue());
      }
      return !v.me().equals(owner) || !active(config, e.getValue());
    });
    imp.entrySet().removeIf(e -> {
      PodId owner = config.owner(e.getKey());
      if (e.getValue().equals(wasMig.get(e.getKey()))) {
        return !returnHolds(config, v.me(), owner, e.getValue());
      }
      return v.me().equals(owner) || !e.getValue().equals(owner) || !active(config, e.getValue());
    });
    return new ClusterView(config, v.me(), mig, imp, v.failed());
  }

  /**
   * {@code marks} with each peer declared dead and taken over replaced by its heir ({@link
   * ClusterView#heir}): the heir holds the dead node's keys, marks and import records (its
   * replica, which mirrored them), so a hand-off or return with the dead node goes on with it. A
   * mark that would name this node itself is left as it was (and then dropped as any mark of a
   * dead peer).
   */
  static Map<Integer, PodId> heirs(ClusterView next, Map<Integer, PodId> marks) {
    Map<Integer, PodId> out = null;
    for (Map.Entry<Integer, PodId> e : marks.entrySet()) {
      PodId heir = next.heir(e.getValue());
      if (heir != null && !heir.equals(next.me())) {
        if (out == null) {
          out = new HashMap<>(marks);
        }
        out.put(e.getKey(), heir);
      }
    }
    return out == null ? marks : out;
  }

  /**
   * Whether a return (both marks of a slot naming the same peer, see {@link #returning}) still
   * stands under a config: the slot is still the puller's (this node's, or the peer's if this node
   * returns the keys) and the peer is an active member. A peer that left or was declared dead took
   * the keys still on it with it; the puller then serves the slot alone.
   */
  private static boolean returnHolds(ClusterConfig config, PodId me, PodId owner, PodId peer) {
    return (me.equals(owner) || peer.equals(owner)) && active(config, peer);
  }

  /**
   * Whether a mark naming {@code pod} stands: it is an active member, or it was declared dead and
   * a replica of it is an active member, which the manager promotes next (the mark then goes to
   * that heir, {@link #heirs}): dropped meanwhile, the mark of the keys on the way would be lost.
   */
  private static boolean active(ClusterConfig config, PodId pod) {
    PodEntry e = config.pod(pod).orElse(null);
    if (e == null) {
      return false;
    }
    if (e.status() == PodStatus.ACTIVE) {
      return true;
    }
    String id = Nodes.nodeId(pod);
    for (PodEntry r : config.pods()) {
      if (r.status() == PodStatus.ACTIVE && id.equals(Nodes.primaryOf(r.pod()))) {
        return true;
      }
    }
    return false;
  }

  /** {@code v} with {@code slots} moving to {@code target}; a return of them under way ends. */
  static ClusterView migrating(ClusterView v, int[] slots, PodId target) {
    Map<Integer, PodId> mig = new HashMap<>(v.migrating());
    Map<Integer, PodId> imp = new HashMap<>(v.importing());
    for (int s : slots) {
      mig.put(s, target);
      imp.remove(s);
    }
    return new ClusterView(v.config(), v.me(), mig, imp, v.failed());
  }

  /**
   * A <em>return</em> of {@code slots} between this node and {@code peer}, the reverse of a
   * hand-off that stopped part way: the keys that reached the target go back to the source, which
   * owns the slot. Both nodes then hold both marks of the slot, naming each other: on the source
   * (the puller) the MIGRATING mark sends clients for a key it lacks to the target with -ASK, and
   * the IMPORTING mark lets it serve an ASKING request for a key it lacks (the target sent it back,
   * so the key is nowhere else); on the target the marks make it answer ASKING requests for a key
   * it lacks with -ASK back to the source. Keys move only from the target to the source, so each
   * is found on exactly one side. Only slots marked one way with {@code peer} are paired: on this
   * node as the source, MIGRATING to the peer of a slot it owns; as the target, IMPORTING from the
   * peer of a slot the peer owns.
   */
  static Returning returning(ClusterView v, int[] slots, PodId peer) {
    Map<Integer, PodId> mig = new HashMap<>(v.migrating());
    Map<Integer, PodId> imp = new HashMap<>(v.importing());
    int[] paired = new int[slots.length];
    int n = 0;
    for (int s : slots) {
      PodId owner = v.config().owner(s);
      if (v.me().equals(owner) && peer.equals(mig.get(s))) {
        imp.put(s, peer);
      } else if (peer.equals(owner) && peer.equals(imp.get(s))) {
        mig.put(s, peer);
      } else if (!(peer.equals(mig.get(s)) && peer.equals(imp.get(s)))) {
        continue;
      }
      paired[n++] = s;
    }
    return new Returning(new ClusterView(v.config(), v.me(), mig, imp, v.failed()), Arrays.copyOf(paired, n));
  }

  /** {@code v} without the return of {@code slot} with {@code peer}, or {@code v} if none stands. */
  static ClusterView endReturn(ClusterView v, int slot, PodId peer) {
    if (!peer.equals(v.migrating().get(slot)) || !peer.equals(v.importing().get(slot))) {
      return v;
    }
    Map<Integer, PodId> mig = new HashMap<>(v.migrating());
    Map<Integer, PodId> imp = new HashMap<>(v.importing());
    mig.remove(slot);
    imp.remove(slot);
    return new ClusterView(v.config(), v.me(), mig, imp, v.failed());
  }

  /**
   * {@code v} with {@code slots} arriving from {@code source} (named by its address and
   * incarnation, not looked up: the manager may start a hand-off to a node that has not seen the
   * source's entry yet). A slot already this node's needs no mark; a return of one under way ends
   * (the source moves it here again).
   */
  static ClusterView importing(ClusterView v, int[] slots, PodId source) {
    Map<Integer, PodId> imp = new HashMap<>(v.importing());
    Map<Integer, PodId> mig = new HashMap<>(v.migrating());
    for (int s : slots) {
      if (!v.me().equals(v.config().owner(s))) {
        imp.put(s, source);
        mig.remove(s);
      }
    }
    return new ClusterView(v.config(), v.me(), mig, imp, v.failed());
  }
}

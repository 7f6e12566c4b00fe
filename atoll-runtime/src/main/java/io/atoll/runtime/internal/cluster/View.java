package io.atoll.runtime.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.ClusterMismatchException;
import io.atoll.core.Pod;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.Spaces;
import io.atoll.runtime.internal.util.GuardedBy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This pod's view of the cluster: one volatile reference to an immutable {@link ClusterConfig},
 * this pod's identity, and its entry in the view. The hot path reads them without locks.
 *
 * <p>Every config that arrives (manager watch, push, gossip, a peer's hint) is merged in under
 * {@link #guard()}, which also serializes what the pod does with it (the host starts and stops
 * shards through {@link Callback#apply}), so a shard's stop always finishes before a later config
 * can give it back. The {@link Lease} fences and unfences under the same guard.
 *
 * <p>Merging alone only ever adds pods, so a config from the manager also takes out of the view
 * the tombstones the manager pruned ({@link ClusterConfig#withoutPrunedBy}); gossip from a peer
 * that has not heard of the pruning yet may bring them back until the next config from the
 * manager, never for good.
 */
public final class View {

  private static final Logger log = LoggerFactory.getLogger(View.class);

  /** What the view reports upward. */
  public interface Callback {
    /** Under the guard: act on the view (start serving shards it gives this pod, drop others). */
    void apply(ClusterConfig view, PodId self, boolean selfActive);

    /** Under the guard: the view declares {@code pod} gone; stop sending to it. */
    void podGone(PodId pod);

    /**
     * Under the guard, before a config laid out in {@code longer} is published: the layout grew
     * by spaces appended at run time, so whatever is sized by it (routes, shard states) grows
     * first and every shard number the new config holds finds its place.
     */
    default void grow(Spaces longer) {}

    /** After a change, outside the guard: messages waiting for an owner may go now. */
    void changed();

    /** After a change, outside the guard: the view declares this very pod gone. */
    void selfDeclaredGone();
  }

  private final Object guard = new Object();
  private final Callback callback;
  @GuardedBy("guard") // for writes; read without it
  private volatile ClusterConfig config;
  /** This pod's entry in {@link #config} (the same object), or null; for identity checks on the hot path. */
  @GuardedBy("guard")
  private volatile PodEntry selfEntry;
  @GuardedBy("guard")
  private volatile PodId self;

  /** A view starting at {@code first}, for the pod {@code self}. */
  public View(ClusterConfig first, PodId self, Callback callback) {
    this.config = first;
    this.self = self;
    this.callback = callback;
  }

  /** The lock that serializes view changes, lease fencing and a new incarnation. */
  public Object guard() {
    return guard;
  }

  /** The current config. */
  public ClusterConfig config() {
    return config;
  }

  /** This pod's entry in {@link #config()}, by identity, or null. */
  public PodEntry selfEntry() {
    return selfEntry;
  }

  /** This pod's identity (a new incarnation after it was taken for dead). */
  public PodId self() {
    return self;
  }

  /** The number of shards: the view's, which grows when spaces are appended at run time. */
  public int numberOfShards() {
    return config.size();
  }

  /**
   * The layout of the shards in spaces: the view's. It only grows, by spaces appended after the
   * last, so every shard number read from an earlier layout keeps its meaning.
   */
  public Spaces spaces() {
    return config.spaces();
  }

  /** The active pods other than this one. */
  public List<PodId> peers() {
    PodId me = self;
    List<PodId> out = new ArrayList<>();
    for (Pod p : config.activePods()) {
      if (!p.id().equals(me)) {
        out.add(p.id());
      }
    }
    return out;
  }

  /** Whether {@code pod} is active in the view. */
  public boolean isActive(PodId pod) {
    return config.pod(pod).map(e -> e.status() == PodStatus.ACTIVE).orElse(false);
  }

  /** The cluster this pod belongs to: its view's ({@link ClusterId#NONE} while it has none). */
  public ClusterId clusterId() {
    return config.clusterId();
  }

  /**
   * Checks that {@code incoming} belongs to this pod's cluster. Only a config from the manager
   * may give a cluster id to a view that has none (the manager's first start with ids).
   *
   * @throws ClusterMismatchException if it belongs to another cluster
   */
  public void checkCluster(ClusterConfig incoming, boolean fromManager) {
    ClusterId mine = config.clusterId();
    if (!incoming.clusterId().equals(mine) && !(fromManager && mine.isNone())) {
      log.warn("pod {}: refused a config of cluster {} (this pod belongs to cluster {})", self,
          incoming.clusterId().isNone() ? "none" : incoming.clusterId(), mine.isNone() ? "none" : mine);
      throw new ClusterMismatchException(mine, incoming.clusterId());
    }
  }

  /**
   * Merges a config from a peer (push, gossip, hint) into the view and acts on it. A config whose
   * layout extends the view's (a space appended at run time) grows the view; one the view's
   * layout extends (a peer that has not heard of the new space yet) merges as its prefix; a
   * config of any other layout is ignored.
   *
   * @throws ClusterMismatchException if it belongs to another cluster: nothing is merged
   */
  public void onConfig(ClusterConfig incoming) {
    onConfig(incoming, false);
  }

  /** As {@link #onConfig}, for a config from the manager, which may give the view its cluster id. */
  public void onManagerConfig(ClusterConfig incoming) {
    onConfig(incoming, true);
  }

  private void onConfig(ClusterConfig incoming, boolean fromManager) {
    Spaces mine = config.spaces();
    if (!incoming.spaces().extendsLayout(mine) && !mine.extendsLayout(incoming.spaces())) {
      if (incoming.size() != mine.size()) {
        log.warn("pod {}: ignored a config of {} shards (expected: {})", self, incoming.size(), mine.size());
      } else {
        log.warn("pod {}: ignored a config of the spaces {} (expected: {}, or it with spaces appended)", self,
            incoming.spaces(), mine);
      }
      return;
    }
    boolean declaredGone;
    synchronized (guard) {
      checkCluster(incoming, fromManager);
      ClusterConfig merged = config.merge(incoming);
      if (!merged.spaces().equals(config.spaces())) {
        log.info("pod {}: the cluster's spaces grew from {} to {}", self, config.spaces(), merged.spaces());
        callback.grow(merged.spaces()); // before the config that numbers the new shards is read
      }
      if (fromManager) {
        // Tombstones the manager pruned leave the view too, or views would grow with churn.
        merged = merged.withoutPrunedBy(incoming);
      }
      if (merged == config) {
        return;
      }
      selfEntry = null; // never an entry of another config than the view's
      config = merged;
      Optional<PodEntry> me = merged.pod(self);
      selfEntry = me.orElse(null);
      declaredGone = me.isPresent() && me.get().status() == PodStatus.GONE;
      callback.apply(merged, self, me.isPresent() && me.get().status() == PodStatus.ACTIVE);
      for (PodEntry e : merged.pods()) {
        if (e.status() == PodStatus.GONE) {
          callback.podGone(e.id());
        }
      }
    }
    callback.changed();
    if (declaredGone) {
      callback.selfDeclaredGone();
    }
  }

  /** Applies the current view again (after a release, a claim it ignored may now take effect). */
  public void reapply() {
    synchronized (guard) {
      applyLocked();
    }
    callback.changed();
  }

  /** Applies the current view again; the caller holds the guard. */
  @GuardedBy("guard")
  public void applyLocked() {
    assert Thread.holdsLock(guard);
    Optional<PodEntry> me = config.pod(self);
    callback.apply(config, self, me.isPresent() && me.get().status() == PodStatus.ACTIVE);
  }

  /** Names this pod once it knows its address (it starts listening after the view is made). */
  public void identify(PodId id) {
    synchronized (guard) {
      self = id;
      selfEntry = null;
    }
  }

  /** This pod joins again as {@code next}; the caller holds the guard. */
  @GuardedBy("guard")
  public void newIncarnationLocked(PodId next) {
    assert Thread.holdsLock(guard);
    self = next;
    selfEntry = null;
  }

  @Override
  public String toString() {
    return "View[pod " + self + ", epoch " + config.epoch() + "]";
  }
}

package io.atoll.manager;

import io.atoll.core.spi.AssignmentStore;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;

/**
 * This term's saves that failed and may still land, and the verdict on what the store holds when
 * the {@link Journal} reads it back after one. Pure but for the digests it keeps: the journal does
 * the reading (off the loop) and acts on the verdict (on the loop).
 *
 * <p>A save whose outcome looked failed may have landed after all, before or after its error (a
 * stopped Redis runs the commands it was sent when it resumes), so a version conflict under this
 * manager's own term is read back, not taken for a deposition. Only a state one of those saves
 * wrote is taken as this manager's own, by SHA-256 digest; anything else it cannot vouch for.
 *
 * <p>Loop-confined.
 */
@GuardedBy("loop")
final class FailedSaves {

  /** The most digests kept. */
  static final int MAX_UNSETTLED = 1024;

  /**
   * SHA-256 digests of the states of this term's saves that failed since the last one known to
   * have landed. The first {@link #MAX_UNSETTLED} are kept (a store that queues commands runs the
   * oldest first); should a later one land, the read-back deposes, which is safe.
   */
  private final Set<String> unsettled = new HashSet<>();

  /** The verdict on the state read back. */
  sealed interface Verdict {}

  /** The store holds what this manager last knew it saved: the failed save did not land (yet). */
  record Unchanged() implements Verdict {}

  /** One of this term's failed saves landed: install its state, at {@code version}. */
  record Own(ManagerState state, long version) implements Verdict {}

  /**
   * A state this manager cannot vouch for: it steps down. {@code why} is for the log, after the
   * term ("steps down: ..." or "is deposed: ..."); {@code version} is the stored version (0 if the
   * store lost its state).
   */
  record Foreign(String why, long version) implements Verdict {}

  /** A save of {@code data} failed: it may land later. */
  void failed(byte[] data) {
    if (unsettled.size() < MAX_UNSETTLED) {
      unsettled.add(digest(data));
    }
  }

  /** A save landed: no save that failed before it can land now (each expected an older version). */
  void settled() {
    unsettled.clear();
  }

  /**
   * What a failed save left. Unchanged: the save did not land (yet). Changed to exactly the state
   * of one of this term's failed saves: it landed after all and is this manager's own. Anything
   * else is foreign: a newer term; a state of this term that this manager did not write (a store
   * whose term counter went back and granted this term twice); a store that lost the state or went
   * back to an older version (lost writes, a failed-over replica). Carrying on from such a state
   * could reuse claim epochs or let two managers grant leases under one term.
   *
   * @param storeVersion the version of this manager's last save known to have landed
   * @param term this manager's term
   * @throws RuntimeException if the stored state cannot be decoded
   */
  Verdict judge(Optional<AssignmentStore.Stored> stored, long storeVersion, long term) {
    if (stored.isEmpty()) {
      return new Foreign("steps down: the store lost its state (this term saved version " + storeVersion + ")", 0);
    }
    AssignmentStore.Stored s = stored.get();
    if (s.version() == storeVersion) {
      return new Unchanged();
    }
    ManagerState state = ManagerState.decode(s.data());
    if (state.term() > term) {
      return new Foreign("is deposed: the store holds term " + state.term(), s.version());
    }
    boolean own = s.version() > storeVersion && state.term() == term && unsettled.contains(digest(s.data()));
    if (!own) {
      return new Foreign("steps down: the store holds version " + s.version() + " of term " + state.term() + ", which this"
          + " manager did not write (it saved version " + storeVersion + "): another writer under this term, or a"
          + " store that went back", s.version());
    }
    return new Own(state, s.version());
  }

  private static String digest(byte[] data) {
    try {
      return HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(data));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e); // every JDK has SHA-256
    }
  }
}

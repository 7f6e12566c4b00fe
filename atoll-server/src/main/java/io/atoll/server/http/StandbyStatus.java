package io.atoll.server.http;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StoreException;
import java.util.Optional;

/**
 * What a standby manager knows of the leader, as its store's leader watch last told it: the
 * holder and term of the live lease, none, or that the store cannot be reached. Written by the
 * watch, read by the HTTP endpoint and the standby's refusals. Thread-safe.
 */
public final class StandbyStatus implements AssignmentStore.LeaderListener {

  /** One answer of the watch; {@code problem} is non-null while the store cannot be reached. */
  private record Known(Optional<AssignmentStore.Leader> leader, String problem) {}

  private volatile Known known = new Known(Optional.empty(), "not read yet");

  /** Forgets what was told: a process standing by again has not read the store yet. */
  public void reset() {
    known = new Known(Optional.empty(), "not read yet");
  }

  @Override
  public void leader(Optional<AssignmentStore.Leader> leader) {
    known = new Known(leader, null);
  }

  @Override
  public void unreachable(StoreException e) {
    known = new Known(Optional.empty(), "the store cannot be reached: " + e.getMessage());
  }

  /** The leader, if the store answered and names one. */
  public Optional<AssignmentStore.Leader> leader() {
    return known.leader();
  }

  /** Whether the store answered last time and named no leader: a standby may take over. */
  public boolean noLeader() {
    Known k = known;
    return k.problem() == null && k.leader().isEmpty();
  }

  /** "the leader is X (term T)", "no manager leads right now", or why the store cannot tell. */
  public String describe() {
    Known k = known;
    if (k.problem() != null) {
      return "leader unknown (" + k.problem() + ")";
    }
    return k.leader().map(l -> "the leader is " + l.holder() + " (term " + l.term() + ")")
        .orElse("no manager leads right now");
  }

  /** Adds {@code leader} and {@code term}, or {@code problem}, to a JSON object being written. */
  void write(Json j) {
    Known k = known;
    if (k.problem() != null) {
      j.field("problem", k.problem());
    } else if (k.leader().isPresent()) {
      j.field("leader", k.leader().get().holder()).field("term", k.leader().get().term());
    }
  }
}

package io.atoll.core.spi;

import java.util.Optional;

/**
 * A manager could not take the store's leadership because another holder's lease is live. It
 * may wait and try again: the lease lapses unless its holder renews it.
 */
public final class LeadershipTakenException extends StoreException {

  private final transient AssignmentStore.Leader leader;

  /** For the store and the leader found, if it could be read. */
  public LeadershipTakenException(String store, Optional<AssignmentStore.Leader> leader) {
    super(store + ": another manager leads (" + leader.map(l -> l.holder() + ", term " + l.term())
        .orElse("its lease is live") + "); this one can take over once that lease lapses");
    this.leader = leader.orElse(null);
  }

  /** The leader found, if it could be read. */
  public Optional<AssignmentStore.Leader> leader() {
    return Optional.ofNullable(leader);
  }
}

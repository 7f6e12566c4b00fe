package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Spaces;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StoreException;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which layout of shards a start runs with, decided from the stored state and the configured
 * spaces before the journal takes a term. Apart from the journal because it is a pure decision
 * over two layouts (and its log lines), with nothing of the journal's state.
 */
final class StoredLayout {

  private static final Logger log = LoggerFactory.getLogger(StoredLayout.class);

  private StoredLayout() {}

  /**
   * The stored state, checked against the configured layout. The store's layout wins when it
   * extends the configured one (spaces appended at run time: a restart with the first
   * {@code --spaces} keeps them, and never drops a space whose shards are assigned); the
   * configured one wins when it extends the store's (an operator appended spaces to
   * {@code --spaces}). Any other difference is refused, naming both.
   *
   * @param stored what the store holds (empty: a first start)
   * @param spaces the configured layout
   * @param store the store, named in log lines and errors
   * @throws StoreException if the layouts differ otherwise
   */
  static ManagerState check(Optional<AssignmentStore.Stored> stored, Spaces spaces, AssignmentStore store) {
    ManagerState state = stored.map(s -> ManagerState.decode(s.data()))
        .orElseGet(() -> new ManagerState(0, ClusterConfig.empty(spaces)));
    Spaces held = state.config().spaces();
    if (held.equals(spaces)) {
      return state;
    }
    if (held.extendsLayout(spaces)) {
      log.info("shard manager: {} holds the spaces {}, grown at run time from the configured {}; it keeps them",
          store, held, spaces);
      return state;
    }
    if (spaces.extendsLayout(held)) {
      log.info("shard manager: {} holds the spaces {}; the configured {} append to them", store, held, spaces);
      return state.withConfig(state.config().extendTo(spaces));
    }
    if (held.isSingle() && spaces.isSingle()) {
      throw new StoreException(store + " holds " + held.size() + " shards but the manager is set to "
          + spaces.size() + " (expected: the same; the number of shards cannot change for a store)");
    }
    throw new StoreException(store + " holds the spaces " + held + " but the manager is set to " + spaces
        + " (expected: the same, a layout the stored one extends, or the stored one with spaces appended; a"
        + " space's shard count and position cannot change for a store)");
  }
}

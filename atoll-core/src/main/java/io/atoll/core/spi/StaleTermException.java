package io.atoll.core.spi;

/**
 * A save was refused because a later term was granted since the writer's: another manager took
 * the leadership. The writer is deposed; it must stop writing and step down.
 */
public final class StaleTermException extends StoreConflictException {

  private final long term;
  private final long currentTerm;

  /** For a writer's term and the term the store has granted since. */
  public StaleTermException(String store, long term, long currentTerm) {
    super(term, currentTerm, store + ": term " + term + " is stale (expected: the current term " + currentTerm
        + "); another manager took the leadership, step down");
    this.term = term;
    this.currentTerm = currentTerm;
  }

  /** The writer's term. */
  public long term() {
    return term;
  }

  /** The last term the store granted. */
  public long currentTerm() {
    return currentTerm;
  }
}

package io.atoll.core.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * An {@link AssignmentStore} that passes every call to another: extend it to decorate a store
 * (meter its saves, stall it in a test) by overriding only what changes.
 */
public class ForwardingAssignmentStore implements AssignmentStore {

  private final AssignmentStore inner;

  /** Forwards to {@code inner}. */
  public ForwardingAssignmentStore(AssignmentStore inner) {
    this.inner = Objects.requireNonNull(inner, "inner");
  }

  @Override
  public Optional<Stored> load() {
    return inner.load();
  }

  @Override
  public long save(byte[] data, long term, long expectedVersion) {
    return inner.save(data, term, expectedVersion);
  }

  @Override
  public Watch watch(long afterVersion, Consumer<Stored> onChange) {
    return inner.watch(afterVersion, onChange);
  }

  @Override
  public Optional<Lease> tryAcquire(String holder, Duration ttl) {
    return inner.tryAcquire(holder, ttl);
  }

  @Override
  public boolean renew(Lease lease) {
    return inner.renew(lease);
  }

  @Override
  public void release(Lease lease) {
    inner.release(lease);
  }

  @Override
  public Optional<Leader> leader() {
    return inner.leader();
  }

  @Override
  public Watch watchLeader(Duration poll, LeaderListener listener) {
    return inner.watchLeader(poll, listener);
  }

  @Override
  public int maxBytes() {
    return inner.maxBytes();
  }

  /** Closes the store it forwards to. */
  @Override
  public void close() {
    inner.close();
  }
}

package io.atoll.core.spi;

import io.atoll.core.FencingToken;
import java.util.Objects;

/**
 * A {@link StateStore} that passes every call to another: extend it to decorate a store (count its
 * calls, log them, inject faults in a test) by overriding only what changes.
 */
public class ForwardingStateStore implements StateStore {

  private final StateStore inner;

  /** Forwards to {@code inner}. */
  public ForwardingStateStore(StateStore inner) {
    this.inner = Objects.requireNonNull(inner, "inner");
  }

  @Override
  public StoredState claim(String type, String id, FencingToken token) throws StateStoreException {
    return inner.claim(type, id, token);
  }

  @Override
  public long save(String type, String id, FencingToken token, long revision, byte[] state) throws StateStoreException {
    return inner.save(type, id, token, revision, state);
  }

  /** Closes the store it forwards to. */
  @Override
  public void close() {
    inner.close();
  }
}

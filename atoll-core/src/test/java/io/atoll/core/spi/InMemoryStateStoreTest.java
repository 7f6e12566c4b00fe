package io.atoll.core.spi;

/** The state store contract on the store in this JVM's memory. */
class InMemoryStateStoreTest extends StateStoreContract {

  @Override
  protected StateStore openFresh() {
    return new InMemoryStateStore();
  }

  @Override
  protected StateStore openAnother(StateStore store) {
    return new ForwardingClient(store);
  }

  @Override
  protected boolean restartServer() {
    return false;
  }

  /** Another client of the same memory: closing it leaves the store open for the others. */
  private record ForwardingClient(StateStore store) implements StateStore {
    @Override
    public StoredState claim(String type, String id, io.atoll.core.FencingToken token) throws StateStoreException {
      return store.claim(type, id, token);
    }

    @Override
    public long save(String type, String id, io.atoll.core.FencingToken token, long revision, byte[] state)
        throws StateStoreException {
      return store.save(type, id, token, revision, state);
    }

    @Override
    public void close() {}
  }
}

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
  private static final class ForwardingClient extends ForwardingStateStore {
    ForwardingClient(StateStore store) {
      super(store);
    }

    @Override
    public void close() {}
  }
}

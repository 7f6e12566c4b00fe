package io.atoll.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.FencingToken;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.spi.InMemoryStateStore;
import io.atoll.core.spi.StateStoreException;
import io.atoll.core.spi.StoredState;
import org.junit.jupiter.api.Test;

/** Where a durable activation starts from: a state carried in a hand-off, else the store. */
class DurableActivationTest {

  record Count(long n) {}

  static final StateCodec<Count> CODEC = StateCodec.of(Count.class);
  static final FencingToken OLD = new FencingToken(1, 5);
  static final FencingToken NEW = new FencingToken(1, 9);

  /** An activation's context, holding what a hand-off carried for it. */
  record Context(FencingToken token, StoredState carried) implements EntityContext, Carrying.Arriving {
    @Override
    public StoredState takeCarried() {
      return carried;
    }

    @Override
    public String entityId() {
      return "c";
    }

    @Override
    public String entityType() {
      return "counter";
    }

    @Override
    public PodId pod() {
      return new PodId(new PodAddress("127.0.0.1", 1), 1);
    }

    @Override
    public Sharding sharding() {
      return null;
    }

    @Override
    public Reply<Object> reply() {
      return null;
    }

    @Override
    public void passivate() {}
  }

  private static final DurableEntity<String, Count> INC = (msg, ctx) -> ctx.setState(new Count(ctx.state().n() + 1));

  @Test
  void aCarriedStateIsUsedWithoutReadingTheStoreAndTheFirstSaveIsConditionalOnIt() throws Exception {
    InMemoryStateStore store = new InMemoryStateStore();
    store.claim("counter", "c", OLD);
    store.save("counter", "c", OLD, 0, CODEC.encode(new Count(41)));
    DurableActivation<String, Count> a = DurableActivation.start(
        new Context(NEW, new StoredState(1, CODEC.encode(new Count(41)))), store, CODEC, new Count(0), INC);
    assertThat(a.state()).isEqualTo(new Count(41));
    a.onMessage("inc", null);
    assertThat(a.revision()).isEqualTo(2);
    // Its save raised the stored token: the old owner can write no more.
    assertThat(org.assertj.core.api.Assertions.catchThrowableOfType(StateStoreException.class,
        () -> store.save("counter", "c", OLD, 2, new byte[0])).reason()).isEqualTo(StateStoreException.Reason.FENCED);
  }

  @Test
  void aCarriedStateThatDoesNotDecodeIsDroppedForTheStores() throws Exception {
    InMemoryStateStore store = new InMemoryStateStore();
    store.save("counter", "c", OLD, 0, CODEC.encode(new Count(7)));
    DurableActivation<String, Count> a = DurableActivation.start(
        new Context(NEW, new StoredState(1, new byte[] {9, 9, 9})), store, CODEC, new Count(0), INC);
    assertThat(a.state()).isEqualTo(new Count(7));
    assertThat(a.revision()).isEqualTo(1);
  }

  @Test
  void anActivationLeavesNothingWhileASetStateIsUnsavedOrAfterAFailedSave() throws Exception {
    InMemoryStateStore store = new InMemoryStateStore();
    DurableActivation<String, Count> a = DurableActivation.start(new Context(OLD, null), store, CODEC, new Count(0),
        (msg, ctx) -> {
          ctx.setState(new Count(ctx.state().n() + 1));
          if (msg.equals("fail")) {
            throw new IllegalStateException("before the save");
          }
        });
    assertThat(a.leave()).isEqualTo(new StoredState(0, null));
    a.onMessage("inc", null);
    assertThat(a.leave().revision()).isEqualTo(1);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> a.onMessage("fail", null));
    assertThat(a.leave()).as("a set state never saved").isNull();
    DurableActivation<String, Count> b = DurableActivation.start(new Context(OLD, null), store, CODEC, new Count(0), INC);
    assertThat(b.leave().revision()).isEqualTo(1);
    assertThat(CODEC.decode(b.leave().bytes())).isEqualTo(new Count(1));
    store.claim("counter", "c", NEW); // a newer activation elsewhere: b's next save is fenced
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> b.onMessage("inc", null))
        .isInstanceOf(StateStoreException.class).hasMessageContaining("newer than this activation's");
    assertThat(b.leave()).as("after a failed save").isNull();
  }
}

package io.atoll.runtime;

import io.atoll.core.FencingToken;
import io.atoll.core.PodId;
import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreException;
import io.atoll.core.spi.StoredState;
import java.util.Objects;

/**
 * One activation of a durable entity: the state it read under its token, the revision, and
 * whether a set state waits to be saved. Runs only on the entity's handler thread, one message at
 * a time, so its fields need no lock.
 */
final class DurableActivation<M, S> implements Entity<M>, DurableContext<S>, Carrying.Leaving {

  private final EntityContext context;
  private final StateStore store;
  private final StateCodec<S> codec;
  private final DurableEntity<M, S> behaviour;
  private S state;
  /** The revision last read or written, with its bytes: what the store holds for the entity. */
  private StoredState saved;
  private boolean unsaved;
  /** Why a save failed in this activation, which must then end; null while none has. */
  private Exception broken;

  private DurableActivation(EntityContext context, StateStore store, StateCodec<S> codec,
      DurableEntity<M, S> behaviour, S state, StoredState saved) {
    this.context = context;
    this.store = store;
    this.codec = codec;
    this.behaviour = behaviour;
    this.state = state;
    this.saved = saved;
  }

  /**
   * The factory of an activation: starts from the state the shard's previous owner carried here
   * in a hand-off, if it did; else claims the entity under the activation's token and reads its
   * state. A carried state is what the store held when the previous activation ended, and every
   * activation since the store's last claim ended before the next began (a hand-off waits for its
   * activations to end), so no claim is needed: the first save is conditional on the carried
   * revision and raises the stored token. A carried state that does not decode is dropped for the
   * store's. The previous owner is trusted with the content of what it carries, as it was with
   * every save it made.
   */
  static <M, S> DurableActivation<M, S> start(EntityContext context, StateStore store, StateCodec<S> codec,
      S initial, DurableEntity<M, S> behaviour) throws StateStoreException {
    StoredState carried = context instanceof Carrying.Arriving a ? a.takeCarried() : null;
    if (carried != null) {
      try {
        return new DurableActivation<>(context, store, codec, behaviour, decode(codec, carried, initial), carried);
      } catch (RuntimeException unreadable) {
        // The previous owner's bytes do not decode here (another codec version, say): the store's may.
      }
    }
    StoredState s = store.claim(context.entityType(), context.entityId(), context.token());
    try {
      return new DurableActivation<>(context, store, codec, behaviour, decode(codec, s, initial), s);
    } catch (RuntimeException e) {
      throw new IllegalStateException("state of " + context.entityType() + "/" + context.entityId()
          + " at revision " + s.revision() + " (" + s.bytes().length + " bytes) cannot be decoded: " + e.getMessage(), e);
    }
  }

  private static <S> S decode(StateCodec<S> codec, StoredState s, S initial) {
    return s.revision() == 0 ? initial : Objects.requireNonNull(codec.decode(s.bytes()), "the codec decoded null");
  }

  @Override
  public StoredState leave() {
    return broken != null || unsaved ? null : saved;
  }

  @Override
  public void onMessage(M message, EntityContext ignored) throws Exception {
    behaviour.onMessage(message, this);
    if (broken == null) {
      persist();
    }
    if (broken != null) {
      // The handler caught a failed save and returned: the message still fails, and the
      // activation restarts from the store.
      throw new IllegalStateException("state of " + entityType() + "/" + entityId() + " was not saved: "
          + broken.getMessage(), broken);
    }
  }

  @Override
  public S state() {
    return state;
  }

  @Override
  public void setState(S newState) {
    state = Objects.requireNonNull(newState, "state");
    unsaved = true;
  }

  @Override
  public void persist() throws StateStoreException {
    if (broken instanceof StateStoreException e) {
      throw e;
    }
    if (broken != null) {
      throw new IllegalStateException("state of " + entityType() + "/" + entityId() + ": an earlier save failed: "
          + broken.getMessage(), broken);
    }
    if (!unsaved) {
      return;
    }
    try {
      byte[] bytes = codec.encode(state);
      saved = new StoredState(store.save(entityType(), entityId(), token(), saved.revision(), bytes), bytes);
      unsaved = false;
    } catch (StateStoreException | RuntimeException e) {
      broken = e; // what is in memory is not what is stored: this activation must not go on
      throw e;
    }
  }

  @Override
  public long revision() {
    return saved.revision();
  }

  // ---- EntityContext, as the pod gave it

  @Override
  public String entityId() {
    return context.entityId();
  }

  @Override
  public String entityType() {
    return context.entityType();
  }

  @Override
  public FencingToken token() {
    return context.token();
  }

  @Override
  public PodId pod() {
    return context.pod();
  }

  @Override
  public Sharding sharding() {
    return context.sharding();
  }

  @Override
  public Reply<Object> reply() {
    return context.reply();
  }

  @Override
  public void passivate() {
    context.passivate();
  }
}

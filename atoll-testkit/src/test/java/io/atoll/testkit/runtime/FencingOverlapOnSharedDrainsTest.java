package io.atoll.testkit.runtime;

import io.atoll.runtime.EntityType;

/**
 * {@link FencingOverlapTest} with the type on the pod's shared drains: the fenced handler blocks
 * (against the declaration) on a shared drain, and the entity's next activation, a successor,
 * still waits for it on a thread of its own and runs under a newer token.
 */
class FencingOverlapOnSharedDrainsTest extends FencingOverlapTest {

  @Override
  EntityType<Msg> hosted() {
    return TYPE.withNonBlockingHandlers();
  }
}

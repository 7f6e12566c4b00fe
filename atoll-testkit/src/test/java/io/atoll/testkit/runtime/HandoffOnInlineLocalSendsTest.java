package io.atoll.testkit.runtime;

import io.atoll.testkit.junit.PodTemplate;

/**
 * {@link HandoffTest} with the counters' local sends handled on their senders' threads when they
 * can (the load comes from a pod that owns some of the shards, and some of its messages must be
 * handled on its thread): shards still move under load without a message failing, lost or
 * reordered.
 */
class HandoffOnInlineLocalSendsTest extends HandoffTest {

  @Override
  PodTemplate pods() {
    return new Counter.InlinePods();
  }

  @Override
  boolean inlineLocalSends() {
    return true;
  }
}

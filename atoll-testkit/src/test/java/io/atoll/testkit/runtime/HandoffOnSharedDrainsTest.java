package io.atoll.testkit.runtime;

import io.atoll.testkit.junit.PodTemplate;

/**
 * {@link HandoffTest} with the counters on the pods' shared drains: shards still move under load
 * without a message failing, lost or reordered.
 */
class HandoffOnSharedDrainsTest extends HandoffTest {

  @Override
  PodTemplate pods() {
    return new Counter.SharedDrainPods();
  }
}

package io.atoll.runtime.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;

/** Views for tests of the cluster room's parts that need one but none of its events. */
final class QuietViews {

  private QuietViews() {}

  /** A view of an empty config of {@code shards} shards for {@code self}, whose events go nowhere. */
  static View of(int shards, PodId self) {
    return new View(ClusterConfig.empty(shards), self, new View.Callback() {
      @Override
      public void apply(ClusterConfig config, PodId self, boolean selfActive) {}

      @Override
      public void podGone(PodId pod) {}

      @Override
      public void changed() {}

      @Override
      public void selfDeclaredGone() {}
    });
  }
}

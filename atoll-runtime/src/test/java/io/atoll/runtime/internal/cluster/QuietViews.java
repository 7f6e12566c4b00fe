package io.atoll.runtime.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.core.Ticker;

/** Views and leases for tests that need one but none of its events (the cluster room's and the host's). */
public final class QuietViews {

  private QuietViews() {}

  /** A view of an empty config of {@code shards} shards for {@code self}, whose events go nowhere. */
  public static View of(int shards, PodId self) {
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

  /** A lease of {@code view}'s pod, not yet granted, on {@code ticker}, whose events go nowhere. */
  public static Lease lease(Ticker ticker, View view) {
    return new Lease(ticker, false, view.guard(), view::self, new Lease.Callback() {
      @Override
      public void fence() {}

      @Override
      public void unfence() {}

      @Override
      public void extended() {}

      @Override
      public void fenced() {}
    });
  }
}

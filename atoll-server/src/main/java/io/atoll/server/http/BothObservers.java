package io.atoll.server.http;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.manager.ManagerObserver;

/** Tells two manager observers everything, in order. */
public record BothObservers(ManagerObserver first, ManagerObserver second) implements ManagerObserver {

  @Override
  public void configInstalled(ClusterConfig config) {
    first.configInstalled(config);
    second.configInstalled(config);
  }

  @Override
  public void leaseRenewal(PodId pod, boolean granted) {
    first.leaseRenewal(pod, granted);
    second.leaseRenewal(pod, granted);
  }

  @Override
  public void podGone(PodId pod, boolean died) {
    first.podGone(pod, died);
    second.podGone(pod, died);
  }

  @Override
  public void roundStarted() {
    first.roundStarted();
    second.roundStarted();
  }

  @Override
  public void roundFinished(int moved, boolean failed) {
    first.roundFinished(moved, failed);
    second.roundFinished(moved, failed);
  }
}

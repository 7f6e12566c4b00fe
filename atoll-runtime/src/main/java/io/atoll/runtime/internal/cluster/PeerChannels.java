package io.atoll.runtime.internal.cluster;

import io.atoll.core.PodId;
import io.grpc.ManagedChannel;

/** The gRPC channel to another pod, shared with the pod's message streams to it. */
@FunctionalInterface
public interface PeerChannels {

  /** The channel to {@code peer}, opened on first use. */
  ManagedChannel channel(PodId peer);
}

package io.atoll.runtime.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.Ticker;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The first read of the cluster's config, at a pod's start, before it has a {@link ManagerLink}:
 * the config tells the pod how many shards there are and which cluster it joins.
 */
public final class StartConfig {

  /** The deadline of one read. */
  private static final long READ_DEADLINE_MILLIS = 2000;

  private StartConfig() {}

  /**
   * Reads the current config from a manager, moving to the next one (or the leader a standby names)
   * after each failure, retrying until {@code timeout}. A channel that answered nothing for two
   * reads' deadlines is replaced by a fresh one, as renewals and registrations do
   * ({@link ManagerAddresses#reopenIfSilent}): a first connection that hangs would otherwise hold
   * every read until keepalive gives up or the start times out.
   *
   * @throws IllegalStateException naming the managers and the last error if none answered
   */
  public static ClusterConfig fetch(ManagerAddresses managers, Ticker ticker, Duration timeout,
      SignedConfigs configs) {
    long deadline = ticker.nanoTime() + timeout.toNanos();
    long backoff = 0;
    for (;;) {
      PodAddress at = managers.current();
      try {
        ConfigBytes b = managers.readyStub(ShardManagerServiceGrpc.newBlockingStub(
            Wire.reconnecting(managers.channel()))).withDeadlineAfter(READ_DEADLINE_MILLIS, TimeUnit.MILLISECONDS)
            .getAssignments(GetAssignmentsRequest.getDefaultInstance());
        managers.answered(at);
        return configs.fromManager(b);
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() == Status.Code.PERMISSION_DENIED || ticker.nanoTime() - deadline > 0) {
          throw new IllegalStateException("cannot reach the shard manager at " + managers.describe()
              + " within " + timeout.toMillis() + " ms: " + Wire.describe(e) + "; is it running (atoll manager)?", e);
        }
        // Silent for two reads' deadlines, not one: a connection that is slow to set up (a TLS
        // handshake on a busy machine) gets a second read before it is thrown away.
        managers.failedOrReopened(at, e, TimeUnit.MILLISECONDS.toNanos(2 * READ_DEADLINE_MILLIS));
      }
      backoff = ManagerLink.CONNECT_BACKOFF.nextNanos(backoff);
      LockSupport.parkNanos(backoff); // retry pacing, not synchronization
    }
  }
}

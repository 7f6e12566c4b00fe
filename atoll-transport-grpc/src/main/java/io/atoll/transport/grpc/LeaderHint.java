package io.atoll.transport.grpc;

import io.atoll.core.PodAddress;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Optional;

/**
 * "Not the leader; the leader is at X": how a standby shard manager answers a pod, and how the pod
 * reads the answer. On the wire it is UNAVAILABLE with a description for people and the leader's
 * address in the trailer {@code atoll-leader} ({@code host:port}) for the pod's manager link.
 */
public final class LeaderHint {

  /** The trailer that carries the leading manager's address. */
  public static final Metadata.Key<String> KEY = Metadata.Key.of("atoll-leader", Metadata.ASCII_STRING_MARSHALLER);

  private LeaderHint() {}

  /**
   * The refusal of a manager that does not lead.
   *
   * @param leader where the leader listens, if known
   * @param term the leader's term, or 0 if unknown
   */
  public static StatusRuntimeException notLeader(Optional<PodAddress> leader, long term) {
    Metadata trailers = new Metadata();
    leader.ifPresent(a -> trailers.put(KEY, a.toString()));
    String where = leader.map(a -> "the leader is at " + a + (term > 0 ? " (term " + term + ")" : ""))
        .orElse("no manager leads the store right now");
    return Status.UNAVAILABLE.withDescription("not the leading shard manager (a standby); " + where
        + " (expected: ask the leader)").asRuntimeException(trailers);
  }

  /** The leader named by a failed call's trailers, if it carried a well-formed one. */
  public static Optional<PodAddress> of(Throwable failure) {
    Metadata trailers = Status.trailersFromThrowable(failure);
    String value = trailers == null ? null : trailers.get(KEY);
    if (value == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(PodAddress.parse(value));
    } catch (IllegalArgumentException e) {
      return Optional.empty(); // a malformed hint is no hint
    }
  }
}

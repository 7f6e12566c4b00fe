package io.atoll.transport.grpc;

import io.atoll.core.PodAddress;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Optional;

/**
 * "Not the leader; the leader is at X": how a standby shard manager answers a pod, and how the pod
 * reads the answer. On the wire it is UNAVAILABLE with a description for people, the leader's
 * address in the trailer {@code atoll-leader} ({@code host:port}) and its term in
 * {@code atoll-leader-term} (decimal, 0 when no manager leads or the term is unknown) for the pod's
 * manager link. The term trailer is on every refusal: it tells a standby's answer (a live manager
 * that will lead or name the leader) from a manager that could not be reached at all.
 */
public final class LeaderHint {

  /** The trailer that carries the leading manager's address. */
  public static final Metadata.Key<String> KEY = Metadata.Key.of("atoll-leader", Metadata.ASCII_STRING_MARSHALLER);

  /** The trailer that carries the leading manager's term. */
  public static final Metadata.Key<String> TERM_KEY = Metadata.Key.of("atoll-leader-term",
      Metadata.ASCII_STRING_MARSHALLER);

  private LeaderHint() {}

  /**
   * A standby's refusal, as read by a pod.
   *
   * @param leader where the leader listens, if the standby named one
   * @param term the leader's term, 0 if unknown
   */
  public record Refusal(Optional<PodAddress> leader, long term) {}

  /**
   * The refusal of a manager that does not lead.
   *
   * @param leader where the leader listens, if known
   * @param term the leader's term, or 0 if unknown
   */
  public static StatusRuntimeException notLeader(Optional<PodAddress> leader, long term) {
    Metadata trailers = new Metadata();
    leader.ifPresent(a -> trailers.put(KEY, a.toString()));
    trailers.put(TERM_KEY, Long.toString(leader.isPresent() ? Math.max(0, term) : 0));
    String where = leader.map(a -> "the leader is at " + a + (term > 0 ? " (term " + term + ")" : ""))
        .orElse("no manager leads the store right now");
    return Status.UNAVAILABLE.withDescription("not the leading shard manager (a standby); " + where
        + " (expected: ask the leader)").asRuntimeException(trailers);
  }

  /**
   * The standby's refusal a failed call carries, or empty if it carries none (the manager could not
   * be reached, or answered otherwise). A malformed address or term counts as unknown.
   */
  public static Optional<Refusal> refusal(Throwable failure) {
    Metadata trailers = Status.trailersFromThrowable(failure);
    if (trailers == null || (!trailers.containsKey(TERM_KEY) && !trailers.containsKey(KEY))) {
      return Optional.empty();
    }
    long term;
    try {
      String t = trailers.get(TERM_KEY);
      term = t == null ? 0 : Math.max(0, Long.parseLong(t));
    } catch (NumberFormatException e) {
      term = 0;
    }
    return Optional.of(new Refusal(of(failure), term));
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

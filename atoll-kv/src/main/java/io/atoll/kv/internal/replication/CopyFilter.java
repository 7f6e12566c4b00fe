package io.atoll.kv.internal.replication;

import java.util.Arrays;

/**
 * Which records of the stream a replica applies while (and just after) it takes a full copy, the
 * rule {@link Feed} relies on: the copy of slot {@code s} was taken at stream offset {@code from[s]}
 * and holds every record of {@code s} before it; so a record of {@code s} is applied only once that
 * slot's copy arrived and only if it starts at or after {@code from[s]}. Once the copy is complete
 * and the stream has passed every slot's {@code from}, every record applies. Pure; one thread.
 */
final class CopyFilter {
  private final long[] from;
  private boolean complete;
  private long lastFrom;

  /** A filter for a copy of {@code slots} slots, none of them arrived yet. */
  CopyFilter(int slots) {
    from = new long[slots];
    Arrays.fill(from, -1);
  }

  /** The copy of {@code slot} arrived, taken at stream offset {@code at}. */
  void copied(int slot, long at) {
    from[slot] = at;
  }

  /** Every slot's copy arrived (the copy's end). */
  void complete() {
    complete = true;
    lastFrom = Arrays.stream(from).max().orElse(0);
  }

  /** Whether the copy is complete and the stream at {@code at} is past every slot's copy. */
  boolean over(long at) {
    return complete && at >= lastFrom;
  }

  /** Whether the record of {@code slot} starting at stream offset {@code at} is to be applied. */
  boolean applies(int slot, long at) {
    return from[slot] >= 0 && at >= from[slot];
  }
}

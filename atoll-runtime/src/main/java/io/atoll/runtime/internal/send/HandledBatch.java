package io.atoll.runtime.internal.send;

import io.atoll.runtime.internal.host.Deferred;

/**
 * Local messages of one sender's router and one shard that a shared drain handled in one turn,
 * their acknowledgements already given: what their router still has to do for them (leave the
 * in-flight count and the deadlines, resolve them at their shard's route) is done at once, under
 * one lock of each, when the drain flushes the batch. Linked through the messages; used by the
 * drain's thread only.
 */
final class HandledBatch implements Deferred {

  final Pending.Owner owner;
  final int shard;
  Pending head;
  private Pending tail;

  HandledBatch(Pending.Owner owner, int shard) {
    this.owner = owner;
    this.shard = shard;
  }

  /** Whether {@code p} may join: the same router and shard. */
  boolean takes(Pending p, int pShard) {
    return p.owner == owner && pShard == shard;
  }

  /** Adds a handled message; {@code settledHere} if the drain's acknowledgement completed it. */
  void add(Pending p, boolean settledHere) {
    p.settledInBatch = settledHere;
    p.nextHandled = null;
    if (tail == null) {
      head = p;
    } else {
      tail.nextHandled = p;
    }
    tail = p;
  }

  /** Does the bookkeeping once: a second call, e.g. after the first threw, finds nothing. */
  @Override
  public void flush() {
    Pending first = head;
    head = null;
    tail = null;
    if (first == null) {
      return;
    }
    try {
      owner.handled(shard, first);
    } finally {
      // Unlinked, so that a caller keeping one message's future keeps no other message alive.
      for (Pending p = first; p != null; ) {
        Pending n = p.nextHandled;
        p.nextHandled = null;
        p = n;
      }
    }
  }
}

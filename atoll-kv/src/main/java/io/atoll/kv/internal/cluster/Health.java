package io.atoll.kv.internal.cluster;

import io.atoll.core.PodId;

/** What the cluster bus knows about the links to other nodes, for CLUSTER NODES and INFO. */
public interface Health {
  /** Whether the bus link to {@code node} is up. */
  boolean linkUp(PodId node);

  /** When the outstanding ping to {@code node} was sent (epoch ms), 0 if none is outstanding. */
  long pingSent(PodId node);

  /** When {@code node} last answered (epoch ms), 0 if never. */
  long pongReceived(PodId node);

  /** Whether this node suspects {@code node} (PFAIL). */
  boolean suspected(PodId node);

  /** How many other nodes currently report {@code node} as failing. */
  int failureReports(PodId node);

  /** Bus messages sent and received, for CLUSTER INFO. */
  long messagesSent();

  /** Bus messages received. */
  long messagesReceived();

  /** Managed mode: no bus; every node of the manager's config counts as linked, none as failing. */
  Health MANAGED = new Health() {
    @Override public boolean linkUp(PodId node) { return true; }
    @Override public long pingSent(PodId node) { return 0; }
    @Override public long pongReceived(PodId node) { return 0; }
    @Override public boolean suspected(PodId node) { return false; }
    @Override public int failureReports(PodId node) { return 0; }
    @Override public long messagesSent() { return 0; }
    @Override public long messagesReceived() { return 0; }
  };

  /** No bus: nothing known. */
  Health NONE = new Health() {
    @Override public boolean linkUp(PodId node) { return false; }
    @Override public long pingSent(PodId node) { return 0; }
    @Override public long pongReceived(PodId node) { return 0; }
    @Override public boolean suspected(PodId node) { return false; }
    @Override public int failureReports(PodId node) { return 0; }
    @Override public long messagesSent() { return 0; }
    @Override public long messagesReceived() { return 0; }
  };
}

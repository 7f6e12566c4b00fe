package io.atoll.server.chaos;

/** The faults {@code atoll chaos --kv} injects into a managed Atoll KV cluster, one at a time. */
public enum KvFault {
  /** A node that owns slots killed with SIGKILL, started again on its data directory after 0 to 2 leases. */
  KILL_PRIMARY("kill-primary"),
  /** A node that replicates killed with SIGKILL, started again on its data directory after 0 to 1 lease. */
  KILL_REPLICA("kill-replica"),
  /** A node (primary or replica) frozen (SIGSTOP) past its lease and the manager's margin, then thawed. */
  PAUSE_NODE("pause-node"),
  /** The shard manager killed with SIGKILL and started again on its port and data after 0 to 1 lease. */
  KILL_MANAGER("kill-manager"),
  /** A node's connections to the manager black-holed or stalled (never refused) for about a lease. */
  DROP_NODE_MANAGER("drop-node-manager"),
  /** A fifth node joins; once the manager has placed it, it leaves gracefully (SIGTERM: it drains). */
  JOIN_LEAVE("join-leave");

  private final String label;

  KvFault(String label) {
    this.label = label;
  }

  /** Its name in output and in {@code --faults}, e.g. "kill-primary". */
  public String label() {
    return label;
  }
}

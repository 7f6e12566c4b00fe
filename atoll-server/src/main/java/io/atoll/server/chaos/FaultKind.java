package io.atoll.server.chaos;

/** The faults a chaos run injects, one at a time. */
public enum FaultKind {
  /** A pod killed with SIGKILL; a new pod takes its place. */
  KILL_POD("kill-pod"),
  /** A pod frozen (SIGSTOP) past its lease and the manager's margin, then thawed (SIGCONT). */
  PAUSE_POD("pause-pod"),
  /**
   * The manager killed with SIGKILL and started again on its port; on a store, the leading
   * manager, while the standby takes over (the killed one comes back as the standby).
   */
  KILL_MANAGER("kill-manager"),
  /** The manager (on a store, the leading one) frozen (SIGSTOP) past the lease, then thawed. */
  PAUSE_MANAGER("pause-manager"),
  /** A pod's connections to the manager black-holed or stalled (never refused) for about a lease. */
  DROP_POD_MANAGER("drop-pod-manager"),
  /**
   * Every connection into a pod (from the other pods, the manager and the client) black-holed or
   * stalled for about a lease.
   */
  DROP_INTO_POD("drop-into-pod"),
  /**
   * The link between two pods only black-holed or stalled for about a lease; both still reach the
   * managers, the client and the other pods.
   */
  DROP_POD_POD("drop-pod-pod"),
  /** A deposit whose handler stalls past its ask timeout, holding its account's mailbox. */
  SLOW_HANDLER("slow-handler"),
  /** The store server frozen (SIGSTOP) for about the store lease, then thawed. Needs a store. */
  PAUSE_STORE("pause-store", true),
  /** The store server killed (SIGKILL) and started again on its port and data. Needs a store. */
  RESTART_STORE("restart-store", true),
  /** A pod stopped gracefully (SIGTERM) and a new one started. */
  RESTART_POD("restart-pod"),
  /** Every pod replaced, one after the other, by a pod of a new version. */
  ROLLING_RESTART("rolling-restart");

  private final String label;
  private final boolean needsStore;

  FaultKind(String label) {
    this(label, false);
  }

  FaultKind(String label, boolean needsStore) {
    this.label = label;
    this.needsStore = needsStore;
  }

  /** Whether it can only be injected with a store server ({@code --store redis|etcd}). */
  public boolean needsStore() {
    return needsStore;
  }

  /** Its name in output, e.g. "kill-pod". */
  public String label() {
    return label;
  }
}

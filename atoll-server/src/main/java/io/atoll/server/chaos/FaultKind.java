package io.atoll.server.chaos;

/** The faults a chaos run injects, one at a time. */
public enum FaultKind {
  /** A pod killed with SIGKILL; a new pod takes its place. */
  KILL_POD("kill-pod"),
  /** A pod frozen (SIGSTOP) past its lease and the manager's margin, then thawed (SIGCONT). */
  PAUSE_POD("pause-pod"),
  /** The manager killed with SIGKILL and started again on its port. */
  KILL_MANAGER("kill-manager"),
  /** The manager frozen (SIGSTOP) past the lease, then thawed. */
  PAUSE_MANAGER("pause-manager"),
  /** A pod's connections to the manager black-holed or stalled (never refused) for about a lease. */
  DROP_POD_MANAGER("drop-pod-manager"),
  /**
   * Every connection into a pod (from the other pods, the manager and the client) black-holed or
   * stalled for about a lease.
   */
  DROP_INTO_POD("drop-into-pod"),
  /** A pod stopped gracefully (SIGTERM) and a new one started. */
  RESTART_POD("restart-pod"),
  /** Every pod replaced, one after the other, by a pod of a new version. */
  ROLLING_RESTART("rolling-restart");

  private final String label;

  FaultKind(String label) {
    this.label = label;
  }

  /** Its name in output, e.g. "kill-pod". */
  public String label() {
    return label;
  }
}

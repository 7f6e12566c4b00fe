package io.atoll.core;

/**
 * A config of another cluster: configs carry their cluster's {@link ClusterId}, and two clusters'
 * configs never merge.
 */
public final class ClusterMismatchException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final ClusterId expected;
  private final ClusterId actual;

  /**
   * @param expected the cluster the receiver belongs to
   * @param actual the cluster of what it was given
   */
  public ClusterMismatchException(ClusterId expected, ClusterId actual) {
    super("cluster id: " + describe(actual) + " (expected: " + describe(expected)
        + "; configs of two clusters never merge: is this pod pointed at the right manager and peers?)");
    this.expected = expected;
    this.actual = actual;
  }

  private static String describe(ClusterId id) {
    return id.isNone() ? "none" : id.toString();
  }

  /** The cluster the receiver belongs to. */
  public ClusterId expected() {
    return expected;
  }

  /** The cluster of what it was given. */
  public ClusterId actual() {
    return actual;
  }
}

package io.atoll.testkit.history;

/**
 * One operation of a recorded history: what a client asked, what it was answered, and when, by one
 * clock every client shares (e.g. {@link System#nanoTime()} of one JVM).
 *
 * @param input what was asked
 * @param output what was answered; meaningless if the operation is {@linkplain #pending() pending}
 * @param invoked when it was sent (before the first byte left)
 * @param returned when its answer arrived (after the last byte came); {@link #NEVER} if no answer
 *     came (a timeout, a broken connection, an error that does not say whether it took effect):
 *     then it may have taken effect at any moment after {@code invoked}, or never
 */
public record Operation<I, O>(I input, O output, long invoked, long returned) {

  /** The {@code returned} of an operation whose outcome is unknown. */
  public static final long NEVER = Long.MAX_VALUE;

  public Operation {
    if (returned < invoked) {
      throw new IllegalArgumentException("returned " + returned + " before invoked " + invoked);
    }
  }

  /** An operation whose outcome is unknown. */
  public static <I, O> Operation<I, O> pending(I input, long invoked) {
    return new Operation<>(input, null, invoked, NEVER);
  }

  /** Whether no answer came: it may have taken effect at any moment after it was sent, or never. */
  public boolean pending() {
    return returned == NEVER;
  }

  @Override
  public String toString() {
    return input + (pending() ? " -> ?" : " -> " + output) + " [" + invoked + ", "
        + (pending() ? "never" : Long.toString(returned)) + "]";
  }
}

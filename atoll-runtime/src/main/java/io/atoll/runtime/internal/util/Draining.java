package io.atoll.runtime.internal.util;

/**
 * Marks the threads that must not handle a message on the spot as they send it (inline local
 * sends, {@code EntityType.withInlineLocalSends}): threads draining an entity (a shared drain, an
 * entity's own thread, a sender already handling one), and threads running the caller's code for
 * the pod: a continuation as the pod completes a message's stage, an observer's callback. Their
 * local sends go to the pod's drains. So handlers never nest, and no handler runs inside the
 * pod's locks or on its own threads.
 *
 * <p>Nothing is marked until a pod of this JVM hosts a type with inline local sends
 * ({@link #enable}): the other pods pay no thread-local lookup.
 */
public final class Draining {

  private static final ThreadLocal<boolean[]> MARK = ThreadLocal.withInitial(() -> new boolean[1]);
  private static volatile boolean enabled;

  private Draining() {}

  /** A pod of this JVM hosts a type with inline local sends: marks are kept from now on. */
  public static void enable() {
    enabled = true;
  }

  /**
   * The calling thread's mark: element 0 is true while it must not run a handler on the spot.
   * Read and set only by that thread, each setter restoring what it found; fetched once per use,
   * as a thread-local costs a lookup.
   */
  public static boolean[] mark() {
    return MARK.get();
  }

  /**
   * Marks the calling thread, if marks are kept and it is not marked yet; returns what to pass to
   * {@link #exit} (null when nothing was marked).
   */
  public static boolean[] enter() {
    if (!enabled) {
      return null;
    }
    boolean[] m = MARK.get();
    if (m[0]) {
      return null;
    }
    m[0] = true;
    return m;
  }

  /** Undoes {@link #enter}. */
  public static void exit(boolean[] entered) {
    if (entered != null) {
      entered[0] = false;
    }
  }
}

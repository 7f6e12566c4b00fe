package io.atoll.runtime;

import java.util.ServiceLoader;

/** Finds the {@link PodProvider} once, with the class loader of this package. */
final class PodProviders {

  private PodProviders() {}

  /** Found once; a racing first call may look twice and find the same. */
  private static volatile PodProvider provider;

  /**
   * The provider on the class path.
   *
   * @throws IllegalStateException if none is (a jar merged without its {@code META-INF/services}),
   *     at every call
   */
  static PodProvider get() {
    PodProvider p = provider;
    if (p == null) {
      p = load();
      provider = p;
    }
    return p;
  }

  private static PodProvider load() {
    return ServiceLoader.load(PodProvider.class, PodProvider.class.getClassLoader()).findFirst()
        .orElseThrow(() -> new IllegalStateException("no " + PodProvider.class.getName() + " on the class path"
            + " (expected: atoll-runtime's META-INF/services/" + PodProvider.class.getName()
            + "; a merged jar must keep its service files)"));
  }
}

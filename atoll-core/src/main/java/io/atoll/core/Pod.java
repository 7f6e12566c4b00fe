package io.atoll.core;

import java.util.Objects;

/**
 * A pod as the cluster knows it: its identity and the version of the code it runs.
 *
 * @param id address and incarnation
 * @param version the code version, used by version-aware allocation
 */
public record Pod(PodId id, PodVersion version) {

  /** Validates the parts. */
  public Pod {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(version, "version");
  }

  /** Where this pod listens. */
  public PodAddress address() {
    return id.address();
  }
}

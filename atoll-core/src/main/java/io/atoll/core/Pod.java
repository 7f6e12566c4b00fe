package io.atoll.core;

import java.util.List;
import java.util.Objects;
import java.util.TreeSet;

/**
 * A pod as the cluster knows it: its identity, the version of the code it runs, the roles it
 * hosts (the shard {@link Space spaces} it may be given), and the port it serves clients on over
 * TLS, if it has one besides its address (an Atoll KV node's TLS client port).
 *
 * @param id address and incarnation
 * @param version the code version, used by version-aware allocation
 * @param roles the roles it hosts, sorted and unique, 1 to {@link #MAX_ROLES}; {@code [""]} (the
 *     default role only) for a pod that names none
 * @param tlsPort the port on the pod's host where it serves clients over TLS, 1..65535, or 0 for
 *     none
 */
public record Pod(PodId id, PodVersion version, List<String> roles, int tlsPort) {

  /** The most roles one pod may host. */
  public static final int MAX_ROLES = 16;

  /** The roles of a pod that names none: the default role only. */
  public static final List<String> DEFAULT_ROLES = List.of(Space.DEFAULT_ROLE);

  /** Validates the parts; the roles are sorted and duplicates dropped. */
  public Pod {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(roles, "roles");
    if (!roles.equals(DEFAULT_ROLES)) {
      TreeSet<String> sorted = new TreeSet<>();
      for (String r : roles) {
        sorted.add(Space.checkRole(r));
      }
      if (sorted.isEmpty() || sorted.size() > MAX_ROLES) {
        throw new IllegalArgumentException("pod " + id + ": " + sorted.size() + " roles (expected: 1.." + MAX_ROLES + ")");
      }
      roles = List.copyOf(sorted);
      if (roles.equals(DEFAULT_ROLES)) {
        roles = DEFAULT_ROLES;
      }
    } else {
      roles = DEFAULT_ROLES;
    }
    if (tlsPort < 0 || tlsPort > 65535) {
      throw new IllegalArgumentException("pod " + id + ": TLS port " + tlsPort + " (expected: 1..65535, or 0 for none)");
    }
  }

  /** A pod without a TLS client port. */
  public Pod(PodId id, PodVersion version, List<String> roles) {
    this(id, version, roles, 0);
  }

  /** A pod of the default role only, without a TLS client port. */
  public Pod(PodId id, PodVersion version) {
    this(id, version, DEFAULT_ROLES);
  }

  /** Where this pod listens. */
  public PodAddress address() {
    return id.address();
  }

  /** Whether this pod hosts {@code role}'s space. */
  public boolean hosts(String role) {
    List<String> r = roles;
    if (r.size() == 1) {
      return r.get(0).equals(role);
    }
    for (String x : r) {
      if (x.equals(role)) {
        return true;
      }
    }
    return false;
  }

  /** Whether this pod hosts the default role only. */
  public boolean hasDefaultRoles() {
    return roles == DEFAULT_ROLES;
  }
}

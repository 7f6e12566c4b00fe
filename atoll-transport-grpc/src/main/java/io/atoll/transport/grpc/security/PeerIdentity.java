package io.atoll.transport.grpc.security;

import java.util.Objects;

/**
 * Who is on the other end of a mutual-TLS connection, as its certificate says: a role and a name.
 * Immutable.
 *
 * @param role what the peer may do
 * @param name the peer's name within its role ({@code manager} for the manager)
 */
public record PeerIdentity(Role role, String name) {

  /** Validates. */
  public PeerIdentity {
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(name, "name");
  }

  /** The identity's URI, as written in its certificate. */
  @Override
  public String toString() {
    return role.uri(name);
  }
}

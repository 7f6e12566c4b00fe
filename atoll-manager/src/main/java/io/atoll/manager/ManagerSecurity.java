package io.atoll.manager;

import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import java.util.Objects;

/**
 * How a manager secures its cluster: its connections ({@link WireSecurity}: plaintext, or mutual
 * TLS with a manager certificate) and its key ({@link ConfigSigner}), which signs every config and
 * Unassign it sends and issues each pod incarnation's credential. Immutable.
 *
 * @param wire the manager's transport security
 * @param signer the manager's key; managers that may take over from each other share it
 */
public record ManagerSecurity(WireSecurity wire, ConfigSigner signer) {

  /** Validates: with TLS, the certificate must hold the manager role. */
  public ManagerSecurity {
    Objects.requireNonNull(wire, "wire");
    Objects.requireNonNull(signer, "signer");
    if (wire.isTls() && wire.self().role() != Role.MANAGER) {
      throw new IllegalArgumentException("the manager's certificate holds " + wire.self()
          + " (expected: atoll:manager)");
    }
  }

  /** Plaintext, with a key of its own made at start (configs are still signed). */
  public static ManagerSecurity plaintext() {
    return new ManagerSecurity(WireSecurity.PLAINTEXT, ConfigSigner.generate());
  }
}

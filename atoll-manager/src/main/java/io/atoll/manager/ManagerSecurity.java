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
 * @param keyInStore whether the cluster's key lives in the store: a starting manager signs with
 *     the key the state holds, and {@code signer} (a key made at start) only if it holds none,
 *     keeping that one in the state from then on; a standby that takes over thus keeps every
 *     pod's credential valid. Whoever can read the store can then sign for the cluster.
 */
public record ManagerSecurity(WireSecurity wire, ConfigSigner signer, boolean keyInStore) {

  /** Validates: with TLS, the certificate must hold the manager role. */
  public ManagerSecurity {
    Objects.requireNonNull(wire, "wire");
    Objects.requireNonNull(signer, "signer");
    if (wire.isTls() && wire.self().role() != Role.MANAGER) {
      throw new IllegalArgumentException("the manager's certificate holds " + wire.self()
          + " (expected: atoll:manager)");
    }
  }

  /** Secured by {@code wire} and the key {@code signer} (a key file the managers share). */
  public ManagerSecurity(WireSecurity wire, ConfigSigner signer) {
    this(wire, signer, false);
  }

  /** Secured by {@code wire}, with the cluster's key kept in the store (see {@link #keyInStore}). */
  public static ManagerSecurity keyInStore(WireSecurity wire) {
    return new ManagerSecurity(wire, ConfigSigner.generate(), true);
  }

  /** Plaintext, with the cluster's key kept in the store (configs are still signed). */
  public static ManagerSecurity plaintext() {
    return keyInStore(WireSecurity.PLAINTEXT);
  }

  /** The same, signing with {@code other}. */
  ManagerSecurity withSigner(ConfigSigner other) {
    return new ManagerSecurity(wire, other, keyInStore);
  }
}

package io.atoll.transport.grpc.security;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The role a certificate gives its holder in an Atoll cluster, written in the certificate as a
 * subject alternative name of type URI: {@code atoll:manager}, {@code atoll:pod:NAME} or
 * {@code atoll:admin:NAME}. Exactly one such URI makes a certificate an Atoll identity; the CA that
 * signed it (the cluster's own) is what makes the claim believable.
 */
public enum Role {
  /** The shard manager: the only identity that may assign, unassign and push configs. */
  MANAGER,
  /** A pod: sends messages and gossip to other pods, registers itself with the manager. */
  POD,
  /** An operator's tool ({@code atoll status}, {@code atoll rebalance}): reads, and asks for rounds. */
  ADMIN;

  /** The URI scheme of every role name. */
  public static final String SCHEME = "atoll:";

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final int SAN_URI = 6;

  /**
   * The URI that gives {@code name} this role ({@code name} is ignored for the manager).
   *
   * @throws IllegalArgumentException if the name is not 1..64 letters, digits, '.', '_' or '-'
   */
  public String uri(String name) {
    if (this == MANAGER) {
      return SCHEME + "manager";
    }
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("name: " + name + " (expected: 1..64 letters, digits, '.', '_' or '-')");
    }
    return SCHEME + name().toLowerCase(java.util.Locale.ROOT) + ":" + name;
  }

  /**
   * The Atoll identity a certificate carries.
   *
   * @throws IllegalArgumentException if it carries none, or more than one, naming what it found
   */
  public static PeerIdentity of(X509Certificate cert) {
    Collection<List<?>> sans;
    try {
      sans = cert.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      throw new IllegalArgumentException("unreadable subject alternative names: " + e.getMessage(), e);
    }
    PeerIdentity found = null;
    if (sans != null) {
      for (List<?> san : sans) {
        if (san.size() == 2 && Integer.valueOf(SAN_URI).equals(san.get(0)) && san.get(1) instanceof String uri
            && uri.startsWith(SCHEME)) {
          PeerIdentity id = parse(uri);
          if (found != null) {
            throw new IllegalArgumentException("two Atoll identities in one certificate: " + found + " and " + id);
          }
          found = id;
        }
      }
    }
    if (found == null) {
      throw new IllegalArgumentException("no Atoll identity in certificate " + cert.getSubjectX500Principal()
          + " (expected: a subject alternative name URI atoll:manager, atoll:pod:NAME or atoll:admin:NAME)");
    }
    return found;
  }

  /** Whether {@code cert} names an Atoll identity at all (a subject alternative name URI {@code atoll:...}). */
  static boolean holdsIdentity(X509Certificate cert) {
    try {
      Collection<List<?>> sans = cert.getSubjectAlternativeNames();
      if (sans != null) {
        for (List<?> san : sans) {
          if (san.size() == 2 && Integer.valueOf(SAN_URI).equals(san.get(0)) && san.get(1) instanceof String uri
              && uri.startsWith(SCHEME)) {
            return true;
          }
        }
      }
      return false;
    } catch (CertificateParsingException e) {
      return false;
    }
  }

  /** Parses {@code atoll:manager}, {@code atoll:pod:NAME} or {@code atoll:admin:NAME}. */
  static PeerIdentity parse(String uri) {
    if (uri.equals(SCHEME + "manager")) {
      return new PeerIdentity(MANAGER, "manager");
    }
    for (Role r : List.of(POD, ADMIN)) {
      String prefix = SCHEME + r.name().toLowerCase(java.util.Locale.ROOT) + ":";
      if (uri.startsWith(prefix) && NAME.matcher(uri.substring(prefix.length())).matches()) {
        return new PeerIdentity(r, uri.substring(prefix.length()));
      }
    }
    throw new IllegalArgumentException("not an Atoll identity: " + uri
        + " (expected: atoll:manager, atoll:pod:NAME or atoll:admin:NAME)");
  }
}

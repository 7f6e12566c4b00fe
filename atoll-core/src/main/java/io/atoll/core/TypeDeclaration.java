package io.atoll.core;

import java.util.Objects;

/**
 * What a pod says of an entity type it hosts when it registers: the role whose shard space holds
 * the type's entities, and the hasher that places its ids in that space (its behavioural
 * fingerprint, {@link HasherFingerprint}, and a printable name for messages). Two pods that host
 * one type must declare it alike: with another role or another hasher, one id could be in a shard
 * of each pod and its entity live on both.
 *
 * <p>Two declarations {@linkplain #agrees agree} when their roles are equal and their hashers'
 * fingerprints are equal; a declaration without a hasher ({@link #hasHasher} false: a pod that
 * predates fingerprints) is compared by role alone. The hasher's name is not compared: the same
 * hasher may have another class name in another build (a lambda's hidden class), and two classes
 * that place every sample id alike are one hasher to the cluster.
 *
 * @param role the type's role, {@code ""} for the default role
 * @param fingerprint the hasher's fingerprint ({@link HasherFingerprint#of}); 0 without a hasher
 * @param hasher the hasher's printable name ({@link HasherFingerprint#nameOf}), 0..255 of
 *     {@code [A-Za-z0-9._$-]}; {@code ""} when the pod declared none
 */
public record TypeDeclaration(String role, long fingerprint, String hasher) {

  /** The longest hasher name a declaration carries. */
  public static final int MAX_HASHER_NAME = 255;

  /** Validates the parts. */
  public TypeDeclaration {
    Space.checkRole(role);
    Objects.requireNonNull(hasher, "hasher");
    if (hasher.length() > MAX_HASHER_NAME) {
      throw new IllegalArgumentException("hasher name: length " + hasher.length() + " (expected: 0.."
          + MAX_HASHER_NAME + ")");
    }
    for (int i = 0; i < hasher.length(); i++) {
      if (!HasherFingerprint.printable(hasher.charAt(i))) {
        throw new IllegalArgumentException("hasher name: character U+" + String.format("%04X", (int) hasher.charAt(i))
            + " at " + i + " (expected: 0.." + MAX_HASHER_NAME + " of [A-Za-z0-9._$-])");
      }
    }
    if (hasher.isEmpty() && fingerprint != 0) {
      throw new IllegalArgumentException("hasher fingerprint " + Long.toHexString(fingerprint)
          + " without a hasher name (expected: both, or neither)");
    }
  }

  /** A declaration of {@code role} by a pod that predates hasher fingerprints. */
  public static TypeDeclaration roleOnly(String role) {
    return new TypeDeclaration(role, 0, "");
  }

  /** The declaration of a type on {@code role} placed by {@code h}. */
  public static TypeDeclaration of(String role, ShardHasher h) {
    return new TypeDeclaration(role, HasherFingerprint.of(h), HasherFingerprint.nameOf(h));
  }

  /** Whether the declaration names its hasher. */
  public boolean hasHasher() {
    return !hasher.isEmpty();
  }

  /**
   * Whether a pod declaring this and one declaring {@code other} may host the type at the same
   * time: the same role, and the same hasher fingerprint unless either declares no hasher.
   */
  public boolean agrees(TypeDeclaration other) {
    return role.equals(other.role) && (!hasHasher() || !other.hasHasher() || fingerprint == other.fingerprint);
  }

  /** "role 'worker', hasher ShardHasher.DEFAULT (fingerprint 1f2e...)", for messages. */
  @Override
  public String toString() {
    return (role.isEmpty() ? "the default role" : "role '" + role + "'")
        + (hasHasher() ? ", hasher " + hasher + " (fingerprint " + String.format("%016x", fingerprint) + ")"
            : ", no hasher declared");
  }
}

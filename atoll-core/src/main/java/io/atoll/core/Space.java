package io.atoll.core;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One shard space of a {@link ClusterConfig}: the positions {@code first .. first + count - 1},
 * placed only on pods that host its {@code role}. The entity types of one role share a space; the
 * default role ({@link #DEFAULT_ROLE}, the empty name) is the space of every type and pod that
 * names no role, so a config of one default space is the config of a cluster without roles.
 *
 * <p>Within its space an entity's shard is {@code hasher.shardOf(id, count)} ({@code 1..count});
 * in the config it is the global shard {@code first + that} (position {@code first + that - 1}),
 * so everything below the router — routes, hand-offs, fencing tokens, the wire — sees only global
 * shards, and the default space of a one-space config is today's numbering exactly.
 *
 * @param role the role whose pods host this space; {@link #DEFAULT_ROLE} for the default space
 * @param first the first position of the space, at least 0
 * @param count how many shards (positions) it has, at least 1
 */
public record Space(String role, int first, int count) {

  /** The role of every pod and entity type that names none: the empty name. */
  public static final String DEFAULT_ROLE = "";
  /** The most bytes a role's name may take. */
  public static final int MAX_ROLE_BYTES = 64;

  /** Validates the parts. */
  public Space {
    checkRole(role);
    if (first < 0) {
      throw new IllegalArgumentException("space '" + role + "': first " + first + " (expected: >= 0)");
    }
    if (count < 1 || (long) first + count > ClusterConfig.MAX_SIZE) {
      throw new IllegalArgumentException("space '" + role + "': count " + count + " (expected: 1.."
          + (ClusterConfig.MAX_SIZE - first) + ")");
    }
  }

  /**
   * Checks a role's name: the empty name (the default role), or 1 to {@link #MAX_ROLE_BYTES}
   * ASCII letters, digits, {@code '.'}, {@code '_'} or {@code '-'}.
   *
   * @return the name
   * @throws IllegalArgumentException naming the role and the expected form
   */
  public static String checkRole(String role) {
    Objects.requireNonNull(role, "role");
    if (role.getBytes(StandardCharsets.UTF_8).length > MAX_ROLE_BYTES) {
      throw new IllegalArgumentException("role: '" + role + "' is longer than " + MAX_ROLE_BYTES
          + " bytes (expected: 1.." + MAX_ROLE_BYTES + " of [A-Za-z0-9._-], or empty for the default role)");
    }
    if (role.equals("default")) {
      throw new IllegalArgumentException("role: 'default' is reserved (expected: the empty name for the default role)");
    }
    for (int i = 0; i < role.length(); i++) {
      char c = role.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '.' || c == '_' || c == '-';
      if (!ok) {
        throw new IllegalArgumentException("role: '" + role + "' has '" + c + "' at " + i
            + " (expected: 1.." + MAX_ROLE_BYTES + " of [A-Za-z0-9._-], or empty for the default role)");
      }
    }
    return role;
  }

  /** Whether position {@code position} lies in this space. */
  public boolean contains(int position) {
    return position >= first && position - first < count;
  }

  /** The global shard of this space's shard {@code local} ({@code 1..count}). */
  public int globalShard(int local) {
    return first + local;
  }

  /** A readable name: the role, or "default". */
  public String displayName() {
    return role.isEmpty() ? "default" : role;
  }
}

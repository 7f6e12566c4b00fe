package io.atoll.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The layout of a {@link ClusterConfig}'s positions in shard {@link Space spaces}: contiguous
 * ranges, one per role, in order and covering every position. Immutable and thread-safe; a
 * pod's layout is fixed for its life, so the router resolves a type's space once.
 *
 * <p>{@link #single(int)} is the layout of a cluster without roles: one default space over every
 * position. Configs of two layouts never merge (like configs of two sizes).
 */
public final class Spaces {

  /** The most spaces a layout may have. */
  public static final int MAX_SPACES = 1024;

  private final Space[] spaces;
  private final Map<String, Space> byRole;
  private final int size;

  private Spaces(Space[] spaces) {
    this.spaces = spaces;
    Map<String, Space> m = new HashMap<>(spaces.length * 2);
    int next = 0;
    for (Space s : spaces) {
      if (s.first() != next) {
        throw new IllegalArgumentException("space '" + s.role() + "': first " + s.first() + " (expected: "
            + next + ", spaces are contiguous and in order)");
      }
      if (m.put(s.role(), s) != null) {
        throw new IllegalArgumentException("space '" + s.role() + "': listed twice (expected: one space per role)");
      }
      next += s.count();
    }
    this.byRole = m;
    this.size = next;
  }

  /**
   * One default space of {@code size} positions: the layout of a cluster without roles.
   *
   * @throws IllegalArgumentException if size is not in {@code 1..ClusterConfig.MAX_SIZE}
   */
  public static Spaces single(int size) {
    ClusterConfig.checkSize(size);
    return new Spaces(new Space[] {new Space(Space.DEFAULT_ROLE, 0, size)});
  }

  /**
   * Spaces of the given roles and shard counts, in the map's order, laid out one after another.
   *
   * @throws IllegalArgumentException if there is no space, more than {@link #MAX_SPACES}, a bad
   *     role name, a count below 1, or more than {@link ClusterConfig#MAX_SIZE} positions in all
   */
  public static Spaces of(Map<String, Integer> countsByRole) {
    Objects.requireNonNull(countsByRole, "countsByRole");
    if (countsByRole.isEmpty() || countsByRole.size() > MAX_SPACES) {
      throw new IllegalArgumentException("spaces: " + countsByRole.size() + " (expected: 1.." + MAX_SPACES + ")");
    }
    List<Space> list = new ArrayList<>(countsByRole.size());
    long first = 0;
    for (Map.Entry<String, Integer> e : countsByRole.entrySet()) {
      int count = Objects.requireNonNull(e.getValue(), "count");
      if (first + Math.max(count, 0) > ClusterConfig.MAX_SIZE) {
        throw new IllegalArgumentException("spaces: more than " + ClusterConfig.MAX_SIZE
            + " shards in all (expected: <= " + ClusterConfig.MAX_SIZE + ")");
      }
      list.add(new Space(e.getKey(), (int) first, count));
      first += count;
    }
    return new Spaces(list.toArray(new Space[0]));
  }

  /**
   * Parses {@code role=count,role=count}; the role {@code default} (or an empty one) is the
   * default role. For command lines and configuration files.
   *
   * @throws IllegalArgumentException naming the part that is wrong and the expected form
   */
  public static Spaces parse(String text) {
    Objects.requireNonNull(text, "text");
    Map<String, Integer> m = new LinkedHashMap<>();
    for (String part : text.split(",", -1)) {
      int eq = part.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("spaces: '" + part + "' (expected: role=count, e.g. default=300,worker=100)");
      }
      String role = part.substring(0, eq).trim();
      role = role.equals("default") ? Space.DEFAULT_ROLE : role;
      int count;
      try {
        count = Integer.parseInt(part.substring(eq + 1).trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("spaces: '" + part + "' has no number after '=' (expected: role=count)");
      }
      if (m.put(role, count) != null) {
        throw new IllegalArgumentException("spaces: role '" + part.substring(0, eq).trim() + "' twice (expected: once)");
      }
    }
    return of(m);
  }

  /** Spaces decoded from a config, checked as {@link #of} checks. */
  static Spaces ofList(List<Space> list) {
    return new Spaces(list.toArray(new Space[0]));
  }

  /**
   * This layout with a space of {@code count} positions for {@code role} appended after the last
   * one: every existing space keeps its positions, so every existing global shard keeps its
   * number.
   *
   * @throws IllegalArgumentException if the role already has a space, is not a valid role name,
   *     the count is below 1, or the layout would exceed {@link #MAX_SPACES} spaces or
   *     {@link ClusterConfig#MAX_SIZE} positions
   */
  public Spaces append(String role, int count) {
    Objects.requireNonNull(role, "role");
    if (byRole.containsKey(role)) {
      throw new IllegalArgumentException("space '" + role + "': the layout " + this
          + " already has it (expected: a role without a space)");
    }
    Map<String, Integer> m = new LinkedHashMap<>();
    for (Space s : spaces) {
      m.put(s.role(), s.count());
    }
    m.put(role, count);
    return of(m);
  }

  /**
   * Whether this layout begins with every space of {@code prefix}, in order and with the same
   * positions: {@code prefix} grown by {@link #append} zero or more times. A layout extends
   * itself. Layouts ordered this way merge: the longer one wins (see {@link ClusterConfig#merge}).
   */
  public boolean extendsLayout(Spaces prefix) {
    Objects.requireNonNull(prefix, "prefix");
    if (prefix.spaces.length > spaces.length) {
      return false;
    }
    for (int i = 0; i < prefix.spaces.length; i++) {
      if (!prefix.spaces[i].equals(spaces[i])) {
        return false;
      }
    }
    return true;
  }

  /** The number of positions the spaces cover together. */
  public int size() {
    return size;
  }

  /** Whether this is {@link #single} of its size: one default space. */
  public boolean isSingle() {
    return spaces.length == 1 && spaces[0].role().isEmpty();
  }

  /** The spaces in position order. */
  public List<Space> list() {
    return Collections.unmodifiableList(Arrays.asList(spaces));
  }

  /** The space of {@code role}, or null if the layout has none. */
  public Space of(String role) {
    return byRole.get(role);
  }

  /**
   * The global shard ({@code 1..size}) of {@code entityId} of a type on {@code role}: the
   * hasher's shard within the role's space, shifted to the space's first position; 0 if the
   * layout has no space for the role.
   */
  public int shardOf(ShardHasher hasher, String role, String entityId) {
    Space s = byRole.get(role);
    return s == null ? 0 : s.globalShard(hasher.shardOf(entityId, s.count()));
  }

  /** The space holding {@code position}. @throws IndexOutOfBoundsException outside {@code 0..size-1} */
  public Space at(int position) {
    Objects.checkIndex(position, size);
    int lo = 0;
    int hi = spaces.length - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (spaces[mid].first() <= position) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return spaces[lo];
  }

  @Override
  public boolean equals(Object o) {
    return o == this || (o instanceof Spaces s && Arrays.equals(spaces, s.spaces));
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(spaces);
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    for (Space s : spaces) {
      b.append(b.isEmpty() ? "" : ",").append(s.displayName()).append('=').append(s.count());
    }
    return b.toString();
  }
}

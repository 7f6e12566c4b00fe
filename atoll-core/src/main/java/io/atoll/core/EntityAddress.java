package io.atoll.core;

import java.util.Objects;

/**
 * The cluster-wide name of one entity: its type and its id. At most one instance of an entity is
 * live in the cluster at any time.
 *
 * @param type the entity type name, 1..255 characters
 * @param id the entity id, 1..1024 characters
 */
public record EntityAddress(String type, String id) {

  /** The longest entity type name accepted. */
  public static final int MAX_TYPE_LENGTH = 255;
  /** The longest entity id accepted. */
  public static final int MAX_ID_LENGTH = 1024;

  /** Validates the parts. */
  public EntityAddress {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(id, "id");
    if (type.isEmpty() || type.length() > MAX_TYPE_LENGTH) {
      throw new IllegalArgumentException(
          "entity type: length " + type.length() + " (expected: 1.." + MAX_TYPE_LENGTH + ")");
    }
    if (id.isEmpty() || id.length() > MAX_ID_LENGTH) {
      throw new IllegalArgumentException(
          "entity id: length " + id.length() + " (expected: 1.." + MAX_ID_LENGTH + ")");
    }
  }

  @Override
  public String toString() {
    return type + "/" + id;
  }
}

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

  /**
   * Checks an entity type's name: 1 to {@link #MAX_TYPE_LENGTH} ASCII letters, digits, {@code '.'},
   * {@code '_'}, {@code '-'}, {@code ':'} or {@code '$'} (a Java class name fits). Pods check the
   * names they host ({@code EntityType.of}) and the manager those a pod declares, so a name that
   * reaches a log line, {@code atoll status} or a report can neither break a line nor hide text.
   *
   * @return the name
   * @throws IllegalArgumentException naming the first character out of form and its place
   */
  public static String checkTypeName(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isEmpty() || name.length() > MAX_TYPE_LENGTH) {
      throw new IllegalArgumentException(
          "entity type: length " + name.length() + " (expected: 1.." + MAX_TYPE_LENGTH + " of " + TYPE_FORM + ")");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (!inTypeForm(c)) {
        // The character is shown as a code point, never as itself: it may be a line break or a
        // control sequence.
        throw new IllegalArgumentException("entity type: character U+" + String.format("%04X", (int) c) + " at "
            + i + " (expected: 1.." + MAX_TYPE_LENGTH + " of " + TYPE_FORM + ")");
      }
    }
    return name;
  }

  /**
   * {@code name} for a log line or a message: each character outside {@code [A-Za-z0-9._:$-]} as
   * a backslash, {@code u} and four hex digits (a backslash too, so two names never print alike). A manager accepts a name
   * out of form from a pod of a version that did not check them (it declares no hasher), and
   * prints it through this.
   */
  public static String printableTypeName(String name) {
    StringBuilder b = null;
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (inTypeForm(c)) {
        if (b != null) {
          b.append(c);
        }
      } else {
        if (b == null) {
          b = new StringBuilder(name.length() + 16).append(name, 0, i);
        }
        b.append(String.format("\\u%04X", (int) c));
      }
    }
    return b == null ? name : b.toString();
  }

  private static boolean inTypeForm(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '.' || c == '_' || c == '-' || c == ':' || c == '$';
  }

  /** The form of a type name, for error messages. */
  private static final String TYPE_FORM = "[A-Za-z0-9._:$-]";

  @Override
  public String toString() {
    return type + "/" + id;
  }
}

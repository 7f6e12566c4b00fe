package io.atoll.kv.internal.command;

/** A command failed with this Redis error text (code first: {@code ERR ...}, {@code WRONGTYPE ...}). */
public final class CommandError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Common texts, exactly as Redis writes them. */
  public static final String SYNTAX = "ERR syntax error";
  /** Not an integer. */
  public static final String NOT_INTEGER = "ERR value is not an integer or out of range";
  /** Not a float. */
  public static final String NOT_FLOAT = "ERR value is not a valid float";
  /** Wrong type. */
  public static final String WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";

  /** An error with this text. */
  public CommandError(String message) {
    super(message, null, false, false);
  }
}

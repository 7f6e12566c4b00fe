package io.atoll.kv.internal.store;

import java.util.Arrays;

/** A key (or hash field): its bytes and their hash. Immutable; the array must not be changed. */
public final class Key {
  private final byte[] bytes;
  private final int hash;

  /** Wraps {@code bytes} without copying. */
  public Key(byte[] bytes) {
    this.bytes = bytes;
    this.hash = Arrays.hashCode(bytes);
  }

  /** The bytes, not copied. */
  public byte[] bytes() {
    return bytes;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Key k && k.hash == hash && Arrays.equals(k.bytes, bytes);
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public String toString() {
    return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
  }
}

package io.atoll.kv.internal.store;

import java.util.HashMap;

/**
 * One value: a string ({@code byte[]}) or a hash ({@code HashMap<Key, byte[]>}), and its expiry
 * time in epoch milliseconds (0: none). Mutable, guarded by its {@link Slot}.
 */
public final class Entry {
  /** The value: {@code byte[]} or {@code HashMap<Key, byte[]>}. */
  public Object value;
  /** Epoch milliseconds at which it expires; 0 for never. */
  public long expireAt;

  /** An entry holding {@code value}, not expiring. */
  public Entry(Object value) {
    this.value = value;
  }

  /** Whether this is a string. */
  public boolean isString() {
    return value instanceof byte[];
  }

  /** The string value; only if {@link #isString()}. */
  public byte[] string() {
    return (byte[]) value;
  }

  /** The hash value, or null if this is not a hash. */
  @SuppressWarnings("unchecked")
  public HashMap<Key, byte[]> hash() {
    return value instanceof HashMap<?, ?> h ? (HashMap<Key, byte[]>) h : null;
  }

  /** Redis' TYPE name. */
  public String typeName() {
    return isString() ? "string" : "hash";
  }

  /** An estimate of the heap bytes this value holds (key and map node excluded). */
  public long valueBytes() {
    if (value instanceof byte[] b) {
      return 16 + align(b.length) + 24;
    }
    long n = 24 + 48;
    for (var e : hash().entrySet()) {
      n += fieldBytes(e.getKey().bytes(), e.getValue());
    }
    return n;
  }

  /** The estimated bytes of one hash field. */
  public static long fieldBytes(byte[] field, byte[] value) {
    return 32 + 24 + 16 + align(field.length) + 16 + align(value.length) + 8;
  }

  static long align(int n) {
    return (n + 7L) & ~7L;
  }
}

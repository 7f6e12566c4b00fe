package io.atoll.kv.internal.command;

import io.atoll.kv.internal.store.Entry;
import io.atoll.kv.internal.store.Key;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Map;

/**
 * Redis' digest of one value (its {@code DEBUG DIGEST-VALUE}): SHA-1s mixed as Redis mixes them,
 * so nodes holding the same value give the same 40 hex digits, Atoll's and Redis' alike. The
 * type goes in first (Redis' type codes, big-endian: 0 for a string, 4 for a hash); a hash's
 * fields are mixed each on its own and combined by XOR, so their order does not matter; an expiry
 * adds a fixed mark (not its time).
 */
final class ValueDigest {
  private static final int STRING = 0;
  private static final int HASH = 4;
  private static final byte[] EXPIRE = "!!expire!!".getBytes(StandardCharsets.US_ASCII);

  private ValueDigest() {}

  /** The 20-byte digest of {@code e}. */
  static byte[] of(Entry e) {
    byte[] digest = new byte[20];
    int type = e.isString() ? STRING : HASH;
    mix(digest, new byte[] {(byte) (type >>> 24), (byte) (type >>> 16), (byte) (type >>> 8), (byte) type});
    if (e.isString()) {
      mix(digest, e.string());
    } else {
      for (Map.Entry<Key, byte[]> f : e.hash().entrySet()) {
        byte[] element = new byte[20];
        mix(element, f.getKey().bytes());
        mix(element, f.getValue());
        xor(digest, element);
      }
    }
    if (e.expireAt != 0) {
      xor(digest, EXPIRE);
    }
    return digest;
  }

  /** Redis' xorDigest: {@code digest ^= SHA1(bytes)}. */
  private static void xor(byte[] digest, byte[] bytes) {
    byte[] h = sha1().digest(bytes);
    for (int i = 0; i < 20; i++) {
      digest[i] ^= h[i];
    }
  }

  /** Redis' mixDigest: xorDigest, then {@code digest = SHA1(digest)}. */
  private static void mix(byte[] digest, byte[] bytes) {
    xor(digest, bytes);
    byte[] h = sha1().digest(digest);
    System.arraycopy(h, 0, digest, 0, 20);
  }

  private static MessageDigest sha1() {
    try {
      return MessageDigest.getInstance("SHA-1");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is part of every Java runtime", e);
    }
  }
}

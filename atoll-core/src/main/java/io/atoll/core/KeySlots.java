package io.atoll.core;

import java.nio.charset.StandardCharsets;

/**
 * Redis Cluster's key to hash-slot mapping: {@code CRC16-XMODEM(key or its {hash tag}) & 16383}.
 *
 * <p>The hash-tag rule: if the key contains a {@code '{'} and, after it, a {@code '}'} with at
 * least one byte between them, only the bytes between the first {@code '{'} and the first
 * following {@code '}'} are hashed. So {@code foo{}{bar}} hashes the whole key and
 * {@code foo{{bar}}zap} hashes {@code {bar}. Pure and thread-safe.
 */
public final class KeySlots {

  /** The number of hash slots of a Redis cluster. */
  public static final int SLOT_COUNT = 16384;

  private static final int[] TABLE = new int[256];

  static {
    // CRC16/XMODEM: polynomial 0x1021, initial value 0, no reflection, no final xor.
    for (int i = 0; i < 256; i++) {
      int crc = i << 8;
      for (int bit = 0; bit < 8; bit++) {
        crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
      }
      TABLE[i] = crc & 0xFFFF;
    }
  }

  private KeySlots() {}

  /** CRC16/XMODEM of {@code data[offset, offset+length)}, as an int in {@code 0..65535}. */
  public static int crc16(byte[] data, int offset, int length) {
    int crc = 0;
    for (int i = offset, end = offset + length; i < end; i++) {
      crc = ((crc << 8) ^ TABLE[((crc >>> 8) ^ data[i]) & 0xFF]) & 0xFFFF;
    }
    return crc;
  }

  /** The slot of a key given as bytes, honouring hash tags. */
  public static int slotOf(byte[] key) {
    return slotOf(key, 0, key.length);
  }

  /** The slot of {@code key[offset, offset+length)}, honouring hash tags. */
  public static int slotOf(byte[] key, int offset, int length) {
    int end = offset + length;
    for (int open = offset; open < end; open++) {
      if (key[open] == '{') {
        for (int close = open + 1; close < end; close++) {
          if (key[close] == '}') {
            if (close > open + 1) {
              return crc16(key, open + 1, close - open - 1) & (SLOT_COUNT - 1);
            }
            break; // "{}": the whole key is hashed
          }
        }
        break; // only the first '{' counts
      }
    }
    return crc16(key, offset, length) & (SLOT_COUNT - 1);
  }

  /** The slot of a key given as a string, encoded as UTF-8 the way Redis clients send it. */
  public static int slotOf(String key) {
    return slotOf(key.getBytes(StandardCharsets.UTF_8));
  }
}

package io.atoll.core.slots;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Redis Cluster's key to hash-slot mapping: {@code CRC16-XMODEM(key or its {hash tag}) & 16383}.
 *
 * <p>The hash-tag rule: if the key contains a {@code '{'} and, after it, a {@code '}'} with at
 * least one byte between them, only the bytes between the first {@code '{'} and the first
 * following {@code '}'} are hashed. So {@code foo{}{bar}} hashes the whole key and
 * {@code foo{{bar}}zap} hashes {@code {bar}. Pure and thread-safe.
 *
 * <p><b>Speed.</b> This is on the path of every Redis command, so it reads whole words. The
 * brace scan tests eight bytes at once with a SWAR zero-byte test (the word XOR the brace in
 * every byte has a zero byte where the brace is). The CRC is "slicing by 16": CRC16 is linear
 * and, having no reflection and a 16-bit register, the register is fully shifted out after two
 * bytes, so the CRC after sixteen more bytes {@code b0..b15} from register {@code r} is
 * {@code T15[b0 ^ r>>8] ^ T14[b1 ^ r&0xFF] ^ T13[b2] ^ ... ^ T0[b15]}, where {@code Tk[x]} is the
 * CRC of byte {@code x} followed by {@code k} zero bytes. The lookups are independent of each
 * other, so sixteen bytes cost one dependent step instead of sixteen; the rest of a key is taken
 * 8, 4, 2 and 1 bytes at a time the same way.
 */
public final class KeySlots {

  /** The number of hash slots of a Redis cluster. */
  public static final int SLOT_COUNT = 16384;

  private static final int SLOT_MASK = SLOT_COUNT - 1;

  /**
   * The sixteen slicing tables, flat: {@code TABLES[k << 8 | x]} is the CRC16/XMODEM of byte
   * {@code x} followed by {@code k} zero bytes. {@code k = 0} is the classic byte-wise table.
   * Sixteen-bit entries, so all of them take 8 KiB.
   */
  private static final char[] TABLES = new char[16 * 256];

  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT_BE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

  private static final long ONES = 0x0101_0101_0101_0101L;
  private static final long LOW_SEVENS = 0x7F7F_7F7F_7F7F_7F7FL;
  private static final long OPEN_BRACES = '{' * ONES;
  private static final long CLOSE_BRACES = '}' * ONES;

  static {
    // CRC16/XMODEM: polynomial 0x1021, initial value 0, no reflection, no final xor.
    for (int i = 0; i < 256; i++) {
      int crc = i << 8;
      for (int bit = 0; bit < 8; bit++) {
        crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
      }
      TABLES[i] = (char) crc;
    }
    // One more zero byte through the register: T[k][x] = (T[k-1][x] << 8) ^ T[0][T[k-1][x] >> 8].
    for (int k = 1; k < 16; k++) {
      for (int i = 0; i < 256; i++) {
        int prev = TABLES[(k - 1) << 8 | i];
        TABLES[k << 8 | i] = (char) ((prev << 8) ^ TABLES[prev >>> 8]);
      }
    }
  }

  private KeySlots() {}

  /**
   * CRC16/XMODEM of {@code data[offset, offset+length)}, as an int in {@code 0..65535}.
   *
   * @throws IndexOutOfBoundsException if the range is not within {@code data}, naming it
   */
  public static int crc16(byte[] data, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, data.length);
    return crc16Sliced(data, offset, offset + length);
  }

  /** Slicing-by-16 CRC of {@code data[from, end)}; the range must be valid. */
  private static int crc16Sliced(byte[] data, int from, int end) {
    int crc = 0;
    int i = from;
    for (; end - i >= 16; i += 16) {
      crc = step16(crc, (long) LONG_BE.get(data, i), (long) LONG_BE.get(data, i + 8));
    }
    if (end - i >= 8) {
      crc = step8(crc, (long) LONG_BE.get(data, i));
      i += 8;
    }
    return tail(crc, data, i, end);
  }

  /** The CRC register {@code crc} carried on over the sixteen bytes of {@code hi, lo}, big-endian. */
  private static int step16(int crc, long hi, long lo) {
    final char[] t = TABLES;
    long w = hi ^ ((long) crc << 48);
    return t[0xF00 | (int) (w >>> 56)]
        ^ t[0xE00 | ((int) (w >>> 48) & 0xFF)]
        ^ t[0xD00 | ((int) (w >>> 40) & 0xFF)]
        ^ t[0xC00 | ((int) (w >>> 32) & 0xFF)]
        ^ t[0xB00 | ((int) (w >>> 24) & 0xFF)]
        ^ t[0xA00 | ((int) (w >>> 16) & 0xFF)]
        ^ t[0x900 | ((int) (w >>> 8) & 0xFF)]
        ^ t[0x800 | ((int) w & 0xFF)]
        ^ t[0x700 | (int) (lo >>> 56)]
        ^ t[0x600 | ((int) (lo >>> 48) & 0xFF)]
        ^ t[0x500 | ((int) (lo >>> 40) & 0xFF)]
        ^ t[0x400 | ((int) (lo >>> 32) & 0xFF)]
        ^ t[0x300 | ((int) (lo >>> 24) & 0xFF)]
        ^ t[0x200 | ((int) (lo >>> 16) & 0xFF)]
        ^ t[0x100 | ((int) (lo >>> 8) & 0xFF)]
        ^ t[(int) lo & 0xFF];
  }

  /** The CRC register {@code crc} carried on over the eight bytes of {@code word}, big-endian. */
  private static int step8(int crc, long word) {
    final char[] t = TABLES;
    long w = word ^ ((long) crc << 48);
    return t[0x700 | (int) (w >>> 56)]
        ^ t[0x600 | ((int) (w >>> 48) & 0xFF)]
        ^ t[0x500 | ((int) (w >>> 40) & 0xFF)]
        ^ t[0x400 | ((int) (w >>> 32) & 0xFF)]
        ^ t[0x300 | ((int) (w >>> 24) & 0xFF)]
        ^ t[0x200 | ((int) (w >>> 16) & 0xFF)]
        ^ t[0x100 | ((int) (w >>> 8) & 0xFF)]
        ^ t[(int) w & 0xFF];
  }

  /** The CRC register {@code crc} carried on over the fewer than 8 bytes {@code data[i, end)}. */
  private static int tail(int crc, byte[] data, int i, int end) {
    final char[] t = TABLES;
    if (end - i >= 4) {
      int w = (int) INT_BE.get(data, i) ^ (crc << 16);
      crc = t[0x300 | (w >>> 24)]
          ^ t[0x200 | ((w >>> 16) & 0xFF)]
          ^ t[0x100 | ((w >>> 8) & 0xFF)]
          ^ t[w & 0xFF];
      i += 4;
    }
    if (end - i >= 2) {
      crc = t[0x100 | (((crc >>> 8) ^ data[i]) & 0xFF)] ^ t[((crc ^ data[i + 1]) & 0xFF)];
      i += 2;
    }
    if (i < end) {
      crc = ((crc << 8) ^ t[((crc >>> 8) ^ data[i]) & 0xFF]) & 0xFFFF;
    }
    return crc;
  }

  /** The slot of a key given as bytes, honouring hash tags. */
  public static int slotOf(byte[] key) {
    return slotOfRange(key, 0, key.length);
  }

  /**
   * The slot of {@code key[offset, offset+length)}, honouring hash tags.
   *
   * @throws IndexOutOfBoundsException if the range is not within {@code key}, naming it
   */
  public static int slotOf(byte[] key, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, key.length);
    return slotOfRange(key, offset, offset + length);
  }

  /** The slot of {@code key[from, end)}; the range must be valid. */
  private static int slotOfRange(byte[] key, int from, int end) {
    int open = indexOf(key, from, end, OPEN_BRACES, (byte) '{');
    if (open >= 0) {
      int close = indexOf(key, open + 1, end, CLOSE_BRACES, (byte) '}');
      if (close > open + 1) {
        return crc16Sliced(key, open + 1, close) & SLOT_MASK;
      }
      // No '}' after the first '{', or "{}": the whole key is hashed.
    }
    return crc16Sliced(key, from, end) & SLOT_MASK;
  }

  /**
   * 0x80 in each byte of {@code v} that is zero, 0 in the others. Exact byte by byte: adding 0x7F
   * to the low seven bits of a byte cannot carry into the next one.
   */
  private static long zeroBytes(long v) {
    return ~(((v & LOW_SEVENS) + LOW_SEVENS) | v | LOW_SEVENS);
  }

  /**
   * The index of the first {@code b} in {@code a[from, end)}, or -1; {@code pattern} is {@code b}
   * in every byte of a long. Words are read little-endian, so the lowest flagged byte is the first.
   */
  private static int indexOf(byte[] a, int from, int end, long pattern, byte b) {
    int i = from;
    for (; end - i >= 8; i += 8) {
      long found = zeroBytes((long) LONG_LE.get(a, i) ^ pattern);
      if (found != 0) {
        return i + (Long.numberOfTrailingZeros(found) >>> 3);
      }
    }
    for (; i < end; i++) {
      if (a[i] == b) {
        return i;
      }
    }
    return -1;
  }

  /** The slot of a key given as a string, encoded as UTF-8 the way Redis clients send it. */
  public static int slotOf(String key) {
    return slotOf(key.getBytes(StandardCharsets.UTF_8));
  }
}

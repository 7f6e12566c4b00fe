package io.atoll.kv.internal.persist;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * Records as the log holds them: each a RESP array of bulk strings, as Redis' AOF has them,
 * followed by a comment line {@code #c:<crc32c of the record, 8 hex digits>\r\n} that Redis' own
 * loaders skip (a line starting with {@code #}). The checksum lets a reader tell a record cut short
 * by a crash (the tail of the last file) from one whose bytes changed on disk. A growable byte
 * array; not thread-safe.
 */
public final class LogBuffer {
  static final byte[] CHECKSUM_PREFIX = "#c:".getBytes(StandardCharsets.US_ASCII);
  /** {@code #c:} + 8 hex digits + CRLF. */
  static final int CHECKSUM_LINE = 13;
  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  private byte[] bytes;
  private int length;
  private final CRC32C crc = new CRC32C();

  /** An empty buffer of {@code capacity} bytes to start with. */
  public LogBuffer(int capacity) {
    bytes = new byte[capacity];
  }

  /** Appends one record of {@code args} with its checksum line. */
  public void record(byte[]... args) {
    int start = length;
    header('*', args.length);
    for (byte[] a : args) {
      header('$', a.length);
      put(a, 0, a.length);
      crlf();
    }
    crc.reset();
    crc.update(bytes, start, length - start);
    checksum((int) crc.getValue());
  }

  private void checksum(int value) {
    ensure(CHECKSUM_LINE);
    System.arraycopy(CHECKSUM_PREFIX, 0, bytes, length, 3);
    length += 3;
    for (int shift = 28; shift >= 0; shift -= 4) {
      bytes[length++] = HEX[(value >>> shift) & 0xf];
    }
    crlf();
  }

  private void header(char type, int n) {
    ensure(13);
    bytes[length++] = (byte) type;
    byte[] digits = Integer.toString(n).getBytes(StandardCharsets.US_ASCII);
    put(digits, 0, digits.length);
    crlf();
  }

  private void crlf() {
    ensure(2);
    bytes[length++] = '\r';
    bytes[length++] = '\n';
  }

  private void put(byte[] b, int off, int n) {
    ensure(n);
    System.arraycopy(b, off, bytes, length, n);
    length += n;
  }

  private void ensure(int n) {
    if (length + n > bytes.length) {
      byte[] bigger = new byte[Math.max(bytes.length * 2, length + n)];
      System.arraycopy(bytes, 0, bigger, 0, length);
      bytes = bigger;
    }
  }

  /** Appends {@code other}'s bytes as they are. */
  public void appendRaw(LogBuffer other) {
    put(other.bytes, 0, other.length);
  }

  /** The bytes held. */
  public int length() {
    return length;
  }

  /** The bytes so far, as a buffer to write (valid until the next change). */
  public ByteBuffer view() {
    return ByteBuffer.wrap(bytes, 0, length);
  }

  /** Empties the buffer. */
  public void clear() {
    length = 0;
    if (bytes.length > 4 << 20) {
      bytes = new byte[64 << 10]; // one burst does not pin its size for good
    }
  }

  /** Parses 8 lowercase hex digits at {@code off}; -1 if they are not. */
  static long hex8(byte[] b, int off) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      int c = b[off + i];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) {
        return -1;
      }
      v = (v << 4) | d;
    }
    return v;
  }
}

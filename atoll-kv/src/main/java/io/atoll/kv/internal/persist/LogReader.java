package io.atoll.kv.internal.persist;

import java.io.IOException;
import java.io.InputStream;
import java.util.zip.CRC32C;

/**
 * Reads the records of one log file (see {@link LogBuffer}) in order, telling a clean end, a tail
 * cut short (the file ends inside a record or its checksum line: what a crash leaves) and
 * corruption (anything else that is not a well-formed record with its checksum) apart, with the
 * byte offset of each. Lines starting with {@code #} between records (Redis' timestamp
 * annotations) are skipped. Never returns a record whose bytes do not match its checksum.
 */
public final class LogReader {
  /** The most bytes one argument may have (a Java array's; the file's length bounds it first). */
  static final long MAX_BULK = Integer.MAX_VALUE - 64;
  /** The most arguments one record may have. */
  static final long MAX_ARGS = 1L << 28;

  /** What reading the next record gave. */
  public sealed interface Next {
  }

  /** A record: its arguments, the offset of its first byte, and the offset just past its checksum line. */
  public record Record(byte[][] args, long start, long end) implements Next {
  }

  /** The file ended cleanly after the previous record. */
  public record End(long offset) implements Next {
  }

  /** The file ends inside a record that starts at {@code validUpTo}: cut it there. */
  public record Truncated(long validUpTo, String what) implements Next {
  }

  /** The bytes at {@code offset} are not a well-formed record (the record began at {@code recordStart}). */
  public record Corrupt(long offset, long recordStart, String what) implements Next {
  }

  /** Thrown inside the reader when the stream ends. */
  private static final class Eof extends Exception {
    Eof() {
      super(null, null, false, false);
    }
  }

  /** Thrown inside the reader on a malformed byte. */
  private static final class Bad extends Exception {
    final long at;

    Bad(long at, String what) {
      super(what, null, false, false);
      this.at = at;
    }
  }

  private final InputStream in;
  private final long end;
  private final long maxBulk;
  private final CRC32C crc = new CRC32C();
  private final byte[] one = new byte[1];
  private long position;
  private boolean crcOn;

  /**
   * Reads {@code in} (buffer it), whose first byte is at offset {@code start} of a file of {@code end}
   * bytes: a length that reaches past the end is read as the end, not allocated.
   */
  LogReader(InputStream in, long start, long end) {
    this(in, start, end, MAX_BULK);
  }

  /**
   * Reads a stream with no end but its own (a replication link), whose first byte is at offset
   * {@code start}; an argument longer than {@code maxBulk} bytes is corruption.
   */
  public static LogReader stream(InputStream in, long start, int maxBulk) {
    return new LogReader(in, start, Long.MAX_VALUE, maxBulk);
  }

  private LogReader(InputStream in, long start, long end, long maxBulk) {
    this.in = in;
    this.position = start;
    this.end = end;
    this.maxBulk = maxBulk;
  }

  /** The next record, or how the file ends. */
  public Next next() throws IOException {
    long start = position;
    try {
      int first;
      while (true) {
        first = readOrEnd();
        if (first == -1) {
          return new End(start);
        }
        if (first != '#') {
          break;
        }
        skipLine(); // a comment line between records
        start = position;
      }
      crc.reset();
      crcOn = true;
      crc.update(first);
      if (first != '*') {
        throw new Bad(position - 1, "expected '*' (a record), found " + describe(first));
      }
      long argc = number(MAX_ARGS);
      if (argc < 1) {
        throw new Bad(position, "a record of no arguments");
      }
      if (argc * 6 > end - position) { // each argument takes at least "$0\r\n\r\n"
        throw new Eof();
      }
      java.util.ArrayList<byte[]> list = new java.util.ArrayList<>((int) Math.min(argc, 1024)); // grown as read
      for (int i = 0; i < argc; i++) {
        int b = read();
        if (b != '$') {
          throw new Bad(position - 1, "expected '$' (argument " + (i + 1) + " of " + argc + "), found " + describe(b));
        }
        long len = number(maxBulk);
        if (len > end - position) {
          throw new Eof();
        }
        byte[] a = new byte[(int) len];
        readFully(a);
        list.add(a);
        expect('\r');
        expect('\n');
      }
      crcOn = false;
      byte[][] args = list.toArray(new byte[0][]);
      long sum = crc.getValue();
      long lineAt = position;
      byte[] line = new byte[LogBuffer.CHECKSUM_LINE];
      readFully(line);
      for (int i = 0; i < 3; i++) {
        if (line[i] != LogBuffer.CHECKSUM_PREFIX[i]) {
          throw new Bad(lineAt, "expected the record's checksum line '#c:...'");
        }
      }
      long stored = LogBuffer.hex8(line, 3);
      if (stored < 0 || line[11] != '\r' || line[12] != '\n') {
        throw new Bad(lineAt, "a malformed checksum line");
      }
      if (stored != sum) {
        throw new Bad(start, "the record's checksum does not match its bytes (" + String.format("%08x", sum)
            + " computed, " + String.format("%08x", stored) + " stored)");
      }
      return new Record(args, start, position);
    } catch (Eof e) {
      return new Truncated(start, "the file ends inside the record that starts there");
    } catch (Bad e) {
      return new Corrupt(e.at, start, e.getMessage());
    }
  }

  private long number(long max) throws IOException, Eof, Bad {
    long v = 0;
    int digits = 0;
    while (true) {
      int b = read();
      if (b == '\r') {
        expect('\n');
        if (digits == 0) {
          throw new Bad(position - 2, "a length without digits");
        }
        return v;
      }
      if (b < '0' || b > '9' || ++digits > 12) {
        throw new Bad(position - 1, "expected a digit of a length, found " + describe(b));
      }
      v = v * 10 + (b - '0');
      if (v > max) {
        throw new Bad(position - 1, "a length above " + max);
      }
    }
  }

  private void expect(int c) throws IOException, Eof, Bad {
    int b = read();
    if (b != c) {
      throw new Bad(position - 1, "expected " + describe(c) + ", found " + describe(b));
    }
  }

  private void skipLine() throws IOException, Eof {
    int b;
    do {
      b = read();
    } while (b != '\n');
  }

  private int readOrEnd() throws IOException {
    if (position >= end) {
      return -1; // the file's length when it was opened: what a writer adds later is not read
    }
    int n = in.read(one, 0, 1);
    if (n <= 0) {
      return -1;
    }
    position++;
    return one[0] & 0xff;
  }

  private int read() throws IOException, Eof {
    int b = readOrEnd();
    if (b == -1) {
      throw new Eof();
    }
    if (crcOn) {
      crc.update(b);
    }
    return b;
  }

  private void readFully(byte[] a) throws IOException, Eof {
    int off = 0;
    while (off < a.length) {
      int n = in.read(a, off, a.length - off);
      if (n <= 0) {
        throw new Eof();
      }
      off += n;
    }
    position += a.length;
    if (crcOn) {
      crc.update(a, 0, a.length);
    }
  }

  private static String describe(int b) {
    return b >= 0x20 && b < 0x7f ? "'" + (char) b + "'" : String.format("byte 0x%02x", b);
  }
}

package io.atoll.kv.internal.resp;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Writes replies into one buffer in the connection's protocol: RESP2, or RESP3 after
 * {@code HELLO 3} (null, maps, sets and doubles have their own types there; in RESP2 a map is a
 * flat array and a double a bulk string). Not thread-safe: one per connection, on its event loop.
 */
public final class Reply {

  private static final byte[] CRLF = {'\r', '\n'};
  private static final byte[] OK = "+OK\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL_BULK = "$-1\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL_ARRAY = "*-1\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL3 = "_\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[][] SMALL_INTS = new byte[1024][];

  static {
    for (int i = 0; i < SMALL_INTS.length; i++) {
      SMALL_INTS[i] = (":" + i + "\r\n").getBytes(StandardCharsets.US_ASCII);
    }
  }

  private ByteBuf out;
  private int protocol = 2;
  private int errors;

  /** The buffer replies go to; replaced by the connection before each batch. */
  public void target(ByteBuf buffer) {
    this.out = buffer;
  }

  /** The buffer replies go to. */
  public ByteBuf buffer() {
    return out;
  }

  /** 2 or 3. */
  public int protocol() {
    return protocol;
  }

  /** Switches the protocol (HELLO). */
  public void protocol(int version) {
    this.protocol = version;
  }

  /** How many error replies were written so far. */
  public int errorCount() {
    return errors;
  }

  /** {@code +OK}. */
  public void ok() {
    out.writeBytes(OK);
  }

  /** A simple string; must not contain CR or LF. */
  public void simple(String s) {
    out.writeByte('+');
    out.writeCharSequence(s, StandardCharsets.UTF_8);
    out.writeBytes(CRLF);
  }

  /** An error; {@code message} starts with its code ({@code ERR ...}, {@code MOVED ...}). */
  public void error(String message) {
    errors++;
    out.writeByte('-');
    out.writeCharSequence(message.replace('\r', ' ').replace('\n', ' '), StandardCharsets.UTF_8);
    out.writeBytes(CRLF);
  }

  /** An integer. */
  public void integer(long v) {
    if (v >= 0 && v < SMALL_INTS.length) {
      out.writeBytes(SMALL_INTS[(int) v]);
      return;
    }
    out.writeByte(':');
    writeDecimal(v);
    out.writeBytes(CRLF);
  }

  /** A bulk string, or null. */
  public void bulk(byte[] b) {
    if (b == null) {
      nil();
      return;
    }
    out.writeByte('$');
    writeDecimal(b.length);
    out.writeBytes(CRLF);
    out.writeBytes(b);
    out.writeBytes(CRLF);
  }

  /** A bulk string of UTF-8 text, or null. */
  public void bulk(String s) {
    bulk(s == null ? null : s.getBytes(StandardCharsets.UTF_8));
  }

  /** The null bulk string (RESP2) or null (RESP3). */
  public void nil() {
    out.writeBytes(protocol == 3 ? NULL3 : NULL_BULK);
  }

  /** The null array (RESP2) or null (RESP3). */
  public void nilArray() {
    out.writeBytes(protocol == 3 ? NULL3 : NULL_ARRAY);
  }

  /** The header of an array of {@code n} elements. */
  public void array(int n) {
    header('*', n);
  }

  /** The header of a map of {@code n} pairs (a flat array of 2n elements in RESP2). */
  public void map(int n) {
    if (protocol == 3) {
      header('%', n);
    } else {
      header('*', 2 * n);
    }
  }

  /** The header of a set of {@code n} elements (an array in RESP2). */
  public void set(int n) {
    header(protocol == 3 ? '~' : '*', n);
  }

  /** A double (a bulk string in RESP2), formatted as Redis does for INCRBYFLOAT. */
  public void dbl(double d) {
    String s = Numbers.format(d);
    if (protocol == 3) {
      out.writeByte(',');
      out.writeCharSequence(s, StandardCharsets.US_ASCII);
      out.writeBytes(CRLF);
    } else {
      bulk(s);
    }
  }

  /** An array of bulk strings. */
  public void bulks(java.util.List<byte[]> items) {
    array(items.size());
    for (byte[] b : items) {
      bulk(b);
    }
  }

  private void header(char type, int n) {
    out.writeByte(type);
    writeDecimal(n);
    out.writeBytes(CRLF);
  }

  private void writeDecimal(long v) {
    if (v >= 0 && v < 10) {
      out.writeByte('0' + (int) v);
      return;
    }
    out.writeCharSequence(Long.toString(v), StandardCharsets.US_ASCII);
  }
}

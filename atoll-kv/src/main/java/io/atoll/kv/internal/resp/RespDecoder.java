package io.atoll.kv.internal.resp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Decodes client requests (RESP arrays of bulk strings, or inline commands) into {@code byte[][]}
 * argument vectors, the way Redis' {@code processMultibulkBuffer} and {@code processInlineBuffer}
 * read them, with the same protocol error texts.
 *
 * <p>Bounded: every length is checked against {@link RespLimits} before a byte of its payload is
 * buffered, and a length line without its CRLF is refused once it is longer than the inline limit.
 * On malformed input the decoder emits one {@link ProtocolError} and then ignores everything else
 * on the connection; the handler replies with it and closes that connection only.
 *
 * <p>One instance per channel; not thread-safe (Netty calls it from the channel's event loop).
 */
public final class RespDecoder extends ByteToMessageDecoder {

  /** A malformed request: reply {@link #message()} as an error, then close the connection. */
  public record ProtocolError(String message) {}

  private static final byte[][] NO_ARGS = new byte[0][];

  /** Redis' caps on a client that has not authenticated yet: 10 arguments, 16 KiB each. */
  static final int UNAUTHENTICATED_ARRAY = 10;
  static final int UNAUTHENTICATED_BULK = 16 << 10;

  private final RespLimits limits;
  private boolean unauthenticated;
  private boolean broken;
  // The request being read: its declared length, the arguments read so far, their bytes.
  private int expected = -1;
  private byte[][] args = NO_ARGS;
  private int count;
  private long requestBytes;
  private int bulkLength = -1;

  /** A decoder with these limits. */
  public RespDecoder(RespLimits limits) {
    this.limits = limits;
  }

  /**
   * Whether the client has yet to authenticate: then requests are capped as Redis caps them (10
   * arguments of up to 16 KiB), so that a client without the password cannot make the node
   * buffer much.
   */
  public void unauthenticated(boolean u) {
    unauthenticated = u;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (broken) {
      in.skipBytes(in.readableBytes());
      return;
    }
    try {
      while (in.isReadable()) {
        if (expected < 0) {
          if (in.getByte(in.readerIndex()) == '*') {
            if (!readArrayHeader(in)) {
              return;
            }
            if (expected == 0) { // "*0" or a negative count: Redis skips it
              expected = -1;
              continue;
            }
          } else {
            if (!readInline(in, out)) {
              return;
            }
            continue;
          }
        }
        if (!readArguments(in)) {
          return;
        }
        out.add(count == args.length ? args : Arrays.copyOf(args, count));
        expected = -1;
        args = NO_ARGS;
        count = 0;
        requestBytes = 0;
      }
    } catch (MalformedRequest e) {
      broken = true;
      in.skipBytes(in.readableBytes());
      out.add(new ProtocolError(e.getMessage()));
    }
  }

  private boolean readArrayHeader(ByteBuf in) {
    int eol = lineEnd(in, "Protocol error: too big mbulk count string");
    if (eol < 0) {
      return false;
    }
    long n = parseNumber(in, in.readerIndex() + 1, eol);
    if (n == Long.MIN_VALUE || n > limits.maxArrayLength()) {
      throw new MalformedRequest("Protocol error: invalid multibulk length");
    }
    if (unauthenticated && n > UNAUTHENTICATED_ARRAY) {
      throw new MalformedRequest("Protocol error: unauthenticated multibulk length");
    }
    in.readerIndex(eol + 2);
    expected = (int) Math.max(0, n);
    args = expected == 0 ? NO_ARGS : new byte[Math.min(expected, 1024)][];
    count = 0;
    return true;
  }

  private boolean readArguments(ByteBuf in) {
    while (count < expected) {
      if (bulkLength < 0) {
        if (!in.isReadable()) {
          return false;
        }
        byte first = in.getByte(in.readerIndex());
        if (first != '$') {
          throw new MalformedRequest("Protocol error: expected '$', got '" + printable(first) + "'");
        }
        int eol = lineEnd(in, "Protocol error: too big bulk count string");
        if (eol < 0) {
          return false;
        }
        long n = parseNumber(in, in.readerIndex() + 1, eol);
        if (n < 0 || n > limits.maxBulkLength()) {
          throw new MalformedRequest("Protocol error: invalid bulk length");
        }
        if (unauthenticated && n > UNAUTHENTICATED_BULK) {
          throw new MalformedRequest("Protocol error: unauthenticated bulk length");
        }
        requestBytes += n;
        if (requestBytes > limits.maxQueryBuffer()) {
          throw new MalformedRequest("Protocol error: request of more than " + limits.maxQueryBuffer()
              + " bytes (client-query-buffer-limit)");
        }
        in.readerIndex(eol + 2);
        bulkLength = (int) n;
      }
      if (in.readableBytes() < bulkLength + 2) {
        return false;
      }
      byte[] arg = new byte[bulkLength];
      in.readBytes(arg);
      in.skipBytes(2); // Redis does not look at the CRLF after the payload either
      if (count == args.length) {
        args = Arrays.copyOf(args, (int) Math.min(expected, (long) args.length * 2));
      }
      args[count++] = arg;
      bulkLength = -1;
    }
    return true;
  }

  /** Reads one inline request; false if its line is not complete yet. */
  private boolean readInline(ByteBuf in, List<Object> out) {
    int nl = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) '\n');
    if (nl < 0) {
      if (in.readableBytes() > limits.maxInlineLength()) {
        throw new MalformedRequest("Protocol error: too big inline request");
      }
      return false;
    }
    int end = nl > in.readerIndex() && in.getByte(nl - 1) == '\r' ? nl - 1 : nl;
    if (end - in.readerIndex() > limits.maxInlineLength()) {
      throw new MalformedRequest("Protocol error: too big inline request");
    }
    byte[] line = new byte[end - in.readerIndex()];
    in.getBytes(in.readerIndex(), line);
    in.readerIndex(nl + 1);
    List<byte[]> words = InlineSplitter.split(line);
    if (words == null) {
      throw new MalformedRequest("Protocol error: unbalanced quotes in request");
    }
    if (words.size() > limits.maxArrayLength()) {
      throw new MalformedRequest("Protocol error: invalid multibulk length");
    }
    if (!words.isEmpty()) {
      out.add(words.toArray(new byte[0][]));
    }
    return true;
  }

  /** The index of the CR of the CRLF ending the line at the reader index, or -1 if not here yet. */
  private int lineEnd(ByteBuf in, String tooBig) {
    int from = in.readerIndex();
    int limit = (int) Math.min(in.writerIndex(), (long) from + limits.maxInlineLength());
    int cr = in.indexOf(from, limit, (byte) '\r');
    if (cr < 0 || cr + 1 >= in.writerIndex()) {
      if (in.readableBytes() > limits.maxInlineLength()) {
        throw new MalformedRequest(tooBig);
      }
      return -1;
    }
    return cr;
  }

  /** The decimal in {@code [from, to)}, or Long.MIN_VALUE if it is not one (as Redis' string2ll). */
  private static long parseNumber(ByteBuf in, int from, int to) {
    if (from >= to || to - from > 20) {
      return Long.MIN_VALUE;
    }
    boolean negative = in.getByte(from) == '-';
    int i = negative ? from + 1 : from;
    if (i == to || (in.getByte(i) == '0' && (negative || to - i > 1))) {
      return Long.MIN_VALUE; // string2ll takes no leading zeros and no "-0"
    }
    long value = 0;
    for (; i < to; i++) {
      byte b = in.getByte(i);
      if (b < '0' || b > '9' || value > (Integer.MAX_VALUE * 10L)) {
        return Long.MIN_VALUE;
      }
      value = value * 10 + (b - '0');
    }
    return negative ? -value : value;
  }

  private static String printable(byte b) {
    return b >= 32 && b < 127 ? String.valueOf((char) b) : "\\x" + String.format("%02x", b & 0xFF);
  }

  /** Splits inline requests as Redis' sdssplitargs does (quotes and escapes). */
  static final class InlineSplitter {
    private InlineSplitter() {}

    /** The words of {@code line}, or null if its quotes are unbalanced. */
    static List<byte[]> split(byte[] line) {
      List<byte[]> words = new ArrayList<>();
      int i = 0;
      int n = line.length;
      java.io.ByteArrayOutputStream word = new java.io.ByteArrayOutputStream();
      while (true) {
        while (i < n && Character.isWhitespace(line[i])) {
          i++;
        }
        if (i == n) {
          return words;
        }
        word.reset();
        boolean inDouble = false;
        boolean inSingle = false;
        boolean done = false;
        while (!done) {
          if (inDouble) {
            if (i == n) {
              return null;
            }
            if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && isHex(line[i + 2]) && isHex(line[i + 3])) {
              word.write(Character.digit(line[i + 2], 16) * 16 + Character.digit(line[i + 3], 16));
              i += 3;
            } else if (line[i] == '\\' && i + 1 < n) {
              i++;
              byte c = line[i];
              word.write(switch (c) {
                case 'n' -> '\n';
                case 'r' -> '\r';
                case 't' -> '\t';
                case 'b' -> '\b';
                case 'a' -> 7;
                default -> c;
              });
            } else if (line[i] == '"') {
              if (i + 1 < n && !Character.isWhitespace(line[i + 1])) {
                return null; // closing quote must be followed by a space or nothing
              }
              done = true;
            } else {
              word.write(line[i]);
            }
          } else if (inSingle) {
            if (i == n) {
              return null;
            }
            if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
              i++;
              word.write('\'');
            } else if (line[i] == '\'') {
              if (i + 1 < n && !Character.isWhitespace(line[i + 1])) {
                return null;
              }
              done = true;
            } else {
              word.write(line[i]);
            }
          } else {
            if (i == n || Character.isWhitespace(line[i])) {
              done = true;
              i--;
            } else if (line[i] == '"') {
              inDouble = true;
            } else if (line[i] == '\'') {
              inSingle = true;
            } else {
              word.write(line[i]);
            }
          }
          i++;
        }
        words.add(word.toByteArray());
        if (i > n) {
          return words;
        }
      }
    }

    private static boolean isHex(byte b) {
      return Character.digit(b, 16) >= 0;
    }
  }

  private static final class MalformedRequest extends RuntimeException {
    private static final long serialVersionUID = 1L;

    MalformedRequest(String message) {
      super(message, null, false, false);
    }
  }
}

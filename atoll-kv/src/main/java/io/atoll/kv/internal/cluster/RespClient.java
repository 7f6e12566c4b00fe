package io.atoll.kv.internal.cluster;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A minimal blocking RESP2 client for node-to-node commands (MIGRATE's RESTORE-ASKING, the
 * SETSLOT calls of a slot migration). Pipelines what it is given and reads one reply per command:
 * null for {@code +OK}/integers/bulks, the error text for an error. Not thread-safe; one per call.
 */
public final class RespClient implements AutoCloseable {
  private static final int MAX_LINE = 64 << 10;
  private final Socket socket;
  private final OutputStream out;
  private final InputStream in;

  /** Connects with {@code timeoutMillis} for the connect, for every read and for every 64 KB written. */
  public RespClient(String host, int port, int timeoutMillis) throws IOException {
    this(host, port, timeoutMillis, null);
  }

  /**
   * Connects with {@code timeoutMillis} for the connect, the TLS handshake and every read; over TLS
   * with {@code tls} (its certificate checks are the caller's), in plaintext if null.
   *
   * @throws IOException if the connection or the handshake fails (the socket is closed then)
   */
  public RespClient(String host, int port, int timeoutMillis, SSLSocketFactory tls) throws IOException {
    Socket plain = new Socket();
    Socket s = plain;
    try {
      plain.connect(new InetSocketAddress(host, port), timeoutMillis);
      plain.setSoTimeout(timeoutMillis);
      plain.setTcpNoDelay(true);
      if (tls != null) {
        SSLSocket ssl = (SSLSocket) tls.createSocket(plain, host, port, true);
        s = ssl;
        ssl.startHandshake();
      }
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
    socket = s;
    // Writes get the read timeout as a deadline too: a peer that stops reading must not block a
    // sender forever (a hand-off writes holding its slot's lock).
    out = new BufferedOutputStream(new DeadlineOutputStream(socket, timeoutMillis), 64 << 10);
    in = new BufferedInputStream(socket.getInputStream(), 64 << 10);
  }

  /** Queues one command. */
  public void send(List<byte[]> args) throws IOException {
    out.write(('*' + Integer.toString(args.size()) + "\r\n").getBytes(StandardCharsets.US_ASCII));
    for (byte[] a : args) {
      out.write(('$' + Integer.toString(a.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(a);
      out.write('\r');
      out.write('\n');
    }
  }

  /** Sends what is queued. */
  public void flush() throws IOException {
    out.flush();
  }

  /** Reads one reply: null if it is not an error, else the error text (without the '-'). */
  public String read() throws IOException {
    String line = line();
    if (line.isEmpty()) {
      throw new IOException("empty reply line");
    }
    switch (line.charAt(0)) {
      case '-' -> {
        return line.substring(1);
      }
      case '+', ':' -> {
        return null;
      }
      case '$' -> {
        int n = length(line);
        if (n >= 0) {
          in.skipNBytes(n + 2L);
        }
        return null;
      }
      case '*' -> {
        int n = length(line);
        String first = null;
        for (int i = 0; i < n; i++) {
          String r = read();
          first = first == null ? r : first;
        }
        return first;
      }
      default -> throw new IOException("unexpected reply: " + line);
    }
  }

  /**
   * Reads one reply that must be a bulk string of at most {@code maxBulk} bytes.
   *
   * @throws IllegalStateException if the reply is an error, with its text
   * @throws IOException if the reply is of another type, or too long
   */
  public byte[] readBulk(int maxBulk) throws IOException {
    String line = line();
    if (line.startsWith("-")) {
      throw new IllegalStateException(line.substring(1));
    }
    if (!line.startsWith("$")) {
      throw new IOException("unexpected reply: " + line + " (expected: a bulk string)");
    }
    int len = length(line);
    if (len < 0 || len > maxBulk) {
      throw new IOException("bulk of " + len + " bytes (expected: 0.." + maxBulk + ")");
    }
    byte[] b = in.readNBytes(len);
    if (in.read() != '\r' || in.read() != '\n') {
      throw new IOException("malformed bulk string");
    }
    return b;
  }

  /**
   * Reads one reply that must be an array of bulk strings, each at most {@code maxBulk} bytes and
   * at most {@code maxItems} of them.
   *
   * @throws IllegalStateException if the reply is an error, with its text
   * @throws IOException if the reply is of another type, or too long
   */
  public List<byte[]> readBulks(int maxItems, int maxBulk) throws IOException {
    String line = line();
    if (line.startsWith("-")) {
      throw new IllegalStateException(line.substring(1));
    }
    if (!line.startsWith("*")) {
      throw new IOException("unexpected reply: " + line + " (expected: an array)");
    }
    int n = length(line);
    if (n < 0 || n > maxItems) {
      throw new IOException("array of " + n + " items (expected: 0.." + maxItems + ")");
    }
    List<byte[]> items = new java.util.ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String head = line();
      if (!head.startsWith("$")) {
        throw new IOException("unexpected item: " + head + " (expected: a bulk string)");
      }
      int len = length(head);
      if (len < 0 || len > maxBulk) {
        throw new IOException("bulk of " + len + " bytes (expected: 0.." + maxBulk + ")");
      }
      items.add(in.readNBytes(len));
      if (in.read() != '\r' || in.read() != '\n') {
        throw new IOException("malformed bulk string");
      }
    }
    return items;
  }

  /** Reads one reply line as it is (its type byte first, without CRLF): +, -, or : replies. */
  public String readLine() throws IOException {
    return line();
  }

  /**
   * The connection's input from here on (for a stream that follows the replies, as replication's);
   * read it from one thread, after the last reply read through this client.
   */
  public InputStream input() {
    return in;
  }

  /** Sets the read timeout from now on (0: none). */
  public void readTimeout(int millis) throws IOException {
    socket.setSoTimeout(millis);
  }

  private static int length(String line) throws IOException {
    try {
      return Integer.parseInt(line.substring(1));
    } catch (NumberFormatException e) {
      throw new IOException("malformed length in reply: " + line);
    }
  }

  private String line() throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    while (true) {
      int c = in.read();
      if (c < 0) {
        throw new IOException("connection closed by the target");
      }
      if (c == '\r') {
        if (in.read() != '\n') {
          throw new IOException("malformed reply line");
        }
        return b.toString(StandardCharsets.UTF_8);
      }
      if (b.size() >= MAX_LINE) {
        throw new IOException("reply line longer than " + MAX_LINE);
      }
      b.write(c);
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}

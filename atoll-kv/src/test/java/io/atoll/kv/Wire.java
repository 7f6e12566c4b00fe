package io.atoll.kv;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A raw RESP connection for byte-exact checks: sends bytes, reads one whole reply as text. */
final class Wire implements AutoCloseable {
  private final Socket socket;
  private final OutputStream out;
  private final InputStream in;

  Wire(int port) throws IOException {
    this(new Socket("127.0.0.1", port));
  }

  /** A connection over {@code s} (a TLS socket, say). */
  Wire(Socket s) throws IOException {
    socket = s;
    socket.setSoTimeout(10_000);
    out = socket.getOutputStream();
    in = new java.io.BufferedInputStream(socket.getInputStream());
  }

  /** A connection over TLS to {@code port} on loopback, with {@code ctx}'s trust (and certificate, if any). */
  static Wire tls(int port, javax.net.ssl.SSLContext ctx) throws IOException {
    javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port);
    s.startHandshake();
    return new Wire(s);
  }

  /** Sends a command as a RESP array of bulk strings. */
  Wire send(String... args) throws IOException {
    StringBuilder sb = new StringBuilder("*").append(args.length).append("\r\n");
    for (String a : args) {
      sb.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
    }
    return raw(sb.toString());
  }

  Wire raw(String bytes) throws IOException {
    out.write(bytes.getBytes(StandardCharsets.UTF_8));
    out.flush();
    return this;
  }

  /** One command, its whole reply. */
  String call(String... args) throws IOException {
    return send(args).reply();
  }

  /** Reads one complete reply, returned as its exact text. */
  String reply() throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    readOne(b);
    return b.toString(StandardCharsets.UTF_8);
  }

  /** Whether the server closed the connection (the next read sees end of stream). */
  boolean closedByServer() throws IOException {
    try {
      return in.read() < 0;
    } catch (java.net.SocketException e) {
      return true;
    }
  }

  private void readOne(ByteArrayOutputStream b) throws IOException {
    String line = line(b);
    char type = line.charAt(0);
    switch (type) {
      case '$', '=' -> {
        int n = Integer.parseInt(line.substring(1));
        if (n >= 0) {
          b.write(in.readNBytes(n + 2));
        }
      }
      case '*', '~', '>' -> {
        int n = Integer.parseInt(line.substring(1));
        for (int i = 0; i < n; i++) {
          readOne(b);
        }
      }
      case '%' -> {
        int n = Integer.parseInt(line.substring(1));
        for (int i = 0; i < 2 * n; i++) {
          readOne(b);
        }
      }
      default -> { }
    }
  }

  private String line(ByteArrayOutputStream b) throws IOException {
    StringBuilder sb = new StringBuilder();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        throw new IOException("closed after: " + b.toString(StandardCharsets.UTF_8) + sb);
      }
      sb.append((char) c);
    }
    String s = sb.toString();
    b.writeBytes((s + "\n").getBytes(StandardCharsets.UTF_8));
    return s.substring(0, s.length() - 1);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}

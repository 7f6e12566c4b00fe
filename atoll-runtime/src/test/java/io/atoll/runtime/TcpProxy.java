package io.atoll.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on 127.0.0.1 for tests: put it between a pod and the manager, then {@link #close}
 * it to make the manager refuse that pod alone (new connections refused, open ones reset).
 */
final class TcpProxy implements AutoCloseable {

  private final ServerSocket server;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  TcpProxy(int targetPort) throws IOException {
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().start(() -> {
      try {
        while (true) {
          Socket in = server.accept();
          Socket out = new Socket();
          out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
          sockets.add(in);
          sockets.add(out);
          pipe(in, out);
          pipe(out, in);
        }
      } catch (IOException e) {
        // closed
      }
    });
  }

  private static void pipe(Socket from, Socket to) {
    Thread.ofVirtual().start(() -> {
      try (InputStream i = from.getInputStream(); OutputStream o = to.getOutputStream()) {
        i.transferTo(o);
      } catch (IOException e) {
        // one side closed
      } finally {
        try {
          to.close();
        } catch (IOException e) {
          // already closed
        }
      }
    });
  }

  int port() {
    return server.getLocalPort();
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket s : sockets) {
      s.setSoLinger(true, 0); // reset, as a dead host's firewall would
      s.close();
    }
  }
}

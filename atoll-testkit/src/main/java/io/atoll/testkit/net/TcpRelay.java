package io.atoll.testkit.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntPredicate;

/**
 * A TCP relay on 127.0.0.1 that injects network faults between two real endpoints: point a
 * client at {@link #port()} instead of the target, then switch {@link #mode(Mode) modes} to make
 * the link refuse, black-hole, stall or lose one direction, and back. Each connection gets its own
 * connection to the target and one virtual thread per direction.
 *
 * <pre>{@code
 * try (TcpRelay relay = TcpRelay.to(manager.address().port())) {
 *   Sharding pod = cluster.addPod(b -> b.manager("127.0.0.1:" + relay.port()));
 *   relay.mode(TcpRelay.Mode.DROP);     // the manager is alive, but this pod cannot reach it
 * }
 * }</pre>
 *
 * Thread-safe: modes may be switched from any thread while bytes flow.
 */
public final class TcpRelay implements AutoCloseable {

  /** What the relay does with connections and bytes. */
  public enum Mode {
    /** Bytes flow both ways. */
    PASS,
    /**
     * Open connections are reset and new ones are reset as soon as they are accepted, as a host
     * whose firewall rejects the peer would do.
     */
    REFUSE,
    /**
     * Connections are accepted and stay open, but bytes in either direction are read and thrown
     * away: a black hole, as a partition that silently drops packets looks to both ends.
     */
    DROP,
    /**
     * Bytes are held, not lost: nothing is read beyond what is in flight, so the senders' TCP
     * windows fill up. Switching back to {@link #PASS} releases everything, in order.
     */
    STALL,
    /** Bytes from the client to the target are thrown away; the target's replies still flow. */
    CUT_TO_TARGET,
    /** Bytes from the target to the client are thrown away; the client's requests still flow. */
    CUT_TO_CLIENT
  }

  private volatile InetSocketAddress target;
  private final ServerSocket server;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final Object lock = new Object();
  private Mode mode = Mode.PASS; // guarded by lock
  private IntPredicate selected; // guarded by lock; null: every connection

  private TcpRelay(InetSocketAddress target, int listenPort) throws IOException {
    this.target = target;
    this.server = new ServerSocket(listenPort, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().name("relay-accept-" + server.getLocalPort()).start(this::acceptLoop);
  }

  /**
   * A relay in {@link Mode#PASS} to {@code 127.0.0.1:targetPort}, listening on an ephemeral port.
   *
   * @throws UncheckedIOException if it cannot listen
   * @throws IllegalArgumentException unless the port is 1..65535
   */
  public static TcpRelay to(int targetPort) {
    if (targetPort < 1 || targetPort > 65_535) {
      throw new IllegalArgumentException("target port: " + targetPort + " (expected: 1..65535)");
    }
    try {
      return new TcpRelay(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 0);
    } catch (IOException e) {
      throw new UncheckedIOException("relay: cannot listen on 127.0.0.1", e);
    }
  }

  /**
   * A relay in {@link Mode#PASS} to {@code 127.0.0.1:targetPort}, listening on {@code listenPort}:
   * how a relay that was {@linkplain #close() closed} (so that connecting to it was refused, as to
   * a port where no process listens) comes back on the address its clients know.
   *
   * @throws UncheckedIOException if it cannot listen there (the port is taken)
   * @throws IllegalArgumentException unless both ports are 1..65535
   */
  public static TcpRelay on(int listenPort, int targetPort) {
    if (listenPort < 1 || listenPort > 65_535 || targetPort < 1 || targetPort > 65_535) {
      throw new IllegalArgumentException("ports: listen " + listenPort + ", target " + targetPort
          + " (expected: 1..65535)");
    }
    try {
      return new TcpRelay(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), listenPort);
    } catch (IOException e) {
      throw new UncheckedIOException("relay: cannot listen on 127.0.0.1:" + listenPort, e);
    }
  }

  /**
   * Points the connections accepted from now on at {@code 127.0.0.1:targetPort}; open ones keep
   * their target. A harness that started a process on a port someone else took in the meantime
   * starts it again on another port behind the same relay, so the address it announced stays.
   *
   * @throws IllegalArgumentException unless the port is 1..65535
   */
  public void retarget(int targetPort) {
    if (targetPort < 1 || targetPort > 65_535) {
      throw new IllegalArgumentException("target port: " + targetPort + " (expected: 1..65535)");
    }
    target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
  }

  /** The port clients connect to. */
  public int port() {
    return server.getLocalPort();
  }

  /** {@code 127.0.0.1:port}, what a client is pointed at. */
  public String address() {
    return "127.0.0.1:" + port();
  }

  /** The current mode. */
  public Mode mode() {
    synchronized (lock) {
      return mode;
    }
  }

  /**
   * Switches to {@code m}. Switching to {@link Mode#REFUSE} resets every open connection at once;
   * leaving {@link Mode#STALL} releases held bytes.
   */
  public void mode(Mode m) {
    Objects.requireNonNull(m, "mode");
    synchronized (lock) {
      mode = m;
      selected = null;
      lock.notifyAll();
    }
    if (m == Mode.REFUSE) {
      resetAll();
    }
  }

  /**
   * Switches to {@code m} for the connections whose client's port (the remote port of the
   * accepted socket, open now or accepted later) {@code clientPorts} selects; bytes of the others
   * pass. This is how one peer among several behind the same address is cut off: the caller maps a
   * port to the process that holds it. The predicate is asked for every chunk relayed, under the
   * relay's lock: it must be quick (cache what it looks up). {@link #mode(Mode)} or
   * {@link #release()} ends the selection.
   *
   * @throws IllegalArgumentException for {@link Mode#REFUSE}, which acts on every connection
   */
  public void mode(Mode m, IntPredicate clientPorts) {
    Objects.requireNonNull(m, "mode");
    Objects.requireNonNull(clientPorts, "clientPorts");
    if (m == Mode.REFUSE) {
      throw new IllegalArgumentException("mode REFUSE for some connections only (expected: DROP, STALL,"
          + " CUT_TO_TARGET, CUT_TO_CLIENT or PASS)");
    }
    synchronized (lock) {
      mode = m;
      selected = clientPorts;
      lock.notifyAll();
    }
  }

  /** Back to {@link Mode#PASS}: held bytes flow on, in order. */
  public void release() {
    mode(Mode.PASS);
  }

  /** Connections accepted and still open (both sides count once). */
  public int openConnections() {
    return (int) sockets.stream().filter(s -> !s.isClosed()).count() / 2;
  }

  /** The client ports of the connections open now (the remote port of each accepted socket). */
  public java.util.Set<Integer> clientPorts() {
    int port = port();
    return sockets.stream().filter(s -> !s.isClosed() && s.getLocalPort() == port).map(Socket::getPort)
        .collect(java.util.stream.Collectors.toUnmodifiableSet());
  }

  /**
   * Open connections the current mode applies to: with {@link #mode(Mode, IntPredicate)}, those
   * whose client port it selects; otherwise all of them.
   */
  public int connectionsSelected() {
    IntPredicate which;
    synchronized (lock) {
      which = selected;
    }
    int port = port();
    return (int) sockets.stream().filter(s -> !s.isClosed() && s.getLocalPort() == port
        && (which == null || which.test(s.getPort()))).count();
  }

  /** Stops listening (new connections are refused by the OS) and resets every open connection. */
  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      // closing anyway
    }
    resetAll();
    synchronized (lock) {
      lock.notifyAll();
    }
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      Socket in;
      try {
        in = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (mode() == Mode.REFUSE || server.isClosed()) {
        reset(in);
        continue;
      }
      Socket out = new Socket();
      try {
        out.connect(target, 5_000);
      } catch (IOException e) {
        reset(in); // the target is down: the client sees what it would without the relay
        closeQuietly(out);
        continue;
      }
      sockets.add(in);
      sockets.add(out);
      if (server.isClosed()) { // closed while this one was connecting: close() may have missed it
        resetAll();
        return;
      }
      int clientPort = in.getPort();
      Thread.ofVirtual().start(() -> pump(in, out, true, clientPort));
      Thread.ofVirtual().start(() -> pump(out, in, false, clientPort));
    }
  }

  private void pump(Socket from, Socket to, boolean toTarget, int clientPort) {
    byte[] buf = new byte[16 * 1024];
    try (InputStream i = from.getInputStream(); OutputStream o = to.getOutputStream()) {
      for (;;) {
        int n = i.read(buf);
        if (n < 0) {
          break;
        }
        if (awaitForward(toTarget, clientPort)) {
          o.write(buf, 0, n);
          o.flush();
        }
      }
    } catch (IOException e) {
      // one side closed or was reset
    } finally {
      sockets.remove(from);
      closeQuietly(to);
      closeQuietly(from);
    }
  }

  /** Blocks while stalled; then whether the chunk read goes on (true) or is dropped (false). */
  private boolean awaitForward(boolean toTarget, int clientPort) throws IOException {
    synchronized (lock) {
      while (modeFor(clientPort) == Mode.STALL && !server.isClosed()) {
        try {
          lock.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("relay interrupted", e);
        }
      }
      return switch (modeFor(clientPort)) {
        case PASS, STALL -> true;
        case REFUSE, DROP -> false;
        case CUT_TO_TARGET -> !toTarget;
        case CUT_TO_CLIENT -> toTarget;
      };
    }
  }

  /** The mode for the connection from {@code clientPort}. Under the lock. */
  private Mode modeFor(int clientPort) {
    return selected == null || selected.test(clientPort) ? mode : Mode.PASS;
  }

  private void resetAll() {
    for (Socket s : sockets) {
      reset(s);
    }
    sockets.clear();
  }

  private static void reset(Socket s) {
    try {
      s.setSoLinger(true, 0); // RST instead of FIN, as a rejecting host would
    } catch (IOException e) {
      // already closed
    }
    closeQuietly(s);
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }
}

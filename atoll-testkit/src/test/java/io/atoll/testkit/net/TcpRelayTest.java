package io.atoll.testkit.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The relay's modes against a real socket pair: an echo server behind it and a client in front. */
class TcpRelayTest {

  /** Echoes every byte it gets and counts them. */
  static final class EchoServer implements AutoCloseable {
    final ServerSocket server;
    final AtomicLong received = new AtomicLong();

    EchoServer() throws IOException {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread.ofVirtual().start(() -> {
        while (!server.isClosed()) {
          try {
            Socket s = server.accept();
            Thread.ofVirtual().start(() -> echo(s));
          } catch (IOException e) {
            return;
          }
        }
      });
    }

    private void echo(Socket s) {
      try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
        byte[] buf = new byte[1024];
        for (int n; (n = in.read(buf)) >= 0; ) {
          received.addAndGet(n);
          out.write(buf, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // the client went away
      }
    }

    @Override
    public void close() throws IOException {
      server.close();
    }
  }

  EchoServer echo;
  TcpRelay relay;

  @BeforeEach
  void start() throws IOException {
    echo = new EchoServer();
    relay = TcpRelay.to(echo.server.getLocalPort());
  }

  @AfterEach
  void stop() throws IOException {
    relay.close();
    echo.close();
  }

  private Socket connect() throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), relay.port());
    s.setSoTimeout(5_000);
    return s;
  }

  private static void send(Socket s, String text) throws IOException {
    s.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
  }

  private static String read(Socket s, int n) throws IOException {
    return new String(s.getInputStream().readNBytes(n), StandardCharsets.US_ASCII);
  }

  @Test
  void passRelaysBothWays() throws IOException {
    try (Socket s = connect()) {
      send(s, "hello");
      assertThat(read(s, 5)).isEqualTo("hello");
    }
    assertThat(relay.mode()).isEqualTo(TcpRelay.Mode.PASS);
  }

  @Test
  void retargetSendsNewConnectionsToTheNewTargetAndLeavesOpenOnesWhereTheyWere() throws IOException {
    try (EchoServer second = new EchoServer(); Socket before = connect()) {
      send(before, "ab");
      assertThat(read(before, 2)).isEqualTo("ab");
      relay.retarget(second.server.getLocalPort());
      try (Socket after = connect()) {
        send(after, "cde");
        assertThat(read(after, 3)).isEqualTo("cde");
      }
      send(before, "f");
      assertThat(read(before, 1)).isEqualTo("f");
      assertThat(second.received).hasValue(3);
      assertThat(echo.received).hasValue(3);
    }
    assertThatThrownBy(() -> relay.retarget(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1..65535");
  }

  @Test
  void refuseResetsOpenConnectionsAndClosesNewOnesAndPassRestoresTheLink() throws IOException {
    try (Socket open = connect()) {
      send(open, "a");
      assertThat(read(open, 1)).isEqualTo("a");
      relay.mode(TcpRelay.Mode.REFUSE);
      assertThatThrownBy(() -> {
        send(open, "b");
        int r = open.getInputStream().read();
        if (r < 0) {
          throw new SocketException("closed");
        }
      }).isInstanceOf(IOException.class);
    }
    try (Socket fresh = connect()) {
      assertThatThrownBy(() -> {
        int r = fresh.getInputStream().read();
        if (r < 0) {
          throw new SocketException("closed");
        }
      }).isInstanceOf(IOException.class).isNotInstanceOf(SocketTimeoutException.class);
    }
    relay.mode(TcpRelay.Mode.PASS);
    try (Socket again = connect()) {
      send(again, "c");
      assertThat(read(again, 1)).isEqualTo("c");
    }
  }

  @Test
  void dropAcceptsConnectionsButBytesVanishInBothDirections() throws IOException {
    relay.mode(TcpRelay.Mode.DROP);
    try (Socket s = connect()) {
      s.setSoTimeout(500);
      send(s, "into the void");
      assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
      assertThat(s.isConnected() && !s.isClosed()).isTrue();
    }
    assertThat(echo.received).hasValue(0);
  }

  @Test
  void stallHoldsBytesWithoutLosingThemAndReleaseDeliversThemInOrder() throws IOException {
    try (Socket s = connect()) {
      send(s, "x");
      assertThat(read(s, 1)).isEqualTo("x");
      relay.mode(TcpRelay.Mode.STALL);
      send(s, "held-");
      send(s, "in-order");
      Awaitility.await().during(Duration.ofMillis(400)).atMost(Duration.ofSeconds(2))
          .until(() -> echo.received.get() == 1);
      relay.release();
      assertThat(read(s, 13)).isEqualTo("held-in-order");
      assertThat(echo.received).hasValue(14);
    }
  }

  @Test
  void aSelectiveDropCutsOffOnlyTheChosenClientsAndReleaseRestoresThem() throws IOException {
    try (Socket chosen = connect(); Socket other = connect()) {
      // A connect returns once the kernel has the connection, before the relay's acceptor may
      // have taken it: a round trip on each says the relay holds both (CI once counted 1 of 2).
      send(chosen, "a");
      assertThat(read(chosen, 1)).isEqualTo("a");
      send(other, "b");
      assertThat(read(other, 1)).isEqualTo("b");
      int chosenPort = chosen.getLocalPort();
      assertThat(relay.connectionsSelected()).isEqualTo(2);
      relay.mode(TcpRelay.Mode.DROP, port -> port == chosenPort);
      assertThat(relay.connectionsSelected()).isEqualTo(1);
      assertThatThrownBy(() -> relay.mode(TcpRelay.Mode.REFUSE, port -> true))
          .isInstanceOf(IllegalArgumentException.class);
      send(other, "still here");
      assertThat(read(other, 10)).isEqualTo("still here");
      chosen.setSoTimeout(500);
      send(chosen, "lost");
      assertThatThrownBy(() -> chosen.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
      try (Socket fresh = connect()) { // a connection accepted during the selection, not chosen
        send(fresh, "new");
        assertThat(read(fresh, 3)).isEqualTo("new");
      }
      relay.release();
      chosen.setSoTimeout(5_000);
      send(chosen, "back");
      assertThat(read(chosen, 4)).isEqualTo("back");
    }
  }

  @Test
  void cutToTargetLosesOnlyTheClientsBytes() throws IOException {
    try (Socket s = connect()) {
      send(s, "1");
      assertThat(read(s, 1)).isEqualTo("1");
      relay.mode(TcpRelay.Mode.CUT_TO_TARGET);
      s.setSoTimeout(500);
      send(s, "lost");
      assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
      assertThat(echo.received).hasValue(1);
    }
  }

  @Test
  void cutToClientLosesOnlyTheTargetsBytes() throws IOException {
    try (Socket s = connect()) {
      send(s, "1");
      assertThat(read(s, 1)).isEqualTo("1");
      relay.mode(TcpRelay.Mode.CUT_TO_CLIENT);
      s.setSoTimeout(500);
      send(s, "seen");
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> echo.received.get() == 5);
      assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
    }
  }

  @Test
  void closeMakesTheOsRefuseNewConnections() {
    relay.close();
    // The listening socket's descriptor is released once its accept loop has left accept().
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> {
      try (Socket s = connect()) {
        return false;
      } catch (java.net.ConnectException e) {
        return true;
      }
    });
  }

  @Test
  void aClosedRelayComesBackOnItsPortAndRelaysAgain() throws IOException {
    int port = relay.port();
    relay.close();
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> {
      try (Socket s = connect()) {
        return false;
      } catch (java.net.ConnectException e) {
        return true; // refused, as a port nobody listens on
      }
    });
    // The listening socket's descriptor may outlive close() until its accept loop left accept().
    relay = Awaitility.await().atMost(Duration.ofSeconds(5)).ignoreExceptionsInstanceOf(
        java.io.UncheckedIOException.class).until(() -> TcpRelay.on(port, echo.server.getLocalPort()), r -> true);
    assertThat(relay.port()).isEqualTo(port);
    try (Socket s = connect()) {
      send(s, "again");
      assertThat(read(s, 5)).isEqualTo("again");
    }
  }

  @Test
  void aBadTargetPortIsRefusedWithTheExpectedRange() {
    assertThatThrownBy(() -> TcpRelay.on(0, 1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: 1..65535");
    assertThatThrownBy(() -> TcpRelay.to(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: 1..65535");
  }
}

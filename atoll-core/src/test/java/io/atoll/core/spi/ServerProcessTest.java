package io.atoll.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The test harness's store servers: a port taken between its pick and the server's bind. */
class ServerProcessTest {
  @TempDir
  Path dir;

  @Test
  void aServerWhosePortWasTakenMeanwhileStartsOnAnotherOne() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      AtomicInteger picks = new AtomicInteger();
      // The first pick is a port another process holds by the time the server binds it.
      try (ServerProcess redis = ServerProcess.redis(dir,
          () -> picks.getAndIncrement() == 0 ? taken.getLocalPort() : ServerProcess.freePort())) {
        assertThat(picks).hasValue(2);
        assertThat(redis.port()).isNotEqualTo(taken.getLocalPort());
        assertThat(Files.readString(dir.resolve("redis.log")).toLowerCase()).contains("address already in use");
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress("127.0.0.1", redis.port()), 2000);
          s.setSoTimeout(5000);
          OutputStream out = s.getOutputStream();
          out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
          out.flush();
          InputStream in = s.getInputStream();
          byte[] reply = in.readNBytes(7);
          assertThat(new String(reply, StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n");
        }
      }
    }
  }

  /**
   * A port held listening by another process completes a connect from its backlog, though no one
   * accepts: the server's readiness is its answer, never the connect (CI once took the held port
   * for the started server, before redis had tried to bind it).
   */
  @Test
  void aPortHeldListeningIsNotAServerThatAnswers() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", taken.getLocalPort()), 2000);
      assertThat(ServerProcess.replies("PING\r\n", "+PONG\r\n").answers(s)).isFalse();
    }
  }
}

package io.atoll.server.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

/** The owner of a real loopback connection, as {@code /proc} tells it. */
class SocketOwnersTest {

  @Test
  void findsTheProcessThatHoldsTheClientEndAndNoOther() throws Exception {
    assumeTrue(Files.isReadable(Path.of("/proc/net/tcp")), "Linux /proc");
    long self = ProcessHandle.current().pid();
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket accepted = server.accept()) {
      int clientPort = accepted.getPort();
      assertThat(clientPort).isEqualTo(client.getLocalPort());
      assertThat(SocketOwners.owns(self, clientPort, server.getLocalPort())).isTrue();
      assertThat(SocketOwners.owns(self, clientPort, server.getLocalPort() == 1 ? 2 : 1)).isFalse();
      Process other = new ProcessBuilder("sleep", "30").start();
      try {
        assertThat(SocketOwners.owns(other.pid(), clientPort, server.getLocalPort())).isFalse();
      } finally {
        other.destroyForcibly().waitFor();
      }
      IntPredicate mine = SocketOwners.heldBy(self, server.getLocalPort());
      assertThat(mine.test(clientPort)).isTrue();
      assertThat(mine.test(clientPort == 1 ? 2 : clientPort - 1)).isFalse();
    }
  }
}

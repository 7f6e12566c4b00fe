package io.atoll.kv.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A hand-off connection's writes to a peer that stops reading: real loopback sockets. */
class WriteDeadlineTest {
  @Test
  void aWriteToAPeerThatStopsReadingFailsAfterTheTimeoutInsteadOfBlockingForever() throws Exception {
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        RespClient c = new RespClient("127.0.0.1", server.getLocalPort(), 500);
        Socket peer = server.accept()) { // accepted, and never read: its receive window fills
      byte[] value = new byte[1 << 20];
      // The guard only ends the test if the write blocks forever (it did before the deadline).
      assertTimeoutPreemptively(Duration.ofSeconds(60), () -> assertThatThrownBy(() -> {
        for (int i = 0; i < 1024; i++) {
          c.send(List.of(value));
        }
        c.flush();
      }).isInstanceOf(IOException.class).hasMessageContaining("write timed out after 500 ms"));
      assertThat(peer.isClosed()).isFalse();
    }
  }
}

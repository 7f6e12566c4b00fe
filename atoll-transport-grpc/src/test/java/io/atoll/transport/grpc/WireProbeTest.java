package io.atoll.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.PodAddress;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The TCP probe against real sockets on 127.0.0.1. */
class WireProbeTest {

  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private ServerSocket listening(int backlog) throws Exception {
    ServerSocket s = new ServerSocket(0, backlog, InetAddress.getByName("127.0.0.1"));
    open.add(s);
    return s;
  }

  private static int closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  private static InetSocketAddress local(int port) throws Exception {
    return new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port);
  }

  @Test
  void aListeningPortIsListening() throws Exception {
    ServerSocket s = listening(50);
    assertThat(Wire.probe(new PodAddress("127.0.0.1", s.getLocalPort()), 1000)).isEqualTo(Wire.Probe.LISTENING);
  }

  @Test
  void aClosedPortIsRefused() throws Exception {
    assertThat(Wire.probe(new PodAddress("127.0.0.1", closedPort()), 1000)).isEqualTo(Wire.Probe.REFUSED);
  }

  @Test
  void anIpLiteralIsItsOnlyCandidate() throws Exception {
    assertThat(Wire.candidates(new PodAddress("127.0.0.1", 7070))).containsExactly(local(7070));
  }

  @Test
  void aNameResolvesToEveryAddressItHas() throws Exception {
    List<InetSocketAddress> expected = Arrays.stream(InetAddress.getAllByName("localhost"))
        .map(a -> new InetSocketAddress(a, 7070)).toList();
    assertThat(Wire.candidates(new PodAddress("localhost", 7070))).containsExactlyElementsOf(expected);
  }

  @Test
  void aRefusalFromTheFirstAddressIsNotTheAnswerWhenALaterOneListens() throws Exception {
    // Regression (issue 8): only the first resolved address was tried, so a manager listening on
    // the second address of its name (say IPv6 ::1 of localhost) counted as stopped.
    ServerSocket s = listening(50);
    assertThat(Wire.probe(List.of(local(closedPort()), local(s.getLocalPort())), 1000))
        .isEqualTo(Wire.Probe.LISTENING);
  }

  @Test
  void refusedOnlyWhenEveryAddressRefuses() throws Exception {
    assertThat(Wire.probe(List.of(local(closedPort()), local(closedPort())), 1000)).isEqualTo(Wire.Probe.REFUSED);
  }

  @Test
  void noAddressAtAllConcludesNothing() {
    assertThat(Wire.probe(List.of(), 1000)).isEqualTo(Wire.Probe.UNKNOWN);
  }

  @Test
  void aConnectWithNoAnswerInTimeConcludesNothingEvenIfAnotherAddressRefused() throws Exception {
    // A listener that never accepts: once its accept queue is full the kernel drops new SYNs, so
    // a connect gets no answer at all, as from a paused or cut-off host.
    ServerSocket stalled = listening(1);
    InetSocketAddress target = local(stalled.getLocalPort());
    boolean full = false;
    for (int i = 0; i < 16 && !full; i++) {
      Socket filler = new Socket();
      open.add(filler);
      try {
        filler.connect(target, 200);
      } catch (java.net.SocketTimeoutException e) {
        full = true;
      }
    }
    assertThat(full).as("the accept queue fills up").isTrue();
    assertThat(Wire.probe(List.of(target), 300)).isEqualTo(Wire.Probe.UNKNOWN);
    assertThat(Wire.probe(List.of(local(closedPort()), target), 300)).isEqualTo(Wire.Probe.UNKNOWN);
  }

  @Test
  void aTimeoutBelowOneMillisecondIsRefusedAsBadInput() {
    // 0 would make the connect wait forever.
    assertThatThrownBy(() -> Wire.probe(new PodAddress("127.0.0.1", 1), 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("probe timeout: 0 ms (expected: >= 1)");
  }
}

package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.manager.round.Rounds;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The watch streams, with an in-memory stream that is ready or not on demand. */
class WatchersTest {

  static final Pod A = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("1"));

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  final Watchers watchers = new Watchers(loop);
  final ClusterConfig first = ClusterConfig.empty(2);
  final ClusterConfig second = Rounds.join(first, A);
  final ClusterConfig third = Rounds.leave(second, A.id());

  /** A server stream in memory. */
  static final class Stream extends ServerCallStreamObserver<ConfigBytes> {
    final List<ClusterConfig> sent = new ArrayList<>();
    boolean ready = true;
    boolean cancelled;
    boolean completed;
    boolean failOnNext;
    Runnable onReady;
    Runnable onCancel;

    @Override
    public boolean isReady() {
      return ready;
    }

    @Override
    public void setOnReadyHandler(Runnable r) {
      onReady = r;
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public void setOnCancelHandler(Runnable r) {
      onCancel = r;
    }

    @Override
    public void setCompression(String compression) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void request(int count) {}

    @Override
    public void setMessageCompression(boolean enable) {}

    @Override
    public void onNext(ConfigBytes value) {
      if (failOnNext) {
        throw new IllegalStateException("stream closed");
      }
      sent.add(Wire.config(value));
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {
      completed = true;
    }
  }

  Stream open() {
    Stream s = new Stream();
    watchers.add(s, () -> first);
    vt.advance(Duration.ZERO);
    return s;
  }

  void publish(ClusterConfig c) {
    loop.runAsLoop(() -> watchers.publish(c));
  }

  @Test
  void aNewStreamGetsTheCurrentConfigThenEveryNewOne() {
    Stream s = open();
    publish(second);
    publish(third);
    assertThat(s.sent).containsExactly(first, second, third);
  }

  @Test
  void aSlowStreamGetsOnlyTheNewestConfigWhenItIsReadyAgain() {
    Stream s = open();
    s.ready = false;
    publish(second);
    publish(third);
    assertThat(s.sent).containsExactly(first);
    s.ready = true;
    s.onReady.run();
    vt.advance(Duration.ZERO);
    assertThat(s.sent).containsExactly(first, third);
    s.onReady.run();
    vt.advance(Duration.ZERO);
    assertThat(s.sent).as("nothing twice").containsExactly(first, third);
  }

  @Test
  void aCancelledStreamGetsNothingAndIsForgotten() {
    Stream s = open();
    Stream other = open();
    s.cancelled = true;
    publish(second);
    assertThat(s.sent).containsExactly(first);
    s.onCancel.run();
    vt.advance(Duration.ZERO);
    s.cancelled = false;
    publish(third);
    assertThat(s.sent).containsExactly(first);
    assertThat(other.sent).containsExactly(first, second, third);
  }

  @Test
  void aStreamThatFailsDoesNotStopTheOthers() {
    Stream bad = open();
    Stream good = open();
    bad.failOnNext = true;
    publish(second);
    assertThat(good.sent).containsExactly(first, second);
  }

  @Test
  void closingCompletesEveryStreamAndLaterOnesAtOnce() {
    Stream s = open();
    loop.runAsLoop(watchers::close);
    assertThat(s.completed).isTrue();
    publish(second);
    assertThat(s.sent).containsExactly(first);
    Stream late = open();
    assertThat(late.completed).isTrue();
    assertThat(late.sent).isEmpty();
  }

  @Test
  void publishingWithoutStreamsDoesNothingAndOnlyOnTheLoop() {
    publish(second);
    assertThatThrownBy(() -> watchers.publish(second)).isInstanceOf(IllegalStateException.class);
  }
}

package io.atoll.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.runtime.codec.ProtobufCodec;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodRef;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Entity types whose messages are protobuf messages: the protobuf codec, asks through the context. */
class ProtobufCodecTest {

  @TempDir
  Path dir;

  static final ProtobufCodec CODEC = ProtobufCodec.of(PodRef.getDefaultInstance(), PingResponse.getDefaultInstance());

  @Test
  void roundTripsRegisteredTypesAndRefusesOthersAndGarbage() {
    PodRef ref = PodRef.newBuilder().setHost("h").setPort(7).setIncarnation(9).build();
    assertThat(CODEC.decode(CODEC.encode(ref))).isEqualTo(ref);
    assertThatThrownBy(() -> CODEC.encode("text")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.lang.String is not a protobuf message");
    assertThatThrownBy(() -> CODEC.encode(io.atoll.transport.grpc.proto.PingRequest.getDefaultInstance()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atoll.v1.PingRequest is not registered");
    assertThatThrownBy(() -> CODEC.decode(new byte[] {(byte) 0xff, 1, 2})).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("protobuf codec");
  }

  @Test
  void aProtobufEntityAnswersAsksThroughItsContextAcrossPods() throws Exception {
    EntityType<PodRef> echo = EntityType.of("echo", PodRef.class).withCodec(CODEC);
    EntityFactory<PodRef> factory = ctx -> (msg, c) -> c.reply().send(
        PingResponse.newBuilder().setConfigEpoch(msg.getPort() * 2L).build());
    try (TestCluster cluster = new TestCluster(dir, TestCluster.fast(10))) {
      cluster.addPod(b -> b.register(echo, factory));
      Sharding client = Sharding.builder().manager(cluster.managerAddress()).clientOnly().start();
      cluster.pods.add(client);
      cluster.awaitStable(Duration.ofSeconds(10));
      PingResponse r = client.entity(echo, "e1").<PingResponse>ask(PodRef.newBuilder().setPort(21).build())
          .toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertThat(r.getConfigEpoch()).isEqualTo(42);
    }
  }
}

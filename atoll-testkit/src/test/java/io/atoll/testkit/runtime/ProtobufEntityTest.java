package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.EntityFactory;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.codec.ProtobufCodec;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodRef;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Entity types whose messages are protobuf messages: asks through the context, across pods. */
@AtollCluster(shards = 10)
class ProtobufEntityTest {

  static final ProtobufCodec CODEC = ProtobufCodec.of(PodRef.getDefaultInstance(), PingResponse.getDefaultInstance());

  @Test
  void aProtobufEntityAnswersAsksThroughItsContextAcrossPods(LocalCluster cluster) throws Exception {
    EntityType<PodRef> echo = EntityType.of("echo", PodRef.class).withCodec(CODEC);
    EntityFactory<PodRef> factory = ctx -> (msg, c) -> c.reply().send(
        PingResponse.newBuilder().setConfigEpoch(msg.getPort() * 2L).build());
    cluster.addPod(b -> b.register(echo, factory));
    Sharding client = cluster.addClient();
    cluster.awaitSettled(Duration.ofSeconds(10));
    PingResponse r = client.entity(echo, "e1").<PingResponse>ask(PodRef.newBuilder().setPort(21).build())
        .toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertThat(r.getConfigEpoch()).isEqualTo(42);
  }
}

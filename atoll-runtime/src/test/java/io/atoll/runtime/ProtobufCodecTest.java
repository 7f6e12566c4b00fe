package io.atoll.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.runtime.codec.ProtobufCodec;
import io.atoll.transport.grpc.proto.PingResponse;
import io.atoll.transport.grpc.proto.PodRef;
import org.junit.jupiter.api.Test;

/**
 * The protobuf codec on its own; a protobuf entity in a cluster is tested in atoll-testkit
 * ({@code ProtobufEntityTest}).
 */
class ProtobufCodecTest {

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
}

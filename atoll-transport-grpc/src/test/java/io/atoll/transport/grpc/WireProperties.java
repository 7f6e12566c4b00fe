package io.atoll.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.PodInfo;
import io.atoll.transport.grpc.proto.PodRef;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Round trips through the wire's bytes, and arbitrary bytes never escape as anything but INVALID_ARGUMENT. */
class WireProperties {

  @Provide
  Arbitrary<String> hosts() {
    return Arbitraries.strings().withCharRange('a', 'z').numeric().withChars('.', '-', ':', 'é')
        .ofMinLength(1).ofMaxLength(64);
  }

  @Provide
  Arbitrary<String> versions() {
    return Arbitraries.strings().withCharRange('0', '9').withChars('.', '-', 'r', 'c')
        .ofMinLength(1).ofMaxLength(128).filter(v -> !v.isBlank());
  }

  @Property
  void aPodSurvivesTheWire(@ForAll("hosts") String host, @ForAll @IntRange(min = 1, max = 65535) int port,
      @ForAll long incarnation, @ForAll("versions") String version) throws Exception {
    Pod pod = new Pod(new PodId(new PodAddress(host, port), incarnation), PodVersion.of(version));
    PodInfo sent = Wire.info(pod);
    assertThat(Wire.pod(PodInfo.parseFrom(sent.toByteArray()))).isEqualTo(pod);
    assertThat(Wire.podId(PodRef.parseFrom(Wire.ref(pod.id()).toByteArray()))).isEqualTo(pod.id());
  }

  @Property
  void anyBytesDecodeOrAreRejectedAsInvalidArgument(@ForAll byte[] bytes, @ForAll boolean withMagic) {
    byte[] input = bytes;
    if (withMagic && bytes.length >= 3) { // get past the magic and format to reach deeper checks
      input = bytes.clone();
      input[0] = 'A';
      input[1] = 'C';
      input[2] = 1;
    }
    try {
      assertThat(Wire.config(ConfigBytes.newBuilder().setEncoded(ByteString.copyFrom(input)).build())).isNotNull();
    } catch (StatusRuntimeException e) {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(e.getStatus().getDescription()).startsWith("config: ").contains("expected");
    }
  }
}

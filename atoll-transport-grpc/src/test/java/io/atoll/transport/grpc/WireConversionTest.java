package io.atoll.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.PodInfo;
import io.atoll.transport.grpc.proto.PodRef;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.util.Arrays;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** Wire conversions at their edges: exact round trips, and every malformed field named. */
class WireConversionTest {

  private static final PodId A = new PodId(new PodAddress("10.0.0.7", 7070), 0xCAFEL);
  private static final PodId B = new PodId(new PodAddress("pod-b.svc", 65535), -1L);

  private static Status statusOf(ThrowingCallable call) {
    try {
      call.call();
    } catch (StatusRuntimeException e) {
      return e.getStatus();
    } catch (Throwable t) {
      throw new AssertionError("expected a StatusRuntimeException, got " + t, t);
    }
    throw new AssertionError("expected a StatusRuntimeException, got none");
  }

  @Test
  void aPodRefCarriesHostPortAndIncarnation() {
    PodRef ref = Wire.ref(A);
    assertThat(ref.getHost()).isEqualTo("10.0.0.7");
    assertThat(ref.getPort()).isEqualTo(7070);
    assertThat(ref.getIncarnation()).isEqualTo(0xCAFEL);
    assertThat(Wire.podId(ref)).isEqualTo(A);
  }

  @Test
  void aPodInfoCarriesItsTlsPortAndAnOldOneReadsAsNone() throws IOException {
    Pod kv = new Pod(A, PodVersion.of("kv"), Pod.DEFAULT_ROLES, 8001);
    PodInfo info = PodInfo.parseFrom(Wire.info(kv).toByteArray());
    assertThat(info.getTlsPort()).isEqualTo(8001);
    assertThat(Wire.pod(info)).isEqualTo(kv);
    // A pod that predates the field (or has no TLS port) sends none.
    assertThat(Wire.pod(info.toBuilder().clearTlsPort().build()).tlsPort()).isZero();
    for (int bad : new int[] {-1, 65536}) {
      Status s = statusOf(() -> Wire.pod(info.toBuilder().setTlsPort(bad).build()));
      assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).isEqualTo("pod TLS port: " + bad + " (expected: 1..65535, or 0 for none)");
    }
  }

  @Test
  void aPodRefSurvivesTheBytesOfTheWire() throws IOException {
    // A negative incarnation is a fixed64 on the wire: all 64 bits come back.
    assertThat(Wire.podId(PodRef.parseFrom(Wire.ref(B).toByteArray()))).isEqualTo(B);
  }

  @Test
  void aPodRefWithABadPortIsInvalidAndNamesThePort() {
    for (int port : new int[] {0, -1, 65536}) {
      Status s = statusOf(() -> Wire.podId(Wire.ref(A).toBuilder().setPort(port).build()));
      assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).isEqualTo("pod: port: " + port + " (expected: 1..65535)");
    }
  }

  @Test
  void aPodRefWithoutAHostIsInvalid() {
    Status s = statusOf(() -> Wire.podId(PodRef.newBuilder().setPort(1).build()));
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).startsWith("pod: host: blank");
  }

  @Test
  void aPodInfoCarriesTheVersion() {
    Pod pod = new Pod(A, PodVersion.of("1.2.3-rc1"));
    PodInfo info = Wire.info(pod);
    assertThat(info.getVersion()).isEqualTo("1.2.3-rc1");
    assertThat(Wire.pod(info)).isEqualTo(pod);
  }

  @Test
  void aPodInfoWithoutItsPodIsInvalid() {
    Status s = statusOf(() -> Wire.pod(PodInfo.newBuilder().setVersion("1").build()));
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).isEqualTo("pod: missing (expected: host, port and incarnation)");
  }

  @Test
  void aPodInfoWithABadPodIsInvalidAndNamesThePod() {
    PodInfo info = Wire.info(new Pod(A, PodVersion.of("1"))).toBuilder()
        .setPod(Wire.ref(A).toBuilder().setPort(0)).build();
    Status s = statusOf(() -> Wire.pod(info));
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).startsWith("pod: port: 0");
  }

  @Test
  void aPodInfoWithAVersionOutsideItsLimitsIsInvalid() {
    PodInfo ok = Wire.info(new Pod(A, PodVersion.of("x".repeat(128))));
    assertThat(Wire.pod(ok).version().value()).hasSize(128);
    String[][] cases = {{"", "blank"}, {" ", "blank"}, {"x".repeat(129), "129 bytes of UTF-8"},
        {"\u00e9".repeat(65), "130 bytes of UTF-8"}};
    for (String[] bad : cases) {
      Status s = statusOf(() -> Wire.pod(ok.toBuilder().setVersion(bad[0]).build()));
      assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).startsWith("pod version: version: " + bad[1]);
    }
  }

  @Test
  void aConfigTravelsAsItsOwnEncoding() {
    ClusterConfig config = ClusterConfig.empty(300).toBuilder()
        .pod(new PodEntry(new Pod(A, PodVersion.of("1")), PodStatus.ACTIVE, 3))
        .pod(new PodEntry(new Pod(B, PodVersion.of("2")), PodStatus.GONE, 4))
        .claim(0, Claim.stable(A, 5))
        .claim(299, Claim.stable(B, 6))
        .build();
    ConfigBytes bytes = Wire.bytes(config);
    assertThat(bytes.getEncoded().toByteArray()).isEqualTo(config.encode());
    ClusterConfig back = Wire.config(bytes);
    assertThat(back).isEqualTo(config);
    assertThat(back.owner(299)).isEqualTo(B);
  }

  @Test
  void aMalformedConfigIsInvalidAndSaysWhy() {
    Status empty = statusOf(() -> Wire.config(ConfigBytes.getDefaultInstance()));
    assertThat(empty.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(empty.getDescription()).isEqualTo("config: config: truncated at byte 0 (expected: more bytes)");

    byte[] good = ClusterConfig.empty(8).encode();
    Status trailing = statusOf(() -> Wire.config(ConfigBytes.newBuilder()
        .setEncoded(ByteString.copyFrom(Arrays.copyOf(good, good.length + 1))).build()));
    assertThat(trailing.getDescription()).isEqualTo("config: config: 1 trailing bytes (expected: none)");

    for (int cut = 0; cut < good.length; cut++) {
      ConfigBytes truncated = ConfigBytes.newBuilder().setEncoded(ByteString.copyFrom(good, 0, cut)).build();
      assertThat(statusOf(() -> Wire.config(truncated)).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    }
  }

  @Test
  void describeGivesTheCodeAlone() {
    assertThat(Wire.describe(Status.UNAVAILABLE.asRuntimeException())).isEqualTo("UNAVAILABLE");
  }

  @Test
  void describeGivesTheCodeAndDescription() {
    assertThat(Wire.describe(Status.NOT_FOUND.withDescription("no such pod").asRuntimeException()))
        .isEqualTo("NOT_FOUND: no such pod");
  }

  @Test
  void describeEndsWithTheRootCauseMessageOnly() {
    Exception root = new java.net.ConnectException("Connection refused: /127.0.0.1:1");
    Exception middle = new IOException("connect failed", root);
    StatusRuntimeException e = Status.UNAVAILABLE.withDescription("io exception").withCause(middle)
        .asRuntimeException();
    assertThat(Wire.describe(e)).isEqualTo("UNAVAILABLE: io exception (Connection refused: /127.0.0.1:1)");
  }

  @Test
  void describeLeavesOutACauseWithoutAMessage() {
    StatusRuntimeException e = Status.INTERNAL.withCause(new IllegalStateException()).asRuntimeException();
    assertThat(Wire.describe(e)).isEqualTo("INTERNAL");
  }

  @Test
  void invalidIsAnInvalidArgumentWithTheDescription() {
    Status s = Wire.invalid("field: 3 (expected: 1)").getStatus();
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).isEqualTo("field: 3 (expected: 1)");
  }
}

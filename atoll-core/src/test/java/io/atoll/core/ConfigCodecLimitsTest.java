package io.atoll.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.slots.SlotState;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The decoder at each of its limits: one example just inside, one just outside, and the exact
 * message of the refusal. Inputs are written byte by byte in the format of {@link ConfigCodec}.
 */
class ConfigCodecLimitsTest {

  private static final int STABLE = SlotState.STABLE.ordinal();
  private static final int OFFLINE = SlotState.OFFLINE.ordinal();
  private static final int MIGRATING = SlotState.MIGRATING.ordinal();

  /** Writes the encoding by hand (also for {@link ConfigCodecSpacesLimitsTest}). */
  static final class Bytes {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Bytes b(int... values) {
      for (int v : values) {
        out.write(v);
      }
      return this;
    }

    Bytes varint(long v) {
      while ((v & ~0x7FL) != 0) {
        out.write((int) ((v & 0x7F) | 0x80));
        v >>>= 7;
      }
      out.write((int) v);
      return this;
    }

    Bytes fixed64(long v) {
      for (int i = 7; i >= 0; i--) {
        out.write((int) (v >>> (i * 8)));
      }
      return this;
    }

    Bytes str(String s) {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      varint(utf8.length);
      out.writeBytes(utf8);
      return this;
    }

    /** A pod: host, port, incarnation, version, status ACTIVE, epoch 1. */
    Bytes pod(String host, int port, long incarnation, String version) {
      return str(host).varint(port).fixed64(incarnation).str(version).b(PodStatus.ACTIVE.ordinal()).varint(1);
    }

    Bytes run(int length, int ownerPlusOne, int state, long epoch) {
      return varint(length).varint(ownerPlusOne).b(state).varint(epoch);
    }

    byte[] done() {
      return out.toByteArray();
    }
  }

  private static Bytes header(long size, long podCount) {
    return new Bytes().b('A', 'C', 1).varint(size).varint(podCount);
  }

  static void refused(byte[] bytes, String message) {
    assertThatThrownBy(() -> ClusterConfig.decode(bytes))
        .isInstanceOf(MalformedConfigException.class)
        .hasMessage(message);
  }

  @Test
  void theMagicAndFormatAreChecked() {
    byte[] good = header(1, 0).run(1, 0, OFFLINE, 0).done();
    assertThat(ClusterConfig.decode(good).size()).isEqualTo(1);
    for (int i : new int[] {0, 1}) {
      byte[] bad = good.clone();
      bad[i] = 'X';
      refused(bad, "config: bad magic (expected: bytes 'A' 'C')");
    }
    for (int format : new int[] {0, 6}) {
      byte[] bad = good.clone();
      bad[2] = (byte) format;
      refused(bad, "config format: " + format + " (expected: 1, 2, 3, 4 or 5)");
    }
    refused(new byte[0], "config: truncated at byte 0 (expected: more bytes)");
  }

  /** Format 4: one pod of the default role, its TLS port written after its roles. */
  private static byte[] withTlsPort(long tlsPort) {
    return new Bytes().b('A', 'C', 4).fixed64(0).fixed64(0).varint(1).varint(1).str("").varint(1).varint(1)
        .pod("127.0.0.1", 7001, 1, "kv").varint(1).str("").varint(tlsPort).run(1, 1, STABLE, 1).done();
  }

  @Test
  void format4CarriesEachPodsTlsPortAndOnlyWhenOneHasIt() {
    ClusterConfig c = ClusterConfig.decode(withTlsPort(8001));
    assertThat(c.pods().get(0).pod().tlsPort()).isEqualTo(8001);
    assertThat(c.encode()).isEqualTo(withTlsPort(8001));
    refused(withTlsPort(0), "config: format 4 without TLS ports (expected: format 1)");
    refused(withTlsPort(65536), "pod 0: pod 127.0.0.1:7001#1: TLS port 65536 (expected: 1..65535, or 0 for none)");
    // A config without TLS ports keeps its format byte for byte: readers that predate format 4 read it.
    ClusterConfig plain = ClusterConfig.empty(1).toBuilder().pod(new PodEntry(new Pod(new PodId(
        new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("kv")), PodStatus.ACTIVE, 1)).build();
    assertThat(plain.encode()[2]).isEqualTo((byte) 1);
  }

  @Test
  void theSizeIsOneToMaxSize() {
    refused(header(0, 0).done(), "config size: 0 (expected: 1..1048576)");
    refused(header(ClusterConfig.MAX_SIZE + 1, 0).done(), "config size: 1048577 (expected: 1..1048576)");
    ClusterConfig largest = ClusterConfig.decode(header(ClusterConfig.MAX_SIZE, 0)
        .run(ClusterConfig.MAX_SIZE, 0, OFFLINE, 3).done());
    assertThat(largest.size()).isEqualTo(ClusterConfig.MAX_SIZE);
    assertThat(largest.epoch(ClusterConfig.MAX_SIZE - 1)).isEqualTo(3);
    assertThat(largest.epoch()).isEqualTo(3);
  }

  @Test
  void aVarintIsAtMostIntMax() {
    // Integer.MAX_VALUE is a varint; the size check refuses it.
    refused(header(Integer.MAX_VALUE, 0).done(), "config size: 2147483647 (expected: 1..1048576)");
    refused(header(Integer.MAX_VALUE + 1L, 0).done(), "varint at byte 8: 2147483648 (expected: <= 2147483647)");
  }

  @Test
  void aVarlongIsAtMostNineBytes() {
    // Nine bytes carry 63 bits: the largest epoch.
    ClusterConfig c = ClusterConfig.decode(header(1, 0).run(1, 0, OFFLINE, Long.MAX_VALUE).done());
    assertThat(c.epoch(0)).isEqualTo(Long.MAX_VALUE);
    byte[] ten = header(1, 0).varint(1).varint(0).b(OFFLINE)
        .b(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00).done();
    refused(ten, "varint at byte 17: too long (expected: at most 9 bytes)");
  }

  @Test
  void thePodCountIsBoundedAndCheckedAgainstTheInputBeforeAllocating() {
    refused(header(1, ClusterConfig.MAX_PODS + 1).done(), "pod count: 65536 (expected: 0..65535)");
    refused(header(1, ClusterConfig.MAX_PODS).done(),
        "pod count: 65535 (expected: at most what 0 bytes can hold)");
    // A pod takes at least 13 bytes: 12 are refused up front, 13 get as far as reading the pod.
    refused(header(1, 1).b(new int[12]).done(), "pod count: 1 (expected: at most what 12 bytes can hold)");
    refused(header(1, 1).b(new int[13]).done(), "pod 0: host: blank (expected: a host name or IP address)");
  }

  @Test
  void aHostIsAtMost255BytesAndWithinTheInput() {
    String longest = "h".repeat(255);
    ClusterConfig c = ClusterConfig.decode(header(1, 1).pod(longest, 1, 1, "1").run(1, 1, STABLE, 1).done());
    assertThat(c.pods().get(0).id().address().host()).isEqualTo(longest);
    // Host length at byte 5 takes two bytes, so the string begins at byte 7.
    refused(header(1, 1).pod("h".repeat(256), 1, 1, "1").run(1, 1, STABLE, 1).done(),
        "string at byte 7: length 256 (expected: <= 255)");
    // Longer than what is left: 12 bytes follow the length.
    refused(header(1, 1).varint(20).b(new int[12]).done(), "string at byte 6: length 20 (expected: <= 12)");
    // Exactly what is left: the host is read, and the port after it is missing.
    refused(header(1, 1).varint(12).b(new int[12]).done(), "config: truncated at byte 18 (expected: more bytes)");
  }

  @Test
  void aVersionIsAtMost128Bytes() {
    String longest = "9".repeat(128);
    ClusterConfig c = ClusterConfig.decode(header(1, 1).pod("h", 1, 1, longest).run(1, 1, STABLE, 1).done());
    assertThat(c.pods().get(0).pod().version().value()).isEqualTo(longest);
    // The version's length is at byte 16, after host, port and incarnation; its text at byte 18.
    refused(header(1, 1).pod("h", 1, 1, "9".repeat(129)).run(1, 1, STABLE, 1).done(),
        "string at byte 18: length 129 (expected: <= 128)");
  }

  @Test
  void aPodStatusIsOneOfTheKnown() {
    byte[] bytes = header(1, 1).pod("h", 1, 1, "1").run(1, 1, STABLE, 1).done();
    int statusAt = 5 + 2 + 1 + 8 + 2;
    bytes[statusAt] = (byte) PodStatus.values().length;
    refused(bytes, "pod status: 2 (expected: 0..1)");
  }

  @Test
  void podsAreSortedAndUnique() {
    refused(header(1, 2).pod("h", 1, 1, "1").pod("h", 1, 1, "1").run(1, 0, OFFLINE, 0).done(),
        "pod 1: h:1#1 out of order (expected: sorted, unique pod ids)");
    refused(header(1, 2).pod("h", 1, 2, "1").pod("h", 1, 1, "1").run(1, 0, OFFLINE, 0).done(),
        "pod 1: h:1#1 out of order (expected: sorted, unique pod ids)");
    ClusterConfig c = ClusterConfig.decode(header(1, 2).pod("h", 1, 1, "1").pod("h", 1, 2, "1")
        .run(1, 2, STABLE, 1).done());
    assertThat(c.owner(0)).isEqualTo(new PodId(new PodAddress("h", 1), 2));
  }

  @Test
  void aRunCoversOneToTheRestOfThePositions() {
    refused(header(4, 0).run(0, 0, OFFLINE, 0).done(), "run at position 0: length 0 (expected: 1..4)");
    refused(header(4, 0).run(5, 0, OFFLINE, 0).done(), "run at position 0: length 5 (expected: 1..4)");
    refused(header(4, 0).run(1, 0, OFFLINE, 0).run(4, 0, OFFLINE, 1).done(),
        "run at position 1: length 4 (expected: 1..3)");
    ClusterConfig c = ClusterConfig.decode(header(4, 0).run(1, 0, OFFLINE, 0).run(3, 0, OFFLINE, 1).done());
    assertThat(c.epoch(3)).isEqualTo(1);
    refused(header(4, 0).run(4, 0, OFFLINE, 0).b(0).done(), "config: 1 trailing bytes (expected: none)");
    refused(header(4, 0).run(1, 0, OFFLINE, 0).done(), "config: truncated at byte 9 (expected: more bytes)");
  }

  @Test
  void anOwnerIsAListedPodOrNone() {
    byte[] last = header(2, 2).pod("h", 1, 1, "1").pod("h", 1, 2, "1").run(1, 2, STABLE, 1).run(1, 0, OFFLINE, 0)
        .done();
    assertThat(ClusterConfig.decode(last).owner(1)).isNull();
    refused(header(2, 2).pod("h", 1, 1, "1").pod("h", 1, 2, "1").run(1, 0, OFFLINE, 0).run(1, 3, STABLE, 1).done(),
        "run at position 1: owner 2 (expected: -1..1)");
    refused(header(1, 1).pod("h", 1, 1, "1").run(1, 0, STABLE, 1).done(),
        "run at position 0: state STABLE with owner -1 (expected: OFFLINE exactly when there is no owner)");
    refused(header(1, 1).pod("h", 1, 1, "1").run(1, 1, OFFLINE, 1).done(),
        "run at position 0: state OFFLINE with owner 0 (expected: OFFLINE exactly when there is no owner)");
  }

  @Test
  void aPeerIsAListedPod() {
    Bytes two = header(2, 2).pod("h", 1, 1, "1").pod("h", 1, 2, "1").run(1, 1, STABLE, 1);
    ClusterConfig c = ClusterConfig.decode(header(2, 2).pod("h", 1, 1, "1").pod("h", 1, 2, "1").run(1, 1, STABLE, 1)
        .varint(1).varint(1).b(MIGRATING).varint(2).varint(1).done());
    assertThat(c.claim(1).peer()).isEqualTo(new PodId(new PodAddress("h", 1), 2));
    refused(two.varint(1).varint(1).b(MIGRATING).varint(0).varint(1).done(),
        "run at position 1: peer -1 (expected: 0..1)");
    refused(header(1, 1).pod("h", 1, 1, "1").varint(1).varint(1).b(MIGRATING).varint(2).varint(1).done(),
        "run at position 0: peer 1 (expected: 0..0)");
  }

  @Test
  void aSlotStateIsOneOfTheKnown() {
    refused(header(1, 1).pod("h", 1, 1, "1").run(1, 1, SlotState.values().length, 1).done(),
        "slot state: 4 (expected: 0..3)");
  }

  @Test
  void incarnationsKeepAllSixtyFourBits() {
    for (long incarnation : new long[] {0x0102030405060708L, -1L, Long.MIN_VALUE, 0xFF00L}) {
      PodId id = new PodId(new PodAddress("10.1.2.3", 40000), incarnation);
      ClusterConfig c = ClusterConfig.empty(3).toBuilder()
          .pod(new PodEntry(new Pod(id, PodVersion.of("1")), PodStatus.ACTIVE, 2))
          .claim(1, Claim.stable(id, 5)).build();
      assertThat(ClusterConfig.decode(c.encode())).isEqualTo(c);
      assertThat(ClusterConfig.decode(c.encode()).owner(1).incarnation()).isEqualTo(incarnation);
    }
  }

  @Test
  void podsOfEveryHostAndVersionLengthRoundTrip() {
    // Every length moves the fields against the encoder's buffer boundaries.
    for (int host = 1; host <= 255; host++) {
      for (int port : new int[] {1, 200, 40000}) {
        roundTrip("h".repeat(host), port, "1.0");
      }
    }
    for (int version = 1; version <= 128; version++) {
      for (int host : new int[] {1, 96, 255}) {
        roundTrip("h".repeat(host), 40000, "9".repeat(version));
      }
    }
  }

  private static void roundTrip(String host, int port, String version) {
    ClusterConfig.Builder b = ClusterConfig.empty(2).toBuilder();
    PodId first = null;
    for (int i = 0; i < 3; i++) {
      PodId id = new PodId(new PodAddress(host, port), i);
      first = first == null ? id : first;
      b.pod(new PodEntry(new Pod(id, PodVersion.of(version)), PodStatus.ACTIVE, 1L << (7 * i)));
    }
    ClusterConfig c = b.claim(0, Claim.stable(first, 1)).build();
    assertThat(ClusterConfig.decode(c.encode())).isEqualTo(c);
  }

  @Test
  void aRunEndsWhereOnlyOneFieldChangesAroundItsSeventeenthPosition() {
    PodId a = new PodId(new PodAddress("h", 1), 1);
    PodId b = new PodId(new PodAddress("h", 1), 2);
    for (int length = 15; length <= 19; length++) {
      ClusterConfig.Builder byEpoch = ClusterConfig.empty(64).toBuilder()
          .pod(new PodEntry(new Pod(a, PodVersion.of("1")), PodStatus.ACTIVE, 1))
          .pod(new PodEntry(new Pod(b, PodVersion.of("1")), PodStatus.ACTIVE, 1));
      ClusterConfig.Builder byOwner = byEpoch.build().toBuilder();
      ClusterConfig.Builder byState = byEpoch.build().toBuilder();
      ClusterConfig.Builder byPeer = byEpoch.build().toBuilder();
      for (int k = 0; k < 64; k++) {
        boolean first = k < length;
        byEpoch.claim(k, Claim.stable(a, first ? 1 : 2));
        byOwner.claim(k, Claim.stable(first ? a : b, 1));
        byState.claim(k, new Claim(a, first ? SlotState.MIGRATING : SlotState.IMPORTING, b, 1));
        byPeer.claim(k, new Claim(a, SlotState.MIGRATING, first ? a : b, 1));
      }
      for (ClusterConfig c : new ClusterConfig[] {byEpoch.build(), byOwner.build(), byState.build(), byPeer.build()}) {
        ClusterConfig back = ClusterConfig.decode(c.encode());
        assertThat(back).isEqualTo(c);
        assertThat(back.claim(length)).isEqualTo(c.claim(length));
      }
    }
  }
}

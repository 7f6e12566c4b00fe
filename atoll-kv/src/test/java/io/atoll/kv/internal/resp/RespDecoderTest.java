package io.atoll.kv.internal.resp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RespDecoderTest {
  private static final RespLimits SMALL = new RespLimits(100, 8, 64, 1000);

  static List<Object> decode(RespLimits limits, byte[] input, boolean byteByByte) {
    EmbeddedChannel ch = new EmbeddedChannel(new RespDecoder(limits));
    if (byteByByte) {
      for (byte b : input) {
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
      }
    } else {
      ch.writeInbound(Unpooled.wrappedBuffer(input));
    }
    List<Object> out = new ArrayList<>();
    for (Object o; (o = ch.readInbound()) != null; ) {
      out.add(o);
    }
    ch.finishAndReleaseAll();
    return out;
  }

  static List<List<String>> strings(List<Object> decoded) {
    List<List<String>> result = new ArrayList<>();
    for (Object o : decoded) {
      if (o instanceof byte[][] args) {
        result.add(Arrays.stream(args).map(a -> new String(a, StandardCharsets.UTF_8)).toList());
      } else {
        result.add(List.of("!" + ((RespDecoder.ProtocolError) o).message()));
      }
    }
    return result;
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void pipelinedArraysDecodeTheSameWholeAndByteByByte() {
    byte[] in = b("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n");
    List<List<String>> expected = List.of(List.of("GET", "k"), List.of("SET", "k", ""), List.of("PING"));
    assertThat(strings(decode(SMALL, in, false))).isEqualTo(expected);
    assertThat(strings(decode(SMALL, in, true))).isEqualTo(expected);
  }

  @Test
  void binaryPayloadWithCrlfInsideIsKept() {
    byte[] in = b("*2\r\n$4\r\nECHO\r\n$4\r\na\r\nb\r\n");
    assertThat(strings(decode(SMALL, in, true))).containsExactly(List.of("ECHO", "a\r\nb"));
  }

  @Test
  void inlineCommandsWithQuotesAndEmptyLines() {
    byte[] in = b("PING\r\n\r\nSET k \"a b\\x41\" 'c\\'d'\nECHO x\r\n");
    assertThat(strings(decode(SMALL, in, true)))
        .containsExactly(List.of("PING"), List.of("SET", "k", "a bA", "c'd"), List.of("ECHO", "x"));
  }

  @Test
  void emptyAndNegativeArraysAreSkippedAsRedisDoes() {
    assertThat(strings(decode(SMALL, b("*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n"), true))).containsExactly(List.of("PING"));
  }

  @Test
  void malformedInputGetsRedisProtocolErrorsAndNothingAfterIt() {
    assertThat(strings(decode(SMALL, b("*1\r\n+PING\r\n*1\r\n$4\r\nPING\r\n"), true)))
        .containsExactly(List.of("!Protocol error: expected '$', got '+'"));
    assertThat(strings(decode(SMALL, b("*x\r\n"), false)))
        .containsExactly(List.of("!Protocol error: invalid multibulk length"));
    assertThat(strings(decode(SMALL, b("*1\r\n$-5\r\n"), false)))
        .containsExactly(List.of("!Protocol error: invalid bulk length"));
    assertThat(strings(decode(SMALL, b("SET \"a\n"), false)))
        .containsExactly(List.of("!Protocol error: unbalanced quotes in request"));
  }

  @Test
  void lengthsWithLeadingZerosAreRefusedAsRedisDoes() {
    assertThat(strings(decode(SMALL, b("*05\r\n"), false)))
        .containsExactly(List.of("!Protocol error: invalid multibulk length"));
    assertThat(strings(decode(SMALL, b("*1\r\n$04\r\nPING\r\n"), false)))
        .containsExactly(List.of("!Protocol error: invalid bulk length"));
    assertThat(strings(decode(SMALL, b("*1\r\n$-0\r\n"), false)))
        .containsExactly(List.of("!Protocol error: invalid bulk length"));
    assertThat(strings(decode(SMALL, b("*1\r\n$0\r\n\r\n"), false))).containsExactly(List.of(""));
  }

  @Test
  void lengthsAreCheckedBeforeThePayloadArrives() {
    // A declared bulk of 101 bytes (limit 100) is refused at its header, nothing buffered.
    assertThat(strings(decode(SMALL, b("*1\r\n$101\r\n"), false)))
        .containsExactly(List.of("!Protocol error: invalid bulk length"));
    assertThat(strings(decode(SMALL, b("*9\r\n"), false)))
        .containsExactly(List.of("!Protocol error: invalid multibulk length"));
    // A length line with no CRLF within the inline limit.
    assertThat(strings(decode(SMALL, b("*1\r\n$" + "1".repeat(70)), false)))
        .containsExactly(List.of("!Protocol error: too big bulk count string"));
    assertThat(strings(decode(SMALL, b("*" + "1".repeat(70)), false)))
        .containsExactly(List.of("!Protocol error: too big mbulk count string"));
    assertThat(strings(decode(SMALL, b("x".repeat(70)), true)))
        .containsExactly(List.of("!Protocol error: too big inline request"));
  }

  @Test
  void requestLargerThanTheQueryBufferIsRefused() {
    StringBuilder sb = new StringBuilder("*8\r\n");
    for (int i = 0; i < 8; i++) {
      sb.append("$100\r\n").append("v".repeat(100)).append("\r\n");
    }
    RespLimits tight = new RespLimits(100, 8, 64, 500);
    assertThat(strings(decode(tight, b(sb.toString()), false)).get(0).get(0))
        .startsWith("!Protocol error: request of more than 500 bytes");
  }

  @Test
  void anIncompleteRequestWaitsForItsRest() {
    assertThat(decode(SMALL, b("*2\r\n$3\r\nGET\r\n$1\r\n"), true)).isEmpty();
  }
}

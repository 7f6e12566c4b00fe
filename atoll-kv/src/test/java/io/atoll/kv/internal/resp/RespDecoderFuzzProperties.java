package io.atoll.kv.internal.resp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Fuzz of the decoder: random bytes, mutated valid frames, valid frames cut anywhere. */
class RespDecoderFuzzProperties {
  private static final RespLimits LIMITS = new RespLimits(256, 16, 128, 4096);

  /** Feeds {@code input} in chunks of {@code chunk} bytes; returns what came out. */
  private static List<Object> feed(byte[] input, int chunk) {
    EmbeddedChannel ch = new EmbeddedChannel(new RespDecoder(LIMITS));
    for (int i = 0; i < input.length; i += chunk) {
      ch.writeInbound(Unpooled.wrappedBuffer(input, i, Math.min(chunk, input.length - i)));
    }
    List<Object> out = new ArrayList<>();
    for (Object o; (o = ch.readInbound()) != null; ) {
      out.add(o);
    }
    assertThat(ch.isOpen()).isTrue(); // the decoder itself never closes; the handler does
    ch.finishAndReleaseAll();
    return out;
  }

  private static void checkShape(List<Object> out) {
    // Commands (each within the limits), then at most one protocol error, which is last.
    for (int i = 0; i < out.size(); i++) {
      Object o = out.get(i);
      if (o instanceof RespDecoder.ProtocolError e) {
        assertThat(i).isEqualTo(out.size() - 1);
        assertThat(e.message()).startsWith("Protocol error: ");
      } else {
        byte[][] args = (byte[][]) o;
        assertThat(args.length).isBetween(1, LIMITS.maxArrayLength());
        for (byte[] a : args) {
          assertThat(a.length).isLessThanOrEqualTo(Math.max(LIMITS.maxBulkLength(), LIMITS.maxInlineLength()));
        }
      }
    }
  }

  @Property
  void randomBytesNeverThrowAndYieldCommandsThenAtMostOneError(@ForAll @Size(max = 600) byte[] input,
      @ForAll @IntRange(min = 1, max = 64) int chunk) {
    checkShape(feed(input, chunk));
  }

  @Property
  void validFramesDecodeTheSameHoweverTheyAreCut(@ForAll("commands") List<List<byte[]>> commands,
      @ForAll @IntRange(min = 1, max = 32) int chunk) {
    byte[] wire = encode(commands);
    List<Object> whole = feed(wire, wire.length == 0 ? 1 : wire.length);
    List<Object> cut = feed(wire, chunk);
    assertThat(whole).hasSize(commands.size());
    assertThat(cut).hasSize(commands.size());
    for (int i = 0; i < commands.size(); i++) {
      assertThat((byte[][]) cut.get(i)).isDeepEqualTo(commands.get(i).toArray(new byte[0][]));
      assertThat((byte[][]) whole.get(i)).isDeepEqualTo(commands.get(i).toArray(new byte[0][]));
    }
  }

  @Property
  void mutatedFramesNeverThrow(@ForAll("commands") List<List<byte[]>> commands,
      @ForAll @IntRange(min = 0, max = 10_000) int where, @ForAll byte value,
      @ForAll @IntRange(min = 1, max = 16) int chunk) {
    byte[] wire = encode(commands);
    if (wire.length > 0) {
      wire[where % wire.length] = value;
    }
    checkShape(feed(wire, chunk));
  }

  @Provide
  Arbitrary<List<List<byte[]>>> commands() {
    Arbitrary<byte[]> arg = Arbitraries.bytes().array(byte[].class).ofMaxSize(40);
    Arbitrary<List<byte[]>> command = arg.list().ofMinSize(1).ofMaxSize(6);
    return command.list().ofMaxSize(5);
  }

  private static byte[] encode(List<List<byte[]>> commands) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (List<byte[]> c : commands) {
      out.writeBytes(("*" + c.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
      for (byte[] a : c) {
        out.writeBytes(("$" + a.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(a);
        out.writeBytes(new byte[] {'\r', '\n'});
      }
    }
    return out.toByteArray();
  }

}

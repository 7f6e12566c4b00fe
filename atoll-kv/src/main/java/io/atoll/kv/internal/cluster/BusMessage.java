package io.atoll.kv.internal.cluster;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One cluster-bus message: its kind, the sender, the sender's whole config, and the nodes the
 * sender suspects (its failure reports). The frame around it (a 4-byte length) is the channel's.
 *
 * @param kind PING, PONG or MEET
 * @param sender the sending node
 * @param config the sender's config
 * @param suspects the nodes the sender flags PFAIL or FAIL
 */
record BusMessage(Kind kind, PodId sender, ClusterConfig config, List<PodId> suspects) {

  /** Message kinds. */
  enum Kind { PING, PONG, MEET }

  static final int MAX_FRAME = 8 << 20;
  private static final int MAX_SUSPECTS = 65_535;

  void encode(ByteBuf out, byte[] encodedConfig) {
    out.writeByte(kind.ordinal());
    writeId(out, sender);
    out.writeInt(encodedConfig.length);
    out.writeBytes(encodedConfig);
    out.writeInt(suspects.size());
    for (PodId p : suspects) {
      writeId(out, p);
    }
  }

  /** Decodes one message; throws IllegalArgumentException (or the config's own) when malformed. */
  static BusMessage decode(ByteBuf in) {
    int k = in.readUnsignedByte();
    if (k >= Kind.values().length) {
      throw new IllegalArgumentException("bus message kind: " + k + " (expected: 0.." + (Kind.values().length - 1) + ")");
    }
    PodId sender = readId(in);
    int len = in.readInt();
    if (len < 0 || len > in.readableBytes()) {
      throw new IllegalArgumentException("config length: " + len + " (expected: 0.." + in.readableBytes() + ")");
    }
    byte[] bytes = new byte[len];
    in.readBytes(bytes);
    ClusterConfig config = ClusterConfig.decode(bytes);
    int n = in.readInt();
    if (n < 0 || n > MAX_SUSPECTS) {
      throw new IllegalArgumentException("suspects: " + n + " (expected: 0.." + MAX_SUSPECTS + ")");
    }
    List<PodId> suspects = new ArrayList<>(Math.min(n, 64));
    for (int i = 0; i < n; i++) {
      suspects.add(readId(in));
    }
    if (in.isReadable()) {
      throw new IllegalArgumentException("bus message: " + in.readableBytes() + " trailing bytes (expected: none)");
    }
    return new BusMessage(Kind.values()[k], sender, config, suspects);
  }

  private static void writeId(ByteBuf out, PodId id) {
    byte[] host = id.address().host().getBytes(StandardCharsets.UTF_8);
    out.writeShort(host.length);
    out.writeBytes(host);
    out.writeShort(id.address().port());
    out.writeLong(id.incarnation());
  }

  private static PodId readId(ByteBuf in) {
    int n = in.readUnsignedShort();
    if (n == 0 || n > 255 || n > in.readableBytes()) {
      throw new IllegalArgumentException("host length: " + n + " (expected: 1..255)");
    }
    String host = in.readCharSequence(n, StandardCharsets.UTF_8).toString();
    int port = in.readUnsignedShort();
    return new PodId(new PodAddress(host, port), in.readLong());
  }
}

package io.atoll.core;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The compact binary form of a {@link ClusterConfig}, for gossip and for stores.
 *
 * <pre>
 * magic 'A' 'C', format 1
 * varint size, varint podCount
 * per pod (sorted by id): host (varint length + UTF-8), varint port, 8-byte incarnation,
 *   version (varint length + UTF-8), status byte, varlong epoch
 * runs until size positions are covered: varint runLength, varint owner+1, state byte,
 *   [varint peer+1 when MIGRATING or IMPORTING], varlong epoch
 * </pre>
 *
 * <p>Consecutive positions with the same claim form one run, so a cluster whose slots sit in a
 * few ranges encodes in a few hundred bytes. The decoder checks every count and index before it
 * allocates, and rejects trailing bytes; the encoding of a config is unique.
 */
final class ConfigCodec {

  private static final byte MAGIC_0 = 'A';
  private static final byte MAGIC_1 = 'C';
  private static final byte FORMAT = 1;
  private static final int MAX_HOST = 255;
  private static final int MAX_VERSION = 128;

  private ConfigCodec() {}

  static byte[] encode(ClusterConfig config) {
    Out out = new Out(64 + config.rawPods().length * 48);
    out.b(MAGIC_0).b(MAGIC_1).b(FORMAT);
    int size = config.size();
    PodEntry[] pods = config.rawPods();
    out.varint(size).varint(pods.length);
    for (PodEntry p : pods) {
      out.string(p.id().address().host());
      out.varint(p.id().address().port());
      out.fixed64(p.id().incarnation());
      out.string(p.pod().version().value());
      out.b((byte) p.status().ordinal());
      out.varlong(p.epoch());
    }
    int k = 0;
    while (k < size) {
      int o = config.rawOwner(k);
      int pe = config.rawPeer(k);
      byte st = config.rawState(k);
      long ep = config.epoch(k);
      int end = k + 1;
      while (end < size && config.rawOwner(end) == o && config.rawPeer(end) == pe
          && config.rawState(end) == st && config.epoch(end) == ep) {
        end++;
      }
      out.varint(end - k).varint(o + 1).b(st);
      if (SlotState.ofOrdinal(st).hasPeer()) {
        out.varint(pe + 1);
      }
      out.varlong(ep);
      k = end;
    }
    return out.toArray();
  }

  static ClusterConfig decode(byte[] bytes) {
    In in = new In(bytes);
    if (in.b() != MAGIC_0 || in.b() != MAGIC_1) {
      throw new MalformedConfigException("config: bad magic (expected: bytes 'A' 'C')");
    }
    int format = in.b();
    if (format != FORMAT) {
      throw new MalformedConfigException("config format: " + format + " (expected: " + FORMAT + ")");
    }
    int size = in.varint();
    if (size < 1 || size > ClusterConfig.MAX_SIZE) {
      throw new MalformedConfigException("config size: " + size + " (expected: 1.." + ClusterConfig.MAX_SIZE + ")");
    }
    int podCount = in.varint();
    if (podCount < 0 || podCount > ClusterConfig.MAX_PODS) {
      throw new MalformedConfigException("pod count: " + podCount + " (expected: 0.." + ClusterConfig.MAX_PODS + ")");
    }
    // Each pod takes at least 13 bytes: refuse counts the input cannot hold before allocating.
    if ((long) podCount * 13 > in.remaining()) {
      throw new MalformedConfigException("pod count: " + podCount + " (expected: at most what " + in.remaining() + " bytes can hold)");
    }
    PodEntry[] pods = new PodEntry[podCount];
    for (int i = 0; i < podCount; i++) {
      try {
        String host = in.string(MAX_HOST);
        int port = in.varint();
        long incarnation = in.fixed64();
        String version = in.string(MAX_VERSION);
        PodStatus status = PodStatus.ofOrdinal(in.b());
        long epoch = in.varlong();
        pods[i] = new PodEntry(new Pod(new PodId(new PodAddress(host, port), incarnation), new PodVersion(version)),
            status, epoch);
      } catch (MalformedConfigException e) {
        throw e;
      } catch (IllegalArgumentException e) {
        throw new MalformedConfigException("pod " + i + ": " + e.getMessage());
      }
      if (i > 0 && pods[i - 1].id().compareTo(pods[i].id()) >= 0) {
        throw new MalformedConfigException("pod " + i + ": " + pods[i].id() + " out of order (expected: sorted, unique pod ids)");
      }
    }
    int[] owner = new int[size];
    int[] peer = new int[size];
    byte[] state = new byte[size];
    long[] epoch = new long[size];
    int k = 0;
    while (k < size) {
      int run = in.varint();
      if (run < 1 || run > size - k) {
        throw new MalformedConfigException("run at position " + k + ": length " + run + " (expected: 1.." + (size - k) + ")");
      }
      int o = in.varint() - 1;
      if (o < -1 || o >= podCount) {
        throw new MalformedConfigException("run at position " + k + ": owner " + o + " (expected: -1.." + (podCount - 1) + ")");
      }
      int stOrdinal = in.b();
      SlotState st = SlotState.ofOrdinal(stOrdinal);
      if ((o == -1) != (st == SlotState.OFFLINE)) {
        throw new MalformedConfigException("run at position " + k + ": state " + st + " with owner " + o
            + " (expected: OFFLINE exactly when there is no owner)");
      }
      int pe = -1;
      if (st.hasPeer()) {
        pe = in.varint() - 1;
        if (pe < 0 || pe >= podCount) {
          throw new MalformedConfigException("run at position " + k + ": peer " + pe + " (expected: 0.." + (podCount - 1) + ")");
        }
      }
      long ep = in.varlong();
      Arrays.fill(owner, k, k + run, o);
      Arrays.fill(peer, k, k + run, pe);
      Arrays.fill(state, k, k + run, (byte) stOrdinal);
      Arrays.fill(epoch, k, k + run, ep);
      k += run;
    }
    if (in.remaining() != 0) {
      throw new MalformedConfigException("config: " + in.remaining() + " trailing bytes (expected: none)");
    }
    return new ClusterConfig(pods, owner, peer, state, epoch);
  }

  private static final class Out {
    private byte[] buf;
    private int pos;

    Out(int capacity) {
      buf = new byte[capacity];
    }

    private void ensure(int n) {
      if (pos + n > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
      }
    }

    Out b(byte v) {
      ensure(1);
      buf[pos++] = v;
      return this;
    }

    Out varint(int v) {
      return varlong(v & 0xFFFFFFFFL);
    }

    Out varlong(long v) {
      ensure(10);
      while ((v & ~0x7FL) != 0) {
        buf[pos++] = (byte) ((v & 0x7F) | 0x80);
        v >>>= 7;
      }
      buf[pos++] = (byte) v;
      return this;
    }

    Out fixed64(long v) {
      ensure(8);
      for (int i = 7; i >= 0; i--) {
        buf[pos++] = (byte) (v >>> (i * 8));
      }
      return this;
    }

    Out string(String s) {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      varint(utf8.length);
      ensure(utf8.length);
      System.arraycopy(utf8, 0, buf, pos, utf8.length);
      pos += utf8.length;
      return this;
    }

    byte[] toArray() {
      return Arrays.copyOf(buf, pos);
    }
  }

  private static final class In {
    private final byte[] buf;
    private int pos;

    In(byte[] buf) {
      this.buf = buf;
    }

    int remaining() {
      return buf.length - pos;
    }

    int b() {
      if (pos >= buf.length) {
        throw new MalformedConfigException("config: truncated at byte " + pos + " (expected: more bytes)");
      }
      return buf[pos++] & 0xFF;
    }

    int varint() {
      long v = varlong();
      if (v > Integer.MAX_VALUE) {
        throw new MalformedConfigException("varint at byte " + pos + ": " + v + " (expected: <= " + Integer.MAX_VALUE + ")");
      }
      return (int) v;
    }

    long varlong() {
      long v = 0;
      for (int shift = 0; shift < 63; shift += 7) {
        int x = b();
        v |= (long) (x & 0x7F) << shift;
        if ((x & 0x80) == 0) {
          if (v < 0) {
            throw new MalformedConfigException("varint at byte " + pos + ": negative (expected: >= 0)");
          }
          return v;
        }
      }
      throw new MalformedConfigException("varint at byte " + pos + ": too long (expected: at most 9 bytes)");
    }

    long fixed64() {
      long v = 0;
      for (int i = 0; i < 8; i++) {
        v = (v << 8) | b();
      }
      return v;
    }

    String string(int maxLength) {
      int n = varint();
      if (n > maxLength || n > remaining()) {
        throw new MalformedConfigException("string at byte " + pos + ": length " + n
            + " (expected: <= " + Math.min(maxLength, remaining()) + ")");
      }
      String s = new String(buf, pos, n, StandardCharsets.UTF_8);
      pos += n;
      return s;
    }
  }
}

package io.atoll.core;

import io.atoll.core.slots.SlotState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The compact binary form of a {@link ClusterConfig}, for gossip and for stores.
 *
 * <pre>
 * magic 'A' 'C', format 1 (no cluster id), 2 (followed by the 16-byte cluster id), 3, 4 or 5
 *   (followed by the 16-byte cluster id, all zero for none)
 * varint size
 * [formats 3-5: varint spaceCount, per space in position order: role (varint length + UTF-8),
 *   varint count; the counts add up to size]
 * varint podCount
 * per pod (sorted by id): host (varint length + UTF-8), varint port, 8-byte incarnation,
 *   version (varint length + UTF-8), status byte, varlong epoch,
 *   [formats 3-5: varint roleCount, roles (varint length + UTF-8) sorted and unique]
 *   [formats 4, 5: varint tlsPort, 0 for none]
 * runs until size positions are covered: varint runLength, varint owner+1, state byte,
 *   [varint peer+1 when MIGRATING or IMPORTING; in format 5 also when STABLE, 0 for none],
 *   varlong epoch
 * </pre>
 *
 * <p>Consecutive positions with the same claim form one run, so a cluster whose slots sit in a
 * few ranges encodes in a few hundred bytes. The decoder checks every count and index before it
 * allocates, and rejects trailing bytes; the encoding of a config is unique.
 *
 * <p>Format 3 carries shard spaces and pod roles. It is written only for a config that has them
 * (more than the one default space, or a pod with a role other than the default), so a cluster
 * without roles writes format 1 or 2 byte for byte, and readers that predate spaces read it; a
 * format 3 that formats 1 or 2 could have carried is refused, keeping the encoding unique.
 *
 * <p>Format 4 is format 3 with each pod's TLS client port (an Atoll KV node's). It is written only
 * for a config in which some pod has one, so configs without TLS ports keep their earlier format
 * byte for byte, and a format 4 in which no pod has a TLS port is refused.
 *
 * <p>Format 5 is format 4 with the previous owner of STABLE claims ({@link Claim#previousOwner},
 * which the shard manager records for Atoll KV's slots). It is written only for a config that has
 * one, so every other config keeps its earlier format byte for byte (entity clusters never see
 * it), and a format 5 without one is refused. Readers that predate it refuse it with the format
 * error, so a KV cluster is upgraded whole (manager and nodes) before its manager writes one.
 */
final class ConfigCodec {

  private static final byte MAGIC_0 = 'A';
  private static final byte MAGIC_1 = 'C';
  private static final byte FORMAT = 1;
  private static final byte FORMAT_WITH_CLUSTER = 2;
  private static final byte FORMAT_WITH_SPACES = 3;
  private static final byte FORMAT_WITH_TLS_PORTS = 4;
  private static final byte FORMAT_WITH_PREVIOUS_OWNERS = 5;
  private static final int MAX_HOST = PodAddress.MAX_HOST_BYTES;
  private static final int MAX_VERSION = PodVersion.MAX_BYTES;
  /** Positions the encoder compares one by one before it searches a run's end vectorised. */
  private static final int SCALAR_RUN = 16;
  /** Runs up to this long are written by the decoder one position at a time, longer ones by fill. */
  private static final int SHORT_FILL = 8;
  /** The most bytes one run takes: four varints of at most 5, 5, 5 and 9 bytes, and a state byte. */
  private static final int MAX_RUN_BYTES = 25;

  private ConfigCodec() {}

  static byte[] encode(ClusterConfig config) {
    Out out = new Out(64 + config.rawPods().length * 48);
    ClusterId id = config.clusterId();
    PodEntry[] pods = config.rawPods();
    boolean previous = hasPreviousOwners(config);
    boolean tlsPorts = previous || hasTlsPorts(config);
    boolean spaced = tlsPorts || needsSpaces(config);
    if (spaced) {
      out.b(MAGIC_0).b(MAGIC_1).b(previous ? FORMAT_WITH_PREVIOUS_OWNERS
          : tlsPorts ? FORMAT_WITH_TLS_PORTS : FORMAT_WITH_SPACES);
      out.fixed64(id.high());
      out.fixed64(id.low());
    } else if (id.isNone()) { // the first format, byte for byte: readers that predate cluster ids read it
      out.b(MAGIC_0).b(MAGIC_1).b(FORMAT);
    } else {
      out.b(MAGIC_0).b(MAGIC_1).b(FORMAT_WITH_CLUSTER);
      out.fixed64(id.high());
      out.fixed64(id.low());
    }
    int size = config.size();
    out.varint(size);
    if (spaced) {
      List<Space> spaces = config.spaces().list();
      out.varint(spaces.size());
      for (Space sp : spaces) {
        out.string(sp.role());
        out.varint(sp.count());
      }
    }
    out.varint(pods.length);
    for (PodEntry p : pods) {
      out.string(p.id().address().host());
      out.varint(p.id().address().port());
      out.fixed64(p.id().incarnation());
      out.string(p.pod().version().value());
      out.b((byte) p.status().ordinal());
      out.varlong(p.epoch());
      if (spaced) {
        List<String> roles = p.pod().roles();
        out.varint(roles.size());
        for (String r : roles) {
          out.string(r);
        }
      }
      if (tlsPorts) {
        out.varint(p.pod().tlsPort());
      }
    }
    int[][] owners = config.ownerChunks();
    int[][] peers = config.peerChunks();
    byte[][] states = config.stateChunks();
    long[][] epochs = config.epochChunks();
    int chunks = owners.length;
    int c = 0;
    int[] co = owners[0];
    int[] cp = peers[0];
    byte[] cs = states[0];
    long[] ce = epochs[0];
    int i = 0; // the run's first index in chunk c
    int start = 0; // the run's first position
    while (true) {
      int o = co[i];
      int pe = cp[i];
      byte st = cs[i];
      long ep = ce[i];
      boolean whole = i == 0; // the run covers chunk c from its start
      i = runEnd(co, cp, cs, ce, i + 1, o, pe, st, ep);
      while (i == co.length) { // the run goes on into the next chunk, if any
        int next = c + 1;
        if (whole) { // it covers chunk c, so every following chunk that is chunk c, shared
          while (next < chunks && owners[next] == co && peers[next] == cp && states[next] == cs
              && epochs[next] == ce) {
            next++;
          }
        }
        if (next == chunks) {
          break;
        }
        c = next;
        co = owners[c];
        cp = peers[c];
        cs = states[c];
        ce = epochs[c];
        i = runEnd(co, cp, cs, ce, 0, o, pe, st, ep);
        whole = true;
      }
      int end = i == co.length ? size : (c << ClusterConfig.CHUNK_SHIFT) + i;
      out.ensure(MAX_RUN_BYTES);
      out.putVarlong(end - start).putVarlong(o + 1).put(st);
      if (writesPeer(previous, st)) {
        out.putVarlong(pe + 1);
      }
      out.putVarlong(ep);
      if (end == size) {
        break;
      }
      start = end;
    }
    return out.toArray();
  }

  private static final byte STABLE = (byte) SlotState.STABLE.ordinal();

  /** Whether a run in state {@code st} carries a peer: in MIGRATING and IMPORTING, and in format 5 STABLE. */
  private static boolean writesPeer(boolean previousOwners, byte st) {
    return ClusterConfig.slotState(st).hasPeer() || previousOwners && st == STABLE;
  }

  /** A peer chunk with no peer at all, to compare whole chunks against. */
  private static final int[] NO_PEERS = noPeers();

  private static int[] noPeers() {
    int[] a = new int[ClusterConfig.CHUNK];
    Arrays.fill(a, -1);
    return a;
  }

  /**
   * Whether {@code config} needs format 5: a STABLE claim that records its previous owner. Every
   * encode asks, entity configs too, so it skips a chunk shared with the one before it and finds a
   * chunk's first peer with one vectorised compare against a chunk of none; only a chunk with
   * peers (a migration, or a KV claim's previous owner) is looked at position by position.
   */
  private static boolean hasPreviousOwners(ClusterConfig config) {
    byte[][] states = config.stateChunks();
    int[][] peers = config.peerChunks();
    int[] lastPeers = null;
    byte[] lastStates = null;
    for (int c = 0; c < states.length; c++) {
      int[] pe = peers[c];
      byte[] st = states[c];
      if (pe == lastPeers && st == lastStates) {
        continue; // the chunk before, shared: already looked at
      }
      lastPeers = pe;
      lastStates = st;
      // Chunks are at most CHUNK long; mismatch is -1 when the chunk has no peer at all.
      int k = pe.length <= NO_PEERS.length ? Arrays.mismatch(pe, 0, pe.length, NO_PEERS, 0, pe.length) : 0;
      for (; k >= 0 && k < pe.length; k++) {
        if (pe[k] >= 0 && st[k] == STABLE) {
          return true;
        }
      }
    }
    return false;
  }

  /** Whether {@code config} needs format 4: a pod with a TLS client port. */
  private static boolean hasTlsPorts(ClusterConfig config) {
    for (PodEntry p : config.rawPods()) {
      if (p.pod().tlsPort() != 0) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code config} needs format 3: spaces other than one default space, or pod roles. */
  private static boolean needsSpaces(ClusterConfig config) {
    if (!config.spaces().isSingle()) {
      return true;
    }
    for (PodEntry p : config.rawPods()) {
      if (!p.pod().hasDefaultRoles()) {
        return true;
      }
    }
    return false;
  }

  /**
   * The first index at or after {@code from} in one chunk whose claim is not
   * {@code (o, pe, st, ep)}, or the chunk's length. Short runs are scanned one by one; once a run
   * is long, each array is searched with a vectorised {@link Arrays#mismatch} of the chunk against
   * itself shifted by one, which finds where its value first changes.
   */
  private static int runEnd(int[] co, int[] cp, byte[] cs, long[] ce, int from,
      int o, int pe, byte st, long ep) {
    int n = co.length;
    int i = from;
    int scalarEnd = Math.min(n, from + SCALAR_RUN);
    while (i < scalarEnd && co[i] == o && cp[i] == pe && cs[i] == st && ce[i] == ep) {
      i++;
    }
    if (i < scalarEnd || i == n) {
      return i;
    }
    // [from, i) holds the claim and i > 0: find where each array first differs from its previous.
    int end = n;
    int m = Arrays.mismatch(ce, i - 1, end - 1, ce, i, end);
    if (m >= 0) {
      end = i + m;
    }
    m = Arrays.mismatch(co, i - 1, end - 1, co, i, end);
    if (m >= 0) {
      end = i + m;
    }
    m = Arrays.mismatch(cs, i - 1, end - 1, cs, i, end);
    if (m >= 0) {
      end = i + m;
    }
    m = Arrays.mismatch(cp, i - 1, end - 1, cp, i, end);
    if (m >= 0) {
      end = i + m;
    }
    return end;
  }

  static ClusterConfig decode(byte[] bytes) {
    In in = new In(bytes);
    if (in.b() != MAGIC_0 || in.b() != MAGIC_1) {
      throw new MalformedConfigException("config: bad magic (expected: bytes 'A' 'C')");
    }
    int format = in.b();
    ClusterId clusterId = ClusterId.NONE;
    if (format == FORMAT_WITH_CLUSTER) {
      clusterId = new ClusterId(in.fixed64(), in.fixed64());
      if (clusterId.isNone()) {
        throw new MalformedConfigException("config: cluster id 0 in format 2 (expected: format 1 for no cluster id)");
      }
    } else if (format == FORMAT_WITH_SPACES || format == FORMAT_WITH_TLS_PORTS
        || format == FORMAT_WITH_PREVIOUS_OWNERS) {
      clusterId = new ClusterId(in.fixed64(), in.fixed64());
    } else if (format != FORMAT) {
      throw new MalformedConfigException("config format: " + format + " (expected: " + FORMAT + ", "
          + FORMAT_WITH_CLUSTER + ", " + FORMAT_WITH_SPACES + ", " + FORMAT_WITH_TLS_PORTS + " or "
          + FORMAT_WITH_PREVIOUS_OWNERS + ")");
    }
    boolean previous = format == FORMAT_WITH_PREVIOUS_OWNERS;
    boolean tlsPorts = format == FORMAT_WITH_TLS_PORTS || previous;
    boolean spaced = format == FORMAT_WITH_SPACES || tlsPorts;
    int size = in.varint();
    if (size < 1 || size > ClusterConfig.MAX_SIZE) {
      throw new MalformedConfigException("config size: " + size + " (expected: 1.." + ClusterConfig.MAX_SIZE + ")");
    }
    Spaces spaces = spaced ? spaces(in, size) : Spaces.single(size);
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
        List<String> roles = spaced ? roles(in) : Pod.DEFAULT_ROLES;
        int tlsPort = tlsPorts ? in.varint() : 0;
        pods[i] = new PodEntry(new Pod(new PodId(new PodAddress(host, port), incarnation), new PodVersion(version),
            roles, tlsPort), status, epoch);
      } catch (MalformedConfigException e) {
        throw e;
      } catch (IllegalArgumentException e) {
        throw new MalformedConfigException("pod " + i + ": " + e.getMessage());
      }
      if (i > 0 && pods[i - 1].id().compareTo(pods[i].id()) >= 0) {
        throw new MalformedConfigException("pod " + i + ": " + pods[i].id() + " out of order (expected: sorted, unique pod ids)");
      }
    }
    // Claims go into chunks (see ClusterConfig). A chunk a run covers whole is shared by every
    // chunk that run covers, so a config in a few ranges decodes into a few small arrays.
    int chunks = ClusterConfig.chunkCount(size);
    int[][] owner = new int[chunks][];
    int[][] peer = new int[chunks][];
    byte[][] state = new byte[chunks][];
    long[][] epoch = new long[chunks][];
    long maxEpoch = ClusterConfig.maxPodEpoch(pods);
    int c = -1; // the chunk being filled: positions [chunkStart, chunkEnd)
    int chunkStart = 0;
    int chunkEnd = 0;
    int[] co = null;
    int[] cp = null;
    byte[] cs = null;
    long[] ce = null;
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
      SlotState st = ClusterConfig.slotState(stOrdinal);
      if ((o == -1) != (st == SlotState.OFFLINE)) {
        throw new MalformedConfigException("run at position " + k + ": state " + st + " with owner " + o
            + " (expected: OFFLINE exactly when there is no owner)");
      }
      int pe = -1;
      if (writesPeer(previous, (byte) stOrdinal)) {
        pe = in.varint() - 1;
        int lowest = st.hasPeer() ? 0 : -1; // a STABLE claim may record no previous owner
        if (pe < lowest || pe >= podCount) {
          throw new MalformedConfigException("run at position " + k + ": peer " + pe + " (expected: " + lowest
              + ".." + (podCount - 1) + ")");
        }
      }
      long ep = in.varlong();
      maxEpoch = Math.max(maxEpoch, ep);
      byte stByte = (byte) stOrdinal;
      int end = k + run;
      int[] wholeOwner = null; // this run's chunks, for the chunks it covers whole
      int[] wholePeer = null;
      byte[] wholeState = null;
      long[] wholeEpoch = null;
      while (k < end) {
        if (k == chunkEnd) { // the next chunk
          c++;
          chunkStart = chunkEnd;
          chunkEnd = chunkStart + ClusterConfig.chunkLength(size, c);
          if (end >= chunkEnd && chunkEnd - chunkStart == ClusterConfig.CHUNK) {
            if (wholeOwner == null) {
              wholeOwner = filled(new int[ClusterConfig.CHUNK], o);
              wholePeer = pe == o ? wholeOwner : filled(new int[ClusterConfig.CHUNK], pe);
              wholeState = filled(new byte[ClusterConfig.CHUNK], stByte);
              wholeEpoch = filled(new long[ClusterConfig.CHUNK], ep);
            }
            owner[c] = wholeOwner;
            peer[c] = wholePeer;
            state[c] = wholeState;
            epoch[c] = wholeEpoch;
            k = chunkEnd;
            continue;
          }
          co = owner[c] = new int[chunkEnd - chunkStart];
          cp = peer[c] = new int[chunkEnd - chunkStart];
          cs = state[c] = new byte[chunkEnd - chunkStart];
          ce = epoch[c] = new long[chunkEnd - chunkStart];
        }
        int from = k - chunkStart;
        int to = Math.min(end, chunkEnd) - chunkStart;
        if (to - from <= SHORT_FILL) {
          for (int x = from; x < to; x++) {
            co[x] = o;
            cp[x] = pe;
            cs[x] = stByte;
            ce[x] = ep;
          }
        } else {
          Arrays.fill(co, from, to, o);
          Arrays.fill(cp, from, to, pe);
          Arrays.fill(cs, from, to, stByte);
          Arrays.fill(ce, from, to, ep);
        }
        k = chunkStart + to;
      }
    }
    if (in.remaining() != 0) {
      throw new MalformedConfigException("config: " + in.remaining() + " trailing bytes (expected: none)");
    }
    ClusterConfig config = new ClusterConfig(pods, size, owner, peer, state, epoch, maxEpoch, clusterId, spaces);
    if (previous) {
      if (!hasPreviousOwners(config)) {
        throw new MalformedConfigException("config: format 5 without a previous owner (expected: format "
            + (hasTlsPorts(config) ? FORMAT_WITH_TLS_PORTS : needsSpaces(config) ? FORMAT_WITH_SPACES
                : clusterId.isNone() ? FORMAT : FORMAT_WITH_CLUSTER) + ")");
      }
      return config;
    }
    if (tlsPorts && !hasTlsPorts(config)) {
      throw new MalformedConfigException("config: format 4 without TLS ports (expected: format "
          + (needsSpaces(config) ? FORMAT_WITH_SPACES : clusterId.isNone() ? FORMAT : FORMAT_WITH_CLUSTER) + ")");
    }
    if (format == FORMAT_WITH_SPACES && !needsSpaces(config)) {
      throw new MalformedConfigException("config: format 3 without spaces or roles (expected: format "
          + (clusterId.isNone() ? FORMAT : FORMAT_WITH_CLUSTER) + ")");
    }
    return config;
  }

  /** The space table of format 3, checked against {@code size}. */
  private static Spaces spaces(In in, int size) {
    int count = in.varint();
    // Each space takes at least two bytes.
    if (count < 1 || count > Spaces.MAX_SPACES || (long) count * 2 > in.remaining()) {
      throw new MalformedConfigException("space count: " + count + " (expected: 1.." + Spaces.MAX_SPACES
          + " and at most what " + in.remaining() + " bytes can hold)");
    }
    List<Space> list = new ArrayList<>(count);
    long first = 0;
    for (int i = 0; i < count; i++) {
      String role = in.string(Space.MAX_ROLE_BYTES);
      int n = in.varint();
      if (n < 1 || first + n > size) {
        throw new MalformedConfigException("space " + i + " ('" + role + "'): count " + n + " (expected: 1.."
            + (size - first) + ", the spaces cover exactly " + size + " positions)");
      }
      try {
        list.add(new Space(role, (int) first, n));
      } catch (IllegalArgumentException e) {
        throw new MalformedConfigException("space " + i + ": " + e.getMessage());
      }
      first += n;
    }
    if (first != size) {
      throw new MalformedConfigException("spaces: " + first + " positions (expected: " + size + ")");
    }
    try {
      return Spaces.ofList(list);
    } catch (IllegalArgumentException e) {
      throw new MalformedConfigException("spaces: " + e.getMessage());
    }
  }

  /** A pod's roles in format 3: sorted and unique, as the encoder writes them. */
  private static List<String> roles(In in) {
    int count = in.varint();
    if (count < 1 || count > Pod.MAX_ROLES || count > in.remaining()) {
      throw new MalformedConfigException("role count: " + count + " (expected: 1.." + Pod.MAX_ROLES + ")");
    }
    List<String> roles = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      String r = Space.checkRole(in.string(Space.MAX_ROLE_BYTES));
      if (i > 0 && roles.get(i - 1).compareTo(r) >= 0) {
        throw new MalformedConfigException("role '" + r + "' out of order (expected: sorted, unique roles)");
      }
      roles.add(r);
    }
    return roles;
  }

  private static int[] filled(int[] a, int v) {
    Arrays.fill(a, v);
    return a;
  }

  private static byte[] filled(byte[] a, byte v) {
    Arrays.fill(a, v);
    return a;
  }

  private static long[] filled(long[] a, long v) {
    Arrays.fill(a, v);
    return a;
  }

  private static final class Out {
    private byte[] buf;
    private int pos;

    Out(int capacity) {
      buf = new byte[capacity];
    }

    void ensure(int n) {
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

    /** Writes a byte; the caller has {@link #ensure ensured} room. */
    void put(byte v) {
      buf[pos++] = v;
    }

    /** Writes a varint; the caller has {@link #ensure ensured} room. */
    Out putVarlong(long v) {
      while ((v & ~0x7FL) != 0) {
        buf[pos++] = (byte) ((v & 0x7F) | 0x80);
        v >>>= 7;
      }
      buf[pos++] = (byte) v;
      return this;
    }

    void fixed64(long v) {
      ensure(8);
      for (int i = 7; i >= 0; i--) {
        buf[pos++] = (byte) (v >>> (i * 8));
      }
    }

    void string(String s) {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      varint(utf8.length);
      ensure(utf8.length);
      System.arraycopy(utf8, 0, buf, pos, utf8.length);
      pos += utf8.length;
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

    /** At most nine bytes of seven bits: 63 bits, so the value is never negative. */
    long varlong() {
      long v = 0;
      for (int shift = 0; shift < 63; shift += 7) {
        int x = b();
        v |= (long) (x & 0x7F) << shift;
        if ((x & 0x80) == 0) {
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

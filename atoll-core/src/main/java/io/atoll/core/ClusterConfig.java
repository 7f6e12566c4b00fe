package io.atoll.core;

import io.atoll.core.slots.SlotState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * An immutable, versioned table of pods and of the owner of every shard or slot.
 *
 * <p>Positions are numbered {@code 0..size-1}: shard {@code s} lives at position {@code s - 1},
 * hash slot {@code s} at position {@code s}. Each position holds a {@link Claim}: owner, state,
 * peer (the migration peer, or a STABLE claim's {@linkplain Claim#previousOwner previous owner})
 * and the epoch at which the claim was made.
 *
 * <p><b>Merging</b> follows Garnet's rule, made total so that it forms a join semilattice: a pod's
 * entry is replaced only by one with a strictly greater epoch, and a position's claim only by a
 * claim with a greater epoch. Equal epochs with different contents (which a single manager never
 * writes) are settled by a fixed order on the contents, so {@link #merge} is commutative,
 * associative and idempotent, and never lowers an epoch.
 *
 * <p><b>Layout.</b> Pods are kept sorted by {@link PodId}; claims are parallel primitive arrays,
 * owners and peers as indexes into the pod table. Because the table is sorted, comparing two
 * owner indexes of the same table compares the pods, which keeps merge a tight loop over
 * primitive arrays. Each array is cut into chunks of 1024 positions, and chunks are
 * copy-on-write: arrays are never written once a config holds them, so configs share every chunk
 * they have in common. A merge copies only the chunks where both inputs win somewhere and shares
 * the rest; a config derived from another by gossip shares most of its memory with it; an empty
 * config, or a decoded one whose runs span whole chunks, holds one chunk per distinct value. The
 * price is one more (cached) load per read.
 *
 * <p><b>Cluster identity.</b> A config carries its cluster's {@link ClusterId}; configs of two
 * clusters never merge ({@link ClusterMismatchException}). {@link ClusterId#NONE} (an empty
 * config, a config of Atoll KV nodes) merges with any id and takes it.
 *
 * <p><b>Spaces.</b> The positions are laid out in shard {@link Spaces spaces}, contiguous ranges
 * each tied to a role and placed only on pods that host that role ({@link Pod#roles()}). The
 * layout grows only by spaces appended after the last ({@link Spaces#append}), so every existing
 * position keeps its number: a config merges with one whose layout extends its own (it is read as
 * {@link #extendTo extended}, the new positions empty); configs of any other two layouts never
 * merge. A config without roles has one default space ({@link Spaces#single}).
 *
 * <p>Instances are immutable and thread-safe; readers on the hot path hold one reference and read
 * it without locks. Change one with {@link #toBuilder()}.
 */
public final class ClusterConfig {

  /** The most positions a config may hold. */
  public static final int MAX_SIZE = 1 << 20;
  /** The most pods a config may list. */
  public static final int MAX_PODS = 65_535;

  private static final int NO_POD = -1;

  /** log2 of {@link #CHUNK}. */
  static final int CHUNK_SHIFT = 10;
  /** Positions per chunk; every chunk but the last holds exactly this many. */
  static final int CHUNK = 1 << CHUNK_SHIFT;
  private static final int CHUNK_MASK = CHUNK - 1;

  private final PodEntry[] pods; // sorted by id, unique
  private final int size;
  // Chunk c holds positions [c * CHUNK, min((c + 1) * CHUNK, size)). Never written once here.
  private final int[][] owner; // index into pods, or NO_POD
  private final int[][] peer; // index into pods, or NO_POD
  private final byte[][] state; // SlotState ordinal
  private final long[][] epoch;
  private final long maxEpoch;
  private final ClusterId clusterId;
  private final Spaces spaces;

  /**
   * Takes the chunk tables as they are, without copying: neither they nor their chunks may be
   * written afterwards, which is what lets configs share them. {@code maxEpoch} must be the
   * greatest epoch of {@code pods} and of the claims (0 if none is greater).
   */
  ClusterConfig(PodEntry[] pods, int size, int[][] owner, int[][] peer, byte[][] state,
      long[][] epoch, long maxEpoch) {
    this(pods, size, owner, peer, state, epoch, maxEpoch, ClusterId.NONE, Spaces.single(size));
  }

  /** As above, in the cluster {@code clusterId}, laid out in {@code spaces} (of {@code size} positions). */
  ClusterConfig(PodEntry[] pods, int size, int[][] owner, int[][] peer, byte[][] state,
      long[][] epoch, long maxEpoch, ClusterId clusterId, Spaces spaces) {
    this.clusterId = Objects.requireNonNull(clusterId, "clusterId");
    this.spaces = Objects.requireNonNull(spaces, "spaces");
    if (spaces.size() != size) {
      throw new IllegalArgumentException("spaces: " + spaces.size() + " positions (expected: " + size + ")");
    }
    this.pods = pods;
    this.size = size;
    this.owner = owner;
    this.peer = peer;
    this.state = state;
    this.epoch = epoch;
    this.maxEpoch = maxEpoch;
  }

  /** The number of chunks of a config of {@code size} positions. */
  static int chunkCount(int size) {
    return (size + CHUNK - 1) >>> CHUNK_SHIFT;
  }

  /** The number of positions chunk {@code c} holds in a config of {@code size} positions. */
  static int chunkLength(int size, int c) {
    return Math.min(CHUNK, size - (c << CHUNK_SHIFT));
  }

  /** The greatest pod-entry epoch, 0 if none is greater. */
  static long maxPodEpoch(PodEntry[] pods) {
    long max = 0;
    for (PodEntry p : pods) {
      max = Math.max(max, p.epoch());
    }
    return max;
  }

  /**
   * A config of {@code size} positions, all OFFLINE at epoch 0, and no pods.
   *
   * @throws IllegalArgumentException if size is not in {@code 1..MAX_SIZE}
   */
  public static ClusterConfig empty(int size) {
    return empty(Spaces.single(size));
  }

  /** A config laid out in {@code spaces}, all OFFLINE at epoch 0, and no pods. */
  public static ClusterConfig empty(Spaces spaces) {
    int size = spaces.size();
    checkSize(size);
    int chunks = chunkCount(size);
    int[][] owner = new int[chunks][];
    byte[][] state = new byte[chunks][];
    long[][] epoch = new long[chunks][];
    int[] noPods = null;
    byte[] offline = null;
    long[] zeros = null;
    for (int c = 0; c < chunks; c++) {
      int n = chunkLength(size, c);
      if (noPods == null || noPods.length != n) { // one shared chunk, one more for a short last
        noPods = new int[n];
        Arrays.fill(noPods, NO_POD);
        offline = new byte[n];
        zeros = new long[n];
      }
      owner[c] = noPods;
      state[c] = offline;
      epoch[c] = zeros;
    }
    return new ClusterConfig(new PodEntry[0], size, owner, owner, state, epoch, 0, ClusterId.NONE, spaces);
  }

  private static final SlotState[] SLOT_STATES = SlotState.values();

  /** The slot state with the given ordinal, for decoders. */
  static SlotState slotState(int ordinal) {
    if (ordinal < 0 || ordinal >= SLOT_STATES.length) {
      throw new MalformedConfigException(
          "slot state: " + ordinal + " (expected: 0.." + (SLOT_STATES.length - 1) + ")");
    }
    return SLOT_STATES[ordinal];
  }

  static void checkSize(int size) {
    if (size < 1 || size > MAX_SIZE) {
      throw new IllegalArgumentException("size: " + size + " (expected: 1.." + MAX_SIZE + ")");
    }
  }

  /**
   * A config of {@code size} positions, all OFFLINE at epoch 0, no pods, in the cluster {@code id}.
   *
   * @throws IllegalArgumentException if size is not in {@code 1..MAX_SIZE}
   */
  public static ClusterConfig empty(int size, ClusterId id) {
    return empty(size).withClusterId(id);
  }

  /** The cluster this config belongs to ({@link ClusterId#NONE} if none yet). */
  public ClusterId clusterId() {
    return clusterId;
  }

  /**
   * This config in the cluster {@code id}: the same pods and claims (shared, not copied).
   *
   * @throws ClusterMismatchException if this config already belongs to another cluster
   */
  public ClusterConfig withClusterId(ClusterId id) {
    Objects.requireNonNull(id, "id");
    if (id.equals(clusterId)) {
      return this;
    }
    if (!clusterId.isNone()) {
      throw new ClusterMismatchException(clusterId, id);
    }
    return new ClusterConfig(pods, size, owner, peer, state, epoch, maxEpoch, id, spaces);
  }

  /** The number of positions (shards or slots). */
  public int size() {
    return size;
  }

  /** How the positions are laid out in shard spaces ({@link Spaces#single} without roles). */
  public Spaces spaces() {
    return spaces;
  }

  /**
   * The positions of {@code space} as a config of their own ({@code count} positions, one default
   * space, the same pods and cluster): what an allocation strategy decides over for one space.
   * Position {@code k} of the slice is position {@code space.first() + k} here.
   *
   * @throws IllegalArgumentException if {@code space} is not one of this config's spaces
   */
  public ClusterConfig slice(Space space) {
    if (!space.equals(spaces.of(space.role()))) {
      throw new IllegalArgumentException("slice: " + space + " (expected: one of " + spaces.list() + ")");
    }
    if (spaces.isSingle()) {
      return this;
    }
    int n = space.count();
    int chunks = chunkCount(n);
    int[][] o = new int[chunks][];
    int[][] p = new int[chunks][];
    byte[][] st = new byte[chunks][];
    long[][] e = new long[chunks][];
    long max = maxPodEpoch(pods);
    for (int c = 0; c < chunks; c++) {
      int len = chunkLength(n, c);
      o[c] = new int[len];
      p[c] = new int[len];
      st[c] = new byte[len];
      e[c] = new long[len];
      for (int k = 0; k < len; k++) {
        int pos = space.first() + (c << CHUNK_SHIFT) + k;
        o[c][k] = rawOwner(pos);
        p[c][k] = rawPeer(pos);
        st[c][k] = rawState(pos);
        e[c][k] = epoch(pos);
        max = Math.max(max, e[c][k]);
      }
    }
    return new ClusterConfig(pods, n, o, p, st, e, max, clusterId, Spaces.single(n));
  }

  /**
   * This config laid out in {@code longer}, a layout that {@link Spaces#extendsLayout extends} this
   * one: the same pods and claims at the same positions, and every appended position OFFLINE at
   * epoch 0 with no owner (the bottom of the merge order, as in {@link #empty}). Shares every full
   * chunk with this config.
   *
   * @throws IllegalArgumentException if {@code longer} does not extend this config's layout
   */
  public ClusterConfig extendTo(Spaces longer) {
    Objects.requireNonNull(longer, "longer");
    if (longer.equals(spaces)) {
      return this;
    }
    if (!longer.extendsLayout(spaces)) {
      throw new IllegalArgumentException("extend: spaces " + longer + " (expected: " + spaces
          + " with spaces appended after its last)");
    }
    int n = longer.size();
    int chunks = chunkCount(n);
    int[][] o = Arrays.copyOf(owner, chunks);
    int[][] p = Arrays.copyOf(peer, chunks);
    byte[][] st = Arrays.copyOf(state, chunks);
    long[][] e = Arrays.copyOf(epoch, chunks);
    int last = owner.length - 1; // this config's last chunk, maybe short: grown with empty positions
    for (int c = last; c < chunks; c++) {
      int len = chunkLength(n, c);
      int kept = c == last ? owner[last].length : 0;
      if (kept == len) {
        continue;
      }
      o[c] = Arrays.copyOf(c == last ? owner[c] : new int[0], len);
      p[c] = Arrays.copyOf(c == last ? peer[c] : new int[0], len);
      st[c] = Arrays.copyOf(c == last ? state[c] : new byte[0], len);
      e[c] = Arrays.copyOf(c == last ? epoch[c] : new long[0], len);
      Arrays.fill(o[c], kept, len, NO_POD);
      Arrays.fill(p[c], kept, len, NO_POD);
      // state OFFLINE (ordinal 0) and epoch 0: what copyOf fills in
    }
    return new ClusterConfig(pods, n, o, p, st, e, maxEpoch, clusterId, longer);
  }

  /** The greatest epoch anywhere in this config: of a pod entry or of a claim. */
  public long epoch() {
    return maxEpoch;
  }

  /** Every pod entry, members and tombstones, sorted by pod id. */
  public List<PodEntry> pods() {
    return Collections.unmodifiableList(Arrays.asList(pods));
  }

  /** The pods whose status is {@link PodStatus#ACTIVE}, sorted by id. */
  public List<Pod> activePods() {
    List<Pod> result = new ArrayList<>(pods.length);
    for (PodEntry p : pods) {
      if (p.status() == PodStatus.ACTIVE) {
        result.add(p.pod());
      }
    }
    return result;
  }

  /** Whether some pod listed as {@link PodStatus#ACTIVE} hosts {@code role}. */
  public boolean hasActiveHost(String role) {
    for (PodEntry p : pods) {
      if (p.status() == PodStatus.ACTIVE && p.pod().hosts(role)) {
        return true;
      }
    }
    return false;
  }

  /** The entry of the pod with this id, if listed. */
  public Optional<PodEntry> pod(PodId id) {
    int i = indexOf(id);
    return i < 0 ? Optional.empty() : Optional.of(pods[i]);
  }

  private int indexOf(PodId id) {
    int lo = 0;
    int hi = pods.length - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = pods[mid].id().compareTo(id);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -1;
  }

  /** The owner at {@code position}, or null. The hot-path read: no allocation. */
  public PodId owner(int position) {
    int o = rawOwner(position);
    return o == NO_POD ? null : pods[o].id();
  }

  /** The owner's entry at {@code position}, or null. No allocation. */
  public PodEntry ownerEntry(int position) {
    int o = rawOwner(position);
    return o == NO_POD ? null : pods[o];
  }

  /** The state at {@code position}. */
  public SlotState state(int position) {
    return slotState(rawState(position));
  }

  /** The epoch of the claim at {@code position}. */
  public long epoch(int position) {
    return epoch[position >>> CHUNK_SHIFT][position & CHUNK_MASK];
  }

  /** The whole claim at {@code position}. */
  public Claim claim(int position) {
    int o = rawOwner(position);
    int p = rawPeer(position);
    return new Claim(o == NO_POD ? null : pods[o].id(), slotState(rawState(position)),
        p == NO_POD ? null : pods[p].id(), epoch(position));
  }

  /** Whether the pod with this id is listed and {@link PodStatus#ACTIVE}. No allocation. */
  public boolean isActive(PodId id) {
    int i = indexOf(id);
    return i >= 0 && pods[i].status() == PodStatus.ACTIVE;
  }

  /**
   * The owner at {@code position} if it is listed as {@link PodStatus#ACTIVE}, else null: the
   * pod a message for that position may go to. No allocation.
   */
  public PodId activeOwner(int position) {
    int o = rawOwner(position);
    return o == NO_POD || pods[o].status() != PodStatus.ACTIVE ? null : pods[o].id();
  }

  /** How many positions have no owner. */
  public int unownedCount() {
    int n = 0;
    for (int[] chunk : owner) {
      for (int o : chunk) {
        if (o == NO_POD) {
          n++;
        }
      }
    }
    return n;
  }

  /** How many positions each listed pod owns (pods owning nothing map to 0). */
  public Map<PodId, Integer> ownedCounts() {
    int[] counts = new int[pods.length];
    for (int[] chunk : owner) {
      for (int o : chunk) {
        if (o != NO_POD) {
          counts[o]++;
        }
      }
    }
    Map<PodId, Integer> result = new TreeMap<>();
    for (int i = 0; i < pods.length; i++) {
      result.put(pods[i].id(), counts[i]);
    }
    return result;
  }

  /** The positions each owner holds, in ascending order; unowned positions are left out. */
  public Map<PodId, List<Integer>> positionsByOwner() {
    Map<PodId, List<Integer>> result = new HashMap<>();
    for (int c = 0; c < owner.length; c++) {
      int[] chunk = owner[c];
      for (int i = 0; i < chunk.length; i++) {
        if (chunk[i] != NO_POD) {
          result.computeIfAbsent(pods[chunk[i]].id(), k -> new ArrayList<>()).add((c << CHUNK_SHIFT) + i);
        }
      }
    }
    return result;
  }

  /**
   * Merges two configs by Garnet's rule (see the class comment). Returns {@code this} or
   * {@code other} itself when one already contains the other, so repeated gossip allocates
   * nothing.
   *
   * @throws IllegalArgumentException if the layouts differ and neither extends the other
   * @throws ClusterMismatchException if the configs belong to two clusters
   */
  public ClusterConfig merge(ClusterConfig other) {
    if (other == this) {
      return this;
    }
    if (!other.spaces.equals(spaces)) {
      // A layout grown by appended spaces merges with the layout it grew from: the shorter config
      // is read as its extension (the new positions empty, the bottom of the order), so merge
      // stays a join. Any other pair of layouts, or of sizes, never merges.
      if (other.spaces.extendsLayout(spaces)) {
        return extendTo(other.spaces).merge(other);
      }
      if (spaces.extendsLayout(other.spaces)) {
        return merge(other.extendTo(spaces));
      }
      if (other.size() != size()) {
        throw new IllegalArgumentException(
            "merge: size " + other.size() + " (expected: " + size() + ", the same number of positions)");
      }
      throw new IllegalArgumentException("merge: spaces " + other.spaces + " (expected: " + spaces
          + ", the same layout or one grown from it by appended spaces)");
    }
    ClusterId id = clusterId;
    if (!other.clusterId.equals(clusterId)) {
      if (clusterId.isNone()) {
        id = other.clusterId;
      } else if (!other.clusterId.isNone()) {
        throw new ClusterMismatchException(clusterId, other.clusterId);
      }
    }
    // 1. The pod tables: a sorted merge; per id the entry with the greater (epoch, contents).
    PodEntry[] a = pods;
    PodEntry[] b = other.pods;
    PodEntry[] merged = new PodEntry[a.length + b.length];
    int[] mapA = new int[a.length];
    int[] mapB = new int[b.length];
    int i = 0;
    int j = 0;
    int n = 0;
    boolean podsFromA = true; // merged table equals a's
    boolean podsFromB = true; // merged table equals b's
    boolean sameIndexesA = true; // every pod of a keeps its index in the merged table
    boolean sameIndexesB = true;
    while (i < a.length || j < b.length) {
      int c = i == a.length ? 1 : j == b.length ? -1 : a[i].id().compareTo(b[j].id());
      if (c < 0) {
        podsFromB = false;
        sameIndexesA &= i == n;
        mapA[i++] = n;
        merged[n++] = a[i - 1];
      } else if (c > 0) {
        podsFromA = false;
        sameIndexesB &= j == n;
        mapB[j++] = n;
        merged[n++] = b[j - 1];
      } else {
        int w = PodEntry.compareForMerge(a[i], b[j]);
        if (w > 0) {
          podsFromB = false;
        } else if (w < 0) {
          podsFromA = false;
        }
        merged[n] = w >= 0 ? a[i] : b[j];
        sameIndexesA &= i == n;
        sameIndexesB &= j == n;
        mapA[i++] = n;
        mapB[j++] = n;
        n++;
      }
    }
    if (n != merged.length) {
      merged = Arrays.copyOf(merged, n);
    }
    // 2. The claims: per position the greater (epoch, owner, state, peer). Owner and peer are
    // compared as merged-table indexes, which orders them by pod id. Usually no pod moved in the
    // table (equal tables, or new pods sorted last), so each side's own owner and peer chunks are
    // already merged-table indexes; otherwise they are translated once, up front.
    int[][] ao = sameIndexesA ? owner : remap(owner, mapA);
    int[][] ap = sameIndexesA ? peer : remap(peer, mapA);
    int[][] bo = sameIndexesB ? other.owner : remap(other.owner, mapB);
    int[][] bp = sameIndexesB ? other.peer : remap(other.peer, mapB);
    byte[][] as = state;
    byte[][] bs = other.state;
    long[][] ae = epoch;
    long[][] be = other.epoch;
    int chunks = ao.length;
    int[][] mo = new int[chunks][];
    int[][] mp = new int[chunks][];
    byte[][] ms = new byte[chunks][];
    long[][] me = new long[chunks][];
    boolean claimsFromA = true; // every merged claim equals a's
    boolean claimsFromB = true;
    int[] wins = null; // per chunk, the positions a wins from the front, b's from the back
    for (int c = 0; c < chunks; c++) {
      int[] oa = ao[c];
      int[] ob = bo[c];
      int[] pa = ap[c];
      int[] pb = bp[c];
      byte[] sa = as[c];
      byte[] sb = bs[c];
      long[] ea = ae[c];
      long[] eb = be[c];
      int len = oa.length;
      int k = (oa == ob && pa == pb && sa == sb && ea == eb) ? len // shared chunks
          : firstDifference(oa, pa, sa, ea, ob, pb, sb, eb, len);
      if (k == len) { // the same claims in the whole chunk
        mo[c] = oa;
        mp[c] = pa;
        ms[c] = sa;
        me[c] = ea;
        continue;
      }
      if (wins == null) {
        wins = new int[Math.min(CHUNK, size)];
      }
      int winsA = 0;
      int winsB = 0;
      for (; k < len; k++) {
        boolean aWins;
        long x = ea[k];
        long y = eb[k];
        if (x != y) {
          aWins = x > y;
        } else {
          int u = oa[k];
          int v = ob[k];
          if (u != v) {
            aWins = u > v;
          } else {
            u = sa[k];
            v = sb[k];
            if (u != v) {
              aWins = u > v;
            } else {
              u = pa[k];
              v = pb[k];
              if (u == v) {
                continue; // the same claim
              }
              aWins = u > v;
            }
          }
        }
        if (aWins) {
          wins[winsA++] = k;
        } else {
          wins[wins.length - ++winsB] = k;
        }
      }
      if (winsB == 0) { // a's claims in the whole chunk
        claimsFromB = false;
        mo[c] = oa;
        mp[c] = pa;
        ms[c] = sa;
        me[c] = ea;
      } else if (winsA == 0) { // b's claims in the whole chunk
        claimsFromA = false;
        mo[c] = ob;
        mp[c] = pb;
        ms[c] = sb;
        me[c] = eb;
      } else if (winsA >= winsB) { // a's chunk with b's winning positions patched in
        claimsFromA = false;
        claimsFromB = false;
        int from = wins.length - winsB;
        mo[c] = patch(oa, ob, wins, from, wins.length);
        mp[c] = patch(pa, pb, wins, from, wins.length);
        ms[c] = patch(sa, sb, wins, from, wins.length);
        me[c] = patch(ea, eb, wins, from, wins.length);
      } else { // b's chunk with a's winning positions patched in
        claimsFromA = false;
        claimsFromB = false;
        mo[c] = patch(ob, oa, wins, 0, winsA);
        mp[c] = patch(pb, pa, wins, 0, winsA);
        ms[c] = patch(sb, sa, wins, 0, winsA);
        me[c] = patch(eb, ea, wins, 0, winsA);
      }
    }
    if (podsFromA && claimsFromA) {
      return withClusterId(id);
    }
    if (podsFromB && claimsFromB) {
      return other.withClusterId(id);
    }
    // Every merged epoch is one of the inputs' and dominates theirs, so the maximum is theirs.
    return new ClusterConfig(merged, size, mo, mp, ms, me, Math.max(maxEpoch, other.maxEpoch), id, spaces);
  }

  /**
   * The first index below {@code len} where the claims of two chunks differ, or {@code len} if
   * none. Each {@link Arrays#mismatch} is vectorised, and each narrows the range of the next.
   */
  private static int firstDifference(int[] oa, int[] pa, byte[] sa, long[] ea,
      int[] ob, int[] pb, byte[] sb, long[] eb, int len) {
    int end = len;
    int m = Arrays.mismatch(ea, 0, end, eb, 0, end);
    if (m >= 0) {
      end = m;
    }
    m = Arrays.mismatch(oa, 0, end, ob, 0, end);
    if (m >= 0) {
      end = m;
    }
    m = Arrays.mismatch(sa, 0, end, sb, 0, end);
    if (m >= 0) {
      end = m;
    }
    m = Arrays.mismatch(pa, 0, end, pb, 0, end);
    if (m >= 0) {
      end = m;
    }
    return end;
  }

  /** Pod indexes translated to merged-table indexes by {@code map}; NO_POD stays NO_POD. */
  private static int[][] remap(int[][] chunks, int[] map) {
    int[] shifted = new int[map.length + 1]; // shifted[index + 1], so NO_POD needs no branch
    shifted[0] = NO_POD;
    System.arraycopy(map, 0, shifted, 1, map.length);
    int[][] result = new int[chunks.length][];
    for (int c = 0; c < chunks.length; c++) {
      int[] from = chunks[c];
      if (c > 0 && from == chunks[c - 1]) {
        result[c] = result[c - 1]; // keep sharing what was shared
        continue;
      }
      int[] to = new int[from.length];
      for (int k = 0; k < from.length; k++) {
        to[k] = shifted[from[k] + 1];
      }
      result[c] = to;
    }
    return result;
  }

  /**
   * {@code base} with {@code patch[k]} at each index {@code k} in {@code positions[from, to)}:
   * {@code base} itself when that changes nothing, else a patched copy.
   */
  private static int[] patch(int[] base, int[] patch, int[] positions, int from, int to) {
    int[] result = base;
    for (int x = from; x < to; x++) {
      int k = positions[x];
      if (result[k] != patch[k]) {
        if (result == base) {
          result = base.clone();
        }
        result[k] = patch[k];
      }
    }
    return result;
  }

  private static byte[] patch(byte[] base, byte[] patch, int[] positions, int from, int to) {
    byte[] result = base;
    for (int x = from; x < to; x++) {
      int k = positions[x];
      if (result[k] != patch[k]) {
        if (result == base) {
          result = base.clone();
        }
        result[k] = patch[k];
      }
    }
    return result;
  }

  private static long[] patch(long[] base, long[] patch, int[] positions, int from, int to) {
    long[] result = base;
    for (int x = from; x < to; x++) {
      int k = positions[x];
      if (result[k] != patch[k]) {
        if (result == base) {
          result = base.clone();
        }
        result[k] = patch[k];
      }
    }
    return result;
  }

  /**
   * This config without the pod entries that {@code authority}, a config of the manager, has
   * pruned: entries it does not list although they are no newer than its epoch. The manager writes
   * every pod entry at the epoch of the config that carries it and never drops one except by
   * pruning, so its config at epoch {@code E} lists every entry of epoch {@code <= E} it still
   * keeps; any other such entry here is a tombstone it pruned (or an older version of one, which
   * must not come back as a live pod). Entries a claim of this config still names are kept (a
   * later config from the manager drops them once it has moved those claims on). Merging stays a
   * semilattice: this is applied to a view after a merge, never inside one. Returns {@code this}
   * when nothing is dropped.
   *
   * @throws IllegalArgumentException if the sizes differ
   */
  public ClusterConfig withoutPrunedBy(ClusterConfig authority) {
    if (authority.size() != size) {
      throw new IllegalArgumentException(
          "prune: size " + authority.size() + " (expected: " + size + ", the same number of positions)");
    }
    long top = authority.epoch();
    List<PodId> candidates = null;
    for (PodEntry e : pods) {
      if (e.epoch() <= top && authority.indexOf(e.id()) < 0) {
        if (candidates == null) {
          candidates = new ArrayList<>();
        }
        candidates.add(e.id());
      }
    }
    if (candidates == null) {
      return this;
    }
    boolean[] named = new boolean[pods.length];
    for (int c = 0; c < owner.length; c++) {
      for (int o : owner[c]) {
        if (o != NO_POD) {
          named[o] = true;
        }
      }
      for (int o : peer[c]) {
        if (o != NO_POD) {
          named[o] = true;
        }
      }
    }
    Builder b = null;
    for (PodId id : candidates) {
      if (!named[indexOf(id)]) {
        b = b == null ? toBuilder() : b;
        b.removePod(id);
      }
    }
    return b == null ? this : b.build();
  }

  /** A builder that starts from this config. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Encodes this config compactly; see {@link ConfigCodec}. */
  public byte[] encode() {
    return ConfigCodec.encode(this);
  }

  /**
   * Decodes bytes made by {@link #encode()}.
   *
   * @throws MalformedConfigException if the bytes are not a valid encoding; it says what was wrong
   */
  public static ClusterConfig decode(byte[] bytes) {
    return ConfigCodec.decode(bytes);
  }

  // Package-private raw access for the codec. The chunk arrays must not be written.
  PodEntry[] rawPods() {
    return pods;
  }

  int rawOwner(int position) {
    return owner[position >>> CHUNK_SHIFT][position & CHUNK_MASK];
  }

  int rawPeer(int position) {
    return peer[position >>> CHUNK_SHIFT][position & CHUNK_MASK];
  }

  byte rawState(int position) {
    return state[position >>> CHUNK_SHIFT][position & CHUNK_MASK];
  }

  int[][] ownerChunks() {
    return owner;
  }

  int[][] peerChunks() {
    return peer;
  }

  byte[][] stateChunks() {
    return state;
  }

  long[][] epochChunks() {
    return epoch;
  }

  @Override
  public boolean equals(Object o) {
    // Equal sizes cut into equal chunks, so comparing chunk by chunk compares the positions.
    return o instanceof ClusterConfig c
        && size == c.size
        && clusterId.equals(c.clusterId)
        && spaces.equals(c.spaces)
        && Arrays.equals(pods, c.pods)
        && Arrays.deepEquals(owner, c.owner)
        && Arrays.deepEquals(peer, c.peer)
        && Arrays.deepEquals(state, c.state)
        && Arrays.deepEquals(epoch, c.epoch);
  }

  @Override
  public int hashCode() {
    return Objects.hash(Arrays.hashCode(pods), Arrays.deepHashCode(owner), Arrays.deepHashCode(epoch));
  }

  @Override
  public String toString() {
    return "ClusterConfig{" + (clusterId.isNone() ? "" : "cluster=" + clusterId + ", ") + "size=" + size()
        + (spaces.isSingle() ? "" : ", spaces=" + spaces)
        + ", epoch=" + maxEpoch + ", pods=" + Arrays.toString(pods)
        + ", owned=" + ownedCounts() + "}";
  }

  /**
   * Builds a new config from an existing one. Not thread-safe; use from one thread. A claim may
   * name only pods listed in the built config.
   */
  public static final class Builder {
    private final TreeMap<PodId, PodEntry> pods = new TreeMap<>();
    private final PodId[] owner;
    private final PodId[] peer;
    private final byte[] state;
    private final long[] epoch;
    private ClusterId clusterId;
    private final Spaces spaces;

    Builder(ClusterConfig from) {
      clusterId = from.clusterId;
      spaces = from.spaces;
      for (PodEntry p : from.pods) {
        pods.put(p.id(), p);
      }
      int size = from.size();
      owner = new PodId[size];
      peer = new PodId[size];
      state = new byte[size];
      epoch = new long[size];
      for (int k = 0; k < size; k++) {
        owner[k] = from.owner(k);
        int p = from.rawPeer(k);
        peer[k] = p == NO_POD ? null : from.pods[p].id();
        state[k] = from.rawState(k);
        epoch[k] = from.epoch(k);
      }
    }

    /** Adds or replaces a pod's entry. */
    public Builder pod(PodEntry entry) {
      pods.put(entry.id(), entry);
      return this;
    }

    /**
     * Puts the config in the cluster {@code id}.
     *
     * @throws ClusterMismatchException if it already belongs to another cluster
     */
    public Builder clusterId(ClusterId id) {
      Objects.requireNonNull(id, "id");
      if (!clusterId.isNone() && !clusterId.equals(id)) {
        throw new ClusterMismatchException(clusterId, id);
      }
      clusterId = id;
      return this;
    }

    /** Removes a pod's entry entirely (no tombstone); it must own no position when built. */
    public Builder removePod(PodId id) {
      pods.remove(id);
      return this;
    }

    /** Sets the claim at {@code position}. */
    public Builder claim(int position, Claim claim) {
      Objects.checkIndex(position, owner.length);
      owner[position] = claim.owner();
      peer[position] = claim.peer();
      state[position] = (byte) claim.state().ordinal();
      epoch[position] = claim.epoch();
      return this;
    }

    /** Builds the config. @throws IllegalArgumentException if a claim names an unlisted pod */
    public ClusterConfig build() {
      if (pods.size() > MAX_PODS) {
        throw new IllegalArgumentException("pods: " + pods.size() + " (expected: <= " + MAX_PODS + ")");
      }
      PodEntry[] table = pods.values().toArray(new PodEntry[0]);
      Map<PodId, Integer> index = new HashMap<>(table.length * 2);
      for (int i = 0; i < table.length; i++) {
        index.put(table[i].id(), i);
      }
      int size = owner.length;
      int chunks = chunkCount(size);
      int[][] o = new int[chunks][];
      int[][] p = new int[chunks][];
      byte[][] s = new byte[chunks][];
      long[][] e = new long[chunks][];
      long max = maxPodEpoch(table);
      for (int c = 0; c < chunks; c++) {
        int start = c << CHUNK_SHIFT;
        int n = chunkLength(size, c);
        o[c] = new int[n];
        p[c] = new int[n];
        for (int i = 0; i < n; i++) {
          o[c][i] = indexOrThrow(index, owner[start + i], start + i);
          p[c][i] = indexOrThrow(index, peer[start + i], start + i);
          max = Math.max(max, epoch[start + i]);
        }
        s[c] = Arrays.copyOfRange(state, start, start + n);
        e[c] = Arrays.copyOfRange(epoch, start, start + n);
      }
      return new ClusterConfig(table, size, o, p, s, e, max, clusterId, spaces);
    }

    private static int indexOrThrow(Map<PodId, Integer> index, PodId id, int position) {
      if (id == null) {
        return NO_POD;
      }
      Integer i = index.get(id);
      if (i == null) {
        throw new IllegalArgumentException(
            "position " + position + ": pod " + id + " is not listed (expected: add its entry with pod(...))");
      }
      return i;
    }
  }
}

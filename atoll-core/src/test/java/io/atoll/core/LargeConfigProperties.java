package io.atoll.core;

import io.atoll.core.slots.SlotState;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Configs of up to a few thousand positions, so several {@link ClusterConfig#CHUNK chunks}, with
 * short last chunks, runs across chunk edges, and chunks shared between configs (families derived
 * from one ancestor, merged, and decoded). Each config is checked against a plain model of its
 * pods and claims, and merge against a straightforward reference merge of the models.
 */
class LargeConfigProperties {

  private static final int CHUNK = ClusterConfig.CHUNK;
  private static final List<String> VERSIONS = List.of("1.0", "1.1", "2.0");

  /** What a config should hold: its pods by id, and one claim per position. */
  record Model(TreeMap<PodId, PodEntry> pods, Claim[] claims) {

    ClusterConfig build() {
      ClusterConfig.Builder b = ClusterConfig.empty(claims.length).toBuilder();
      pods.values().forEach(b::pod);
      for (int k = 0; k < claims.length; k++) {
        b.claim(k, claims[k]);
      }
      return b.build();
    }

    boolean sameAs(Model o) {
      return pods.equals(o.pods) && Arrays.equals(claims, o.claims);
    }
  }

  /** A config and its model. */
  record Member(ClusterConfig config, Model model) {}

  // ---------------------------------------------------------------- reference implementations

  /** The merge rule of the class comment, position by position, on models. */
  static Model referenceMerge(Model a, Model b) {
    TreeMap<PodId, PodEntry> pods = new TreeMap<>(a.pods());
    for (PodEntry e : b.pods().values()) {
      PodEntry mine = pods.get(e.id());
      if (mine == null || PodEntry.compareForMerge(mine, e) < 0) {
        pods.put(e.id(), e);
      }
    }
    Map<PodId, Integer> index = new HashMap<>();
    for (PodId id : pods.keySet()) {
      index.put(id, index.size());
    }
    Claim[] claims = new Claim[a.claims().length];
    for (int k = 0; k < claims.length; k++) {
      Claim x = a.claims()[k];
      Claim y = b.claims()[k];
      int c = Long.compare(x.epoch(), y.epoch());
      if (c == 0) {
        c = Integer.compare(indexOf(index, x.owner()), indexOf(index, y.owner()));
      }
      if (c == 0) {
        c = Integer.compare(x.state().ordinal(), y.state().ordinal());
      }
      if (c == 0) {
        c = Integer.compare(indexOf(index, x.peer()), indexOf(index, y.peer()));
      }
      claims[k] = c >= 0 ? x : y;
    }
    return new Model(pods, claims);
  }

  private static int indexOf(Map<PodId, Integer> index, PodId id) {
    return id == null ? -1 : index.get(id);
  }

  /** The encoding {@link ConfigCodec} documents, written from a model. */
  static byte[] referenceEncode(Model m) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write('A');
    out.write('C');
    out.write(1);
    varlong(out, m.claims().length);
    varlong(out, m.pods().size());
    Map<PodId, Integer> index = new HashMap<>();
    for (PodEntry p : m.pods().values()) {
      index.put(p.id(), index.size());
      string(out, p.id().address().host());
      varlong(out, p.id().address().port());
      for (int i = 7; i >= 0; i--) {
        out.write((int) (p.id().incarnation() >>> (i * 8)));
      }
      string(out, p.pod().version().value());
      out.write(p.status().ordinal());
      varlong(out, p.epoch());
    }
    Claim[] claims = m.claims();
    for (int k = 0; k < claims.length; ) {
      int end = k + 1;
      while (end < claims.length && claims[end].equals(claims[k])) {
        end++;
      }
      varlong(out, end - k);
      varlong(out, indexOf(index, claims[k].owner()) + 1);
      out.write(claims[k].state().ordinal());
      if (claims[k].peer() != null) {
        varlong(out, indexOf(index, claims[k].peer()) + 1);
      }
      varlong(out, claims[k].epoch());
      k = end;
    }
    return out.toByteArray();
  }

  private static void varlong(ByteArrayOutputStream out, long v) {
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static void string(ByteArrayOutputStream out, String s) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    varlong(out, utf8.length);
    out.writeBytes(utf8);
  }

  /** Asserts that a config holds exactly what its model says, through every public reader. */
  static void assertMatches(ClusterConfig c, Model m) {
    int size = m.claims().length;
    assertThat(c.size()).isEqualTo(size);
    assertThat(c.pods()).containsExactlyElementsOf(m.pods().values());
    Claim[] claims = new Claim[size];
    PodId[] owners = new PodId[size];
    PodEntry[] ownerEntries = new PodEntry[size];
    SlotState[] states = new SlotState[size];
    long[] epochs = new long[size];
    long maxEpoch = 0;
    int unowned = 0;
    Map<PodId, Integer> counts = new TreeMap<>();
    Map<PodId, List<Integer>> byOwner = new HashMap<>();
    for (PodEntry p : m.pods().values()) {
      counts.put(p.id(), 0);
      maxEpoch = Math.max(maxEpoch, p.epoch());
    }
    for (int k = 0; k < size; k++) {
      claims[k] = c.claim(k);
      owners[k] = c.owner(k);
      ownerEntries[k] = c.ownerEntry(k);
      states[k] = c.state(k);
      epochs[k] = c.epoch(k);
      Claim x = m.claims()[k];
      assertThat(owners[k]).isEqualTo(x.owner());
      assertThat(ownerEntries[k]).isEqualTo(x.owner() == null ? null : m.pods().get(x.owner()));
      assertThat(states[k]).isEqualTo(x.state());
      assertThat(epochs[k]).isEqualTo(x.epoch());
      PodEntry ownerOfK = x.owner() == null ? null : m.pods().get(x.owner());
      assertThat(c.activeOwner(k)).isEqualTo(
          ownerOfK != null && ownerOfK.status() == PodStatus.ACTIVE ? x.owner() : null);
      if (x.owner() == null) {
        unowned++;
      }
      maxEpoch = Math.max(maxEpoch, x.epoch());
      if (x.owner() != null) {
        counts.merge(x.owner(), 1, Integer::sum);
        byOwner.computeIfAbsent(x.owner(), id -> new ArrayList<>()).add(k);
      }
    }
    assertThat(claims).isEqualTo(m.claims());
    assertThat(c.epoch()).isEqualTo(maxEpoch);
    assertThat(c.ownedCounts()).isEqualTo(counts);
    assertThat(c.unownedCount()).isEqualTo(unowned);
    for (PodEntry e : m.pods().values()) {
      assertThat(c.isActive(e.id())).isEqualTo(e.status() == PodStatus.ACTIVE);
    }
    assertThat(c.positionsByOwner()).isEqualTo(byOwner);
  }

  // ---------------------------------------------------------------- generators

  @Provide
  Arbitrary<Long> seeds() {
    return Arbitraries.longs();
  }

  private static int randomSize(Random r) {
    return switch (r.nextInt(4)) {
      case 0 -> new int[] {1, 2, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK - 1}[r.nextInt(7)];
      default -> 1 + r.nextInt(4 * CHUNK + 3);
    };
  }

  private static PodEntry randomEntry(Random r) {
    PodId id = Configs.POOL.get(r.nextInt(Configs.POOL.size()));
    return new PodEntry(new Pod(id, PodVersion.of(VERSIONS.get(r.nextInt(VERSIONS.size())))),
        PodStatus.values()[r.nextInt(PodStatus.values().length)], r.nextInt(7));
  }

  private static Claim randomClaim(Random r, List<PodId> ids) {
    long epoch = r.nextInt(9);
    int kind = ids.isEmpty() ? 0 : r.nextInt(4);
    return switch (kind) {
      case 0 -> Claim.offline(epoch);
      case 1 -> Claim.stable(ids.get(r.nextInt(ids.size())), epoch);
      default -> new Claim(ids.get(r.nextInt(ids.size())), kind == 2 ? SlotState.MIGRATING : SlotState.IMPORTING,
          ids.get(r.nextInt(ids.size())), epoch);
    };
  }

  /** Pods and claims in a few ranges, the usual shape. */
  static Model randomBase(Random r) {
    int size = randomSize(r);
    TreeMap<PodId, PodEntry> pods = new TreeMap<>();
    for (int i = r.nextInt(5); i > 0; i--) {
      PodEntry e = randomEntry(r);
      pods.put(e.id(), e);
    }
    List<PodId> ids = new ArrayList<>(pods.keySet());
    Claim[] claims = new Claim[size];
    int[] cuts = r.ints(r.nextInt(6), 0, size).sorted().toArray();
    int from = 0;
    for (int i = 0; i <= cuts.length; i++) {
      int to = i < cuts.length ? cuts[i] : size;
      Arrays.fill(claims, from, to, randomClaim(r, ids));
      from = to;
    }
    return new Model(pods, claims);
  }

  /** The model with some pods added or replaced and some ranges, points or strides reclaimed. */
  static Model mutate(Random r, Model m) {
    TreeMap<PodId, PodEntry> pods = new TreeMap<>(m.pods());
    for (int i = r.nextInt(3); i > 0; i--) {
      PodEntry e = randomEntry(r);
      pods.put(e.id(), e);
    }
    List<PodId> ids = new ArrayList<>(pods.keySet());
    Claim[] claims = m.claims().clone();
    int size = claims.length;
    for (int i = r.nextInt(5); i > 0; i--) {
      int start = r.nextInt(size);
      int length = 1 + (r.nextBoolean() ? r.nextInt(8) : r.nextInt(size - start));
      int end = Math.min(size, start + length);
      int stride = r.nextInt(3) == 0 ? 2 + r.nextInt(3) : 1;
      Claim claim = randomClaim(r, ids);
      for (int k = start; k < end; k += stride) {
        claims[k] = r.nextInt(8) == 0 ? randomClaim(r, ids) : claim;
      }
    }
    return new Model(pods, claims);
  }

  /**
   * Configs of one size derived from one ancestor: built, sometimes decoded from their encoding
   * (whole-chunk runs shared), sometimes merged with the previous member (chunks shared with it).
   */
  static List<Member> family(Random r, int count) {
    Model base = randomBase(r);
    ClusterConfig baseConfig = base.build();
    List<Member> members = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Model m = r.nextInt(5) == 0 ? base : mutate(r, base);
      ClusterConfig c = m == base ? baseConfig : m.build();
      switch (r.nextInt(4)) {
        case 0 -> c = ClusterConfig.decode(c.encode());
        case 1 -> {
          if (!members.isEmpty()) {
            Member prev = members.get(members.size() - 1);
            c = prev.config().merge(c);
            m = referenceMerge(prev.model(), m);
          }
        }
        default -> { }
      }
      members.add(new Member(c, m));
    }
    return members;
  }

  // ---------------------------------------------------------------- properties

  @Property
  void configsHoldWhatTheirModelSays(@ForAll("seeds") long seed) {
    for (Member x : family(new Random(seed), 3)) {
      assertMatches(x.config(), x.model());
    }
  }

  @Property
  void encodingMatchesTheReferenceAndRoundTrips(@ForAll("seeds") long seed) {
    for (Member x : family(new Random(seed), 3)) {
      byte[] bytes = x.config().encode();
      assertThat(bytes).isEqualTo(referenceEncode(x.model()));
      ClusterConfig back = ClusterConfig.decode(bytes);
      assertMatches(back, x.model());
      assertThat(back).isEqualTo(x.config());
      assertThat(back.hashCode()).isEqualTo(x.config().hashCode());
      assertThat(back.encode()).isEqualTo(bytes);
    }
  }

  @Property
  void mergeMatchesTheReferenceMerge(@ForAll("seeds") long seed) {
    List<Member> f = family(new Random(seed), 3);
    for (Member x : f) {
      for (Member y : f) {
        Model expected = referenceMerge(x.model(), y.model());
        ClusterConfig m = x.config().merge(y.config());
        assertMatches(m, expected);
        // An input itself exactly when it already contains the other; the first input first.
        boolean isX = expected.sameAs(x.model());
        boolean isY = !isX && expected.sameAs(y.model());
        assertThat(m == x.config()).as("merge returned its first input").isEqualTo(isX);
        assertThat(m == y.config()).as("merge returned its second input").isEqualTo(isY || x.config() == y.config());
      }
    }
  }

  @Property
  void mergeIsASemilatticeAcrossChunks(@ForAll("seeds") long seed) {
    List<Member> f = family(new Random(seed), 3);
    ClusterConfig a = f.get(0).config();
    ClusterConfig b = f.get(1).config();
    ClusterConfig c = f.get(2).config();
    ClusterConfig ab = a.merge(b);
    assertThat(ab).isEqualTo(b.merge(a));
    assertThat(ab.merge(c)).isEqualTo(a.merge(b.merge(c)));
    assertThat(a.merge(a)).isSameAs(a);
    assertThat(ab.merge(b)).isEqualTo(ab);
    assertThat(ab.merge(a)).isEqualTo(ab);
  }

  @Property
  void equalityIsByContents(@ForAll("seeds") long seed) {
    List<Member> f = family(new Random(seed), 3);
    for (Member x : f) {
      for (Member y : f) {
        boolean same = x.model().sameAs(y.model());
        assertThat(x.config().equals(y.config())).isEqualTo(same);
        if (same) {
          assertThat(x.config().hashCode()).isEqualTo(y.config().hashCode());
        }
      }
    }
  }

  @Example
  void anEmptyConfigAndItsDecodingHoldOfflineEverywhere() {
    for (int size : new int[] {1, CHUNK - 1, CHUNK, CHUNK + 1, 5 * CHUNK + 3}) {
      Claim[] offline = new Claim[size];
      Arrays.fill(offline, Claim.NONE);
      Model m = new Model(new TreeMap<>(), offline);
      assertMatches(ClusterConfig.empty(size), m);
      assertMatches(ClusterConfig.decode(ClusterConfig.empty(size).encode()), m);
      assertThat(ClusterConfig.empty(size).encode()).isEqualTo(referenceEncode(m));
    }
  }
}

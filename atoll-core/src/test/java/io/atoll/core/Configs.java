package io.atoll.core;

import io.atoll.core.slots.SlotState;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/** jqwik generators of configs drawn from a small shared pool of pods, so merges overlap. */
final class Configs {

  static final List<PodId> POOL = List.of(
      new PodId(new PodAddress("127.0.0.1", 7001), 1),
      new PodId(new PodAddress("127.0.0.1", 7001), 2),
      new PodId(new PodAddress("127.0.0.1", 7002), 1),
      new PodId(new PodAddress("127.0.0.1", 7003), 9),
      new PodId(new PodAddress("10.0.0.1", 7001), 1));

  /** The one cluster id generated configs may carry (or none: {@link ClusterId#NONE} merges with it). */
  static final ClusterId CLUSTER = new ClusterId(0x1234, 0x5678);

  private Configs() {}

  /** The roles generated pods host, when they host roles. */
  static final List<List<String>> ROLES = List.of(Pod.DEFAULT_ROLES, List.of("web"), List.of("worker"),
      List.of("", "web"), List.of("web", "worker"));

  /** Three spaces over 12 positions: the default role 4, "web" 5, "worker" 3. */
  static final Spaces THREE_SPACES = Spaces.parse("default=4,web=5,worker=3");

  static Arbitrary<ClusterConfig> configs(int size) {
    return configs(Spaces.single(size), List.of(Pod.DEFAULT_ROLES));
  }

  /** Configs laid out in {@code spaces}, whose pods host one of {@code roles}. */
  static Arbitrary<ClusterConfig> configs(Spaces spaces, List<List<String>> roles) {
    return configs(spaces, roles, List.of(0));
  }

  /** As {@link #configs(Spaces, List)}, each pod with one of {@code tlsPorts} (0: none). */
  static Arbitrary<ClusterConfig> configs(Spaces spaces, List<List<String>> roles, List<Integer> tlsPorts) {
    return configs(spaces, roles, tlsPorts, false);
  }

  /** As above; with {@code previousOwners}, STABLE claims may record a previous owner (format 5). */
  static Arbitrary<ClusterConfig> configs(Spaces spaces, List<List<String>> roles, List<Integer> tlsPorts,
      boolean previousOwners) {
    int size = spaces.size();
    Arbitrary<PodEntry> entry = Combinators.combine(
        Arbitraries.of(POOL),
        Arbitraries.of("1.0", "1.1", "2.0"),
        Arbitraries.of(PodStatus.class),
        Arbitraries.longs().between(0, 4),
        Arbitraries.of(roles),
        Arbitraries.of(tlsPorts))
        .as((id, v, st, e, r, t) -> new PodEntry(new Pod(id, PodVersion.of(v), r, t), st, e));
    Arbitrary<List<PodEntry>> entries = entry.list().ofMaxSize(POOL.size()).uniqueElements(PodEntry::id);
    return entries.flatMap(list -> {
      List<PodId> ids = list.stream().map(PodEntry::id).toList();
      Arbitrary<Claim> claim = ids.isEmpty()
          ? Arbitraries.longs().between(0, 5).map(Claim::offline)
          : Arbitraries.oneOf(
              Arbitraries.longs().between(0, 5).map(Claim::offline),
              Combinators.combine(Arbitraries.of(ids), Arbitraries.longs().between(0, 5)).as(Claim::stable),
              Combinators.combine(Arbitraries.of(ids), Arbitraries.of(ids), Arbitraries.longs().between(0, 5))
                  .as((o, p, e) -> Claim.stable(o, previousOwners ? p : null, e)),
              Combinators.combine(Arbitraries.of(ids), Arbitraries.of(ids), Arbitraries.of(SlotState.MIGRATING, SlotState.IMPORTING),
                  Arbitraries.longs().between(0, 5)).as((o, p, s, e) -> new Claim(o, s, p, e)));
      return Combinators.combine(claim.list().ofSize(size), Arbitraries.of(ClusterId.NONE, CLUSTER)).as((claims, id) -> {
        ClusterConfig.Builder b = ClusterConfig.empty(spaces).withClusterId(id).toBuilder();
        list.forEach(b::pod);
        for (int i = 0; i < size; i++) {
          b.claim(i, claims.get(i));
        }
        return b.build();
      });
    });
  }
}

package io.atoll.bench;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.slots.KeySlots;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.PodVersion;
import io.atoll.core.Space;
import io.atoll.core.Spaces;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.Move;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.allocation.SpacedAllocation;
import io.atoll.core.slots.SlotState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The cluster configs the benchmarks work on. Deterministic, so every fork measures the same data.
 */
final class Configs {

  private static final PodVersion VERSION = PodVersion.of("1.4.2");

  private Configs() {}

  /** An ACTIVE pod entry at {@code host:7000}. */
  static PodEntry pod(String host, long incarnation, long epoch) {
    return new PodEntry(new Pod(new PodId(new PodAddress(host, 7000), incarnation), VERSION),
        PodStatus.ACTIVE, epoch);
  }

  /**
   * Two views of a 16384-slot Redis-style cluster that have each seen something the other has not,
   * so their merge is a third config and never one of them.
   *
   * <p>The local view ({@code [0]}): five pods, each owning one contiguous fifth of the slots
   * (STABLE, epochs 2..6), pod 0 re-registered at epoch 9, and slots 0..511 MIGRATING from pod 0
   * to pod 1 at epoch 40. The gossiped view ({@code [1]}): the same ranges without the migration,
   * a sixth pod joined at epoch 30, and every slot {@code k % 3 == 1} (a third of them) moved to
   * the next pod at epoch 30. The merge takes the migration from the first and the moved third,
   * outside the migrating range, from the second.
   */
  static ClusterConfig[] divergentSlotViews() {
    int size = KeySlots.SLOT_COUNT;
    List<PodEntry> pods = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      pods.add(pod("10.0.0." + (i + 1), 0x5EED_0000L + i, 1));
    }
    int ranges = 5;
    ClusterConfig.Builder local = ClusterConfig.empty(size).toBuilder();
    ClusterConfig.Builder gossiped = ClusterConfig.empty(size).toBuilder();
    for (int i = 0; i < ranges; i++) {
      local.pod(i == 0 ? pod("10.0.0.1", 0x5EED_0000L, 9) : pods.get(i));
      gossiped.pod(pods.get(i));
    }
    gossiped.pod(pod("10.0.0.6", 0x5EED_0005L, 30));
    for (int k = 0; k < size; k++) {
      int owner = k * ranges / size;
      Claim stable = Claim.stable(pods.get(owner).id(), 2 + owner);
      local.claim(k, k < 512
          ? new Claim(pods.get(0).id(), SlotState.MIGRATING, pods.get(1).id(), 40)
          : stable);
      gossiped.claim(k, k % 3 == 1 ? Claim.stable(pods.get(owner + 1).id(), 30) : stable);
    }
    return new ClusterConfig[] {local.build(), gossiped.build()};
  }

  /**
   * A 1000-shard config listing 100 ACTIVE pods of one version, where 90 pods hold every shard
   * (drawn at random from {@code seed}, so their loads vary around 11) and the last 10 have just
   * joined and hold none.
   */
  static ClusterConfig unbalancedShards(int shards, int pods, int holders, long seed) {
    List<PodEntry> entries = new ArrayList<>();
    ClusterConfig.Builder b = ClusterConfig.empty(shards).toBuilder();
    for (int i = 0; i < pods; i++) {
      PodEntry e = pod("10.1." + (i / 250) + "." + (i % 250 + 1), 0xB0D_0000L + i, 1);
      entries.add(e);
      b.pod(e);
    }
    Random r = new Random(seed);
    for (int position = 0; position < shards; position++) {
      b.claim(position, Claim.stable(entries.get(r.nextInt(holders)).id(), 2));
    }
    return b.build();
  }

  /** The shard-space layouts of {@link #spacedViews(String)}. */
  static final String SPACE_LAYOUTS = "one-space-10000, ten-spaces-1000, one-space-16384 or kv-16384";

  /**
   * Two views of a cluster laid out in {@code layout}'s shard spaces, as the manager would have
   * placed it, that have each seen something the other has not, so their merge is a third config.
   *
   * <p>Layouts: {@code one-space-10000}, one default space of 10,000 shards (a cluster without
   * roles); {@code ten-spaces-1000}, ten spaces of 1000 shards (roles {@code space0..space9}), the
   * same 10,000 shards in all; {@code one-space-16384}, one default space of 16,384 shards; and
   * {@code kv-16384}, one space of role {@code kv} with 16,384 shards, the KV slot space.
   *
   * <p>The local view ({@code [0]}): ten ACTIVE pods that each host every role of the layout,
   * every shard owned (STABLE, epoch 2) as one unlimited {@link SpacedAllocation} round of the
   * least-shard strategy places them from empty, and pod 0 re-registered at epoch 9. The gossiped
   * view ({@code [1]}): the same placement, an eleventh pod joined at epoch 30, and one more
   * unlimited round applied at epoch 30, which moves about 1/11 of every space's shards to it.
   */
  static ClusterConfig[] spacedViews(String layout) {
    Spaces spaces = switch (layout) {
      case "one-space-10000" -> Spaces.single(10_000);
      case "ten-spaces-1000" -> {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
          counts.put("space" + i, 1000);
        }
        yield Spaces.of(counts);
      }
      case "one-space-16384" -> Spaces.single(KeySlots.SLOT_COUNT);
      case "kv-16384" -> Spaces.of(Map.of("kv", KeySlots.SLOT_COUNT));
      default -> throw new IllegalArgumentException("layout: " + layout + " (expected: " + SPACE_LAYOUTS + ")");
    };
    List<String> roles = new ArrayList<>();
    for (Space s : spaces.list()) {
      roles.add(s.role());
    }
    List<PodEntry> pods = new ArrayList<>();
    for (int i = 0; i < 11; i++) {
      pods.add(new PodEntry(new Pod(new PodId(new PodAddress("10.2.0." + (i + 1), 7000), 0x5BACE_000L + i),
          VERSION, roles), PodStatus.ACTIVE, i < 10 ? 1 : 30));
    }
    ClusterConfig.Builder placed = ClusterConfig.empty(spaces).toBuilder();
    for (int i = 0; i < 10; i++) {
      placed.pod(pods.get(i));
    }
    ClusterConfig initial = applyRound(placed, placed.build(), pods.subList(0, 10), 2).build();

    ClusterConfig.Builder local = initial.toBuilder();
    PodEntry first = pods.get(0);
    local.pod(new PodEntry(first.pod(), PodStatus.ACTIVE, 9));
    ClusterConfig.Builder gossiped = initial.toBuilder().pod(pods.get(10));
    ClusterConfig joined = gossiped.build();
    gossiped = applyRound(joined.toBuilder(), joined, pods, 30);
    return new ClusterConfig[] {local.build(), gossiped.build()};
  }

  /** Applies one unlimited least-shard round over every space of {@code config} to {@code into}. */
  private static ClusterConfig.Builder applyRound(ClusterConfig.Builder into, ClusterConfig config,
      List<PodEntry> pods, long epoch) {
    List<Pod> live = new ArrayList<>();
    for (PodEntry e : pods) {
      live.add(e.pod());
    }
    for (Move m : SpacedAllocation.decide(AllocationStrategy.leastShard(), config, live,
        RebalanceLimits.UNLIMITED, new Random(42))) {
      into.claim(m.shard() - 1, Claim.stable(m.to(), epoch));
    }
    return into;
  }
}

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
import io.atoll.core.slots.SlotState;
import java.util.ArrayList;
import java.util.List;
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
}

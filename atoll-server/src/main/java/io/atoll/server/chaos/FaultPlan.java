package io.atoll.server.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * The order of faults: rounds in which every kind comes once, each round shuffled by the run's
 * seeded random, so that a short run still sees every kind and a seed always gives the same order.
 * Not thread-safe.
 */
final class FaultPlan<K> {

  private final List<K> kinds;
  private final Random random;
  private final List<K> round = new ArrayList<>();

  FaultPlan(List<K> kinds, Random random) {
    if (kinds.isEmpty()) {
      throw new IllegalArgumentException("fault kinds: none (expected: at least one)");
    }
    this.kinds = List.copyOf(kinds);
    this.random = random;
  }

  K next() {
    if (round.isEmpty()) {
      round.addAll(kinds);
      Collections.shuffle(round, random);
    }
    return round.remove(0);
  }
}

package io.atoll.bench;

import java.util.Random;

/**
 * Realistic entity ids and Redis keys for the hashing benchmarks: user ids, hash-tagged keys,
 * session tokens, order paths, UUID-like device ids, 16 to 40 bytes, a third of them with a
 * {@code {hash tag}}. Deterministic for a given seed, so every fork hashes the same keys.
 */
final class Keys {

  private Keys() {}

  /** {@code count} keys from {@code seed}; ASCII only, so chars and UTF-8 bytes match one to one. */
  static String[] generate(int count, long seed) {
    Random r = new Random(seed);
    String[] keys = new String[count];
    for (int i = 0; i < count; i++) {
      keys[i] = switch (i % 6) {
        case 0 -> String.format("user-%07d:profile", r.nextInt(10_000_000));
        case 1 -> String.format("{user%d}.followers", 1_000 + r.nextInt(99_000));
        case 2 -> String.format("session:%016x", r.nextLong());
        case 3 -> String.format("order/2024-%02d-%02d/%09d", 1 + r.nextInt(12), 1 + r.nextInt(28),
            r.nextInt(1_000_000_000));
        case 4 -> String.format("cart:{tenant-%d}:items:%d", r.nextInt(5_000), r.nextInt(100_000));
        default -> String.format("dev-%016x%016x", r.nextLong(), r.nextLong());
      };
    }
    return keys;
  }
}

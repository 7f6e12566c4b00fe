package io.atoll.core;

/**
 * A behavioural fingerprint of a {@link ShardHasher}: the shards it gives a fixed list of
 * {@value #SAMPLE_IDS} sample ids at each of a fixed list of shard counts, digested to 64 bits.
 * Two hashers that place every sample alike get the same fingerprint whatever their classes; two
 * of one class with different parameters (a seed, a modulus) almost surely differ. The samples
 * and the counts are part of the cluster's protocol: every pod must compute the same fingerprint
 * for the same hasher, so they never change.
 *
 * <p>It is evidence, not proof: two hashers that differ only on ids or counts outside the samples
 * look alike. The counts cover the usual space sizes (the default 300, powers of two, the KV's
 * 16384) and a few small ones; the ids are short and long, numeric, prefixed, random-looking and
 * non-ASCII. A hasher that throws or answers out of range for a sample has that recorded too.
 * Pure and thread-safe; about {@value #SAMPLE_IDS} times the counts' number of hasher calls.
 */
public final class HasherFingerprint {

  /** How many sample ids are hashed. */
  public static final int SAMPLE_IDS = 256;

  private static final int[] COUNTS = {1, 2, 3, 5, 7, 10, 16, 64, 100, 128, 256, 300, 1000, 1024, 4096, 10000,
      16384, 65536};
  private static final String[] IDS = sampleIds();

  private HasherFingerprint() {}

  /**
   * The fingerprint of {@code h}.
   *
   * @throws VirtualMachineError as the hasher threw it (a {@link StackOverflowError}, say); any
   *     other throwable is recorded as the hasher's answer for that sample
   */
  public static long of(ShardHasher h) {
    long digest = 0x6a09e667f3bcc908L;
    for (int count : COUNTS) {
      for (String id : IDS) {
        long shard;
        try {
          shard = h.shardOf(id, count);
        } catch (VirtualMachineError e) {
          throw e; // the JVM's trouble (a stack overflow, out of memory), not the hasher's answer
        } catch (Throwable e) {
          // A hasher that throws for an id (an Error or a checked exception thrown sneakily, too)
          // is told apart from one that does not.
          shard = Long.MIN_VALUE;
        }
        digest = mix(digest ^ (shard + 0x9e3779b97f4a7c15L * count));
      }
    }
    return digest;
  }

  /**
   * A printable name for {@code h}: {@code ShardHasher.DEFAULT}, else its class name without the
   * address a lambda's hidden class carries (it changes from run to run), every character outside
   * {@code [A-Za-z0-9._$-]} as {@code '_'}, at most {@link TypeDeclaration#MAX_HASHER_NAME}
   * characters.
   */
  public static String nameOf(ShardHasher h) {
    if (h == ShardHasher.DEFAULT) {
      return "ShardHasher.DEFAULT";
    }
    String n = h.getClass().getName();
    int slash = n.indexOf('/');
    if (slash >= 0) {
      n = n.substring(0, slash);
    }
    StringBuilder b = new StringBuilder(Math.min(n.length(), TypeDeclaration.MAX_HASHER_NAME));
    for (int i = 0; i < n.length() && b.length() < TypeDeclaration.MAX_HASHER_NAME; i++) {
      char c = n.charAt(i);
      b.append(printable(c) ? c : '_');
    }
    return b.isEmpty() ? "hasher" : b.toString();
  }

  static boolean printable(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '.' || c == '_' || c == '-' || c == '$';
  }

  /** The sample ids, made by a fixed rule (no library random: its sequence is not a protocol). */
  private static String[] sampleIds() {
    String[] ids = new String[SAMPLE_IDS];
    long x = 0x243f6a8885a308d3L;
    for (int i = 0; i < SAMPLE_IDS; i++) {
      x = mix(x + i);
      ids[i] = switch (i % 4) {
        case 0 -> Integer.toString(i); // small numbers: hashers that parse ids
        case 1 -> "user-" + (x >>> 40); // the usual prefixed ids
        case 2 -> Long.toHexString(x) + Long.toHexString(mix(x)); // long, random-looking
        default -> "\u00e9l\u00e8ve-" + (char) (0x4e00 + (x >>> 56)) + (i * 7919); // non-ASCII
      };
    }
    return ids;
  }

  /** SplitMix64's finaliser: a fixed, well-mixing 64-bit permutation. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}

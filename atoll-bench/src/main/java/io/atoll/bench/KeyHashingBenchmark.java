package io.atoll.bench;

import io.atoll.core.slots.KeySlots;
import io.atoll.core.ShardHasher;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The per-message hot path: entity id to shard ({@link ShardHasher#DEFAULT} over 300 shards) and
 * Redis key to hash slot ({@link KeySlots#slotOf(byte[])}), over 1024 varied keys of 16 to 40
 * bytes, cycling an index so the branch predictor cannot learn one key. Target: at most 20 ns/op.
 *
 * <p>{@link String#hashCode()} is cached in the string after its first call, so
 * {@link #shardOf()} measures the steady state of an id that is hashed again (a cached hash, a
 * remainder). {@link #shardOfDecodedId()} is the cost when the id has just arrived off the wire:
 * it decodes a new string from bytes, then hashes it; it is reported for information and has no
 * target of its own.
 *
 * <p>Public because JMH requires it; not API.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
@State(Scope.Thread)
public class KeyHashingBenchmark {

  private static final int KEYS = 1024; // a power of two: the index wraps with a mask
  private static final int SHARDS = 300;

  private String[] ids;
  private byte[][] keys;
  private int next;

  /** Builds the keys once per fork. */
  @Setup
  public void setUp() {
    ids = Keys.generate(KEYS, 20_240_601L);
    keys = new byte[KEYS][];
    for (int i = 0; i < KEYS; i++) {
      keys[i] = ids[i].getBytes(StandardCharsets.UTF_8);
    }
  }

  private int nextIndex() {
    int i = next;
    next = (i + 1) & (KEYS - 1);
    return i;
  }

  /** Entity id to shard, the id's hash already cached. */
  @Benchmark
  public int shardOf() {
    return ShardHasher.DEFAULT.shardOf(ids[nextIndex()], SHARDS);
  }

  /** Entity id to shard for an id just decoded from bytes, so its hash is computed afresh. */
  @Benchmark
  public int shardOfDecodedId() {
    byte[] k = keys[nextIndex()];
    return ShardHasher.DEFAULT.shardOf(new String(k, StandardCharsets.UTF_8), SHARDS);
  }

  /** Redis key to hash slot: hash-tag scan and CRC16. */
  @Benchmark
  public int slotOf() {
    return KeySlots.slotOf(keys[nextIndex()]);
  }
}
